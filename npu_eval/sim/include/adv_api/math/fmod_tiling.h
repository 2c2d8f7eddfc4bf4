// Host tiling for Fmod (asc-devkit include/adv_api/math/fmod_tiling.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Fmod接口/GetFmodMaxMinTmpSize.md: Trunc's temporary space plus,
// for half, three float tensors (dst, src0, src1: 6 half-sized nodes).
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"
#include "trunc_tiling.h"

namespace AscendC {

inline void GetFmodTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    GetTruncTmpBufferFactorSize(typeSize, maxLiveNodeCount, extraBuf);
    maxLiveNodeCount += typeSize == sizeof(float) ? 0 : 6;
}

inline void GetFmodMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    uint32_t nodes = 0, extra = 0;
    GetFmodTmpBufferFactorSize(typeSize, nodes, extra);
    minValue = nodes * detail::kMathRepeatBytes;
    maxValue = nodes * std::max<uint32_t>(uint32_t(n) * typeSize, detail::kMathRepeatBytes);
}

}  // namespace AscendC
