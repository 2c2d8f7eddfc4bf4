// Host tiling for Floor (asc-devkit include/adv_api/math/floor_tiling.h). Also included by
// floor.h: the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Floor接口/GetFloorMaxMinTmpSize.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

// The temporary space Floor needs for n elements of typeSize bytes: calcPro * max(n * typeSize, 256) at most, calcPro * 256 at least, calcPro
// = 0 for float and 2 for half (the float intermediates each chunk keeps).
inline void GetFloorMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                      uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t calcPro = typeSize == sizeof(float) ? 0u : 2u;
    detail::math_tmp_range(n, typeSize, calcPro, maxValue, minValue);
}

inline void GetFloorTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    maxLiveNodeCount = typeSize == sizeof(float) ? 0u : 2u;
}

}  // namespace AscendC
