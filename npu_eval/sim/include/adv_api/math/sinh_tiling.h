// Host tiling for Sinh (asc-devkit include/adv_api/math/sinh_tiling.h). Also included by
// sinh.h: the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Sinh接口/GetSinhMaxMinTmpSize.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

// The temporary space Sinh needs for n elements of typeSize bytes: calcPro * max(n * typeSize, 256) at most, calcPro * 256 at least, calcPro
// = 1 for float and 4 for half (the float intermediates each chunk keeps).
inline void GetSinhMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                      uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t calcPro = typeSize == sizeof(float) ? 1u : 4u;
    detail::math_tmp_range(n, typeSize, calcPro, maxValue, minValue);
}

inline void GetSinhTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    maxLiveNodeCount = typeSize == sizeof(float) ? 1u : 4u;
}

}  // namespace AscendC
