// Host tiling for the high-level Axpy (asc-devkit include/adv_api/math/axpy_tiling.h), documented in
// asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Axpy接口/GetAxpyMaxMinTmpSize.md. typeSize is the
// source's: a float source needs no temporary space; a half one keeps its float chunk (calcPro 4).
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

inline void GetAxpyMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    if (typeSize == sizeof(float)) {
        maxValue = minValue = 0;
        return;
    }
    minValue = 4 * detail::kMathRepeatBytes;
    maxValue = 4 * std::max<uint32_t>(uint32_t(n) * typeSize, detail::kMathRepeatBytes);
}

inline void GetAxpyTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    maxLiveNodeCount = typeSize == sizeof(float) ? 1 : 4;
}

}  // namespace AscendC
