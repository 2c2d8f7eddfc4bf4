// Host tiling for ClampMax/ClampMin (asc-devkit include/adv_api/math/clamp_tiling.h), documented in
// asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Clamp接口/GetClampMaxMinTmpSize.md: the compare
// mask, one byte per element, at least one repeat's elements (64 float, 128 half).
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

inline void GetClampMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t perRepeat = detail::kMathRepeatBytes / (typeSize == sizeof(float) ? 4 : 2);
    minValue = perRepeat;
    maxValue = std::max<uint32_t>(uint32_t(n), perRepeat);
}

inline void GetClampTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    (void)typeSize;
    extraBuf = 0;
    maxLiveNodeCount = 1;
}

}  // namespace AscendC
