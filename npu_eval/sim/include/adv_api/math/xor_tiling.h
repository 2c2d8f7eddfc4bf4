// Host tiling for Xor (asc-devkit include/adv_api/math/xor_tiling.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Xor接口/GetXorMaxMinTmpSize.md: one intermediate tensor, at
// least one repeat (256 bytes).
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

inline void GetXorMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = std::max<int64_t>(srcShape.GetShapeSize(), 0);
    minValue = detail::kMathRepeatBytes;
    maxValue = std::max<uint32_t>(uint32_t(n) * typeSize, minValue);
}

inline void GetXorTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer)
{
    (void)typeSize;
    extraBuffer = 0;
    maxLiveNodeCount = 1;
}

}  // namespace AscendC
