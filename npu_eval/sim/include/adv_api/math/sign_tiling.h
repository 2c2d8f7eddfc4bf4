// Host tiling for Sign (asc-devkit include/adv_api/math/sign_tiling.h). Also included by
// sign.h: the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Sign接口/GetSignMaxMinTmpSize.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

// The temporary space Sign needs for n elements of typeSize bytes: max(3 * n * typeSize, 3 * 256) at most, 3 * 256 at least, calcPro
// = 3 for float and 3 for half (the float intermediates each chunk keeps).
inline void GetSignMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                      uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t calcPro = 3u;
    minValue = calcPro * detail::kMathRepeatBytes;
    maxValue = std::max<uint32_t>(calcPro * uint32_t(n) * typeSize, minValue);
}

inline void GetSignTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    maxLiveNodeCount = 3u;
}

}  // namespace AscendC
