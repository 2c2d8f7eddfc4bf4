// Host tiling for Acos (asc-devkit include/adv_api/math/acos_tiling.h). Also included by
// acos.h: the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Acos接口/GetAcosMaxMinTmpSize.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

// The temporary space Acos needs for n elements of typeSize bytes: calcPro * max(n * typeSize, 256) at most, calcPro * 256 at least, calcPro
// = 2 for float and 6 for half (the float intermediates each chunk keeps).
inline void GetAcosMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                      uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t calcPro = typeSize == sizeof(float) ? 2u : 6u;
    detail::math_tmp_range(n, typeSize, calcPro, maxValue, minValue);
}

inline void GetAcosTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    maxLiveNodeCount = typeSize == sizeof(float) ? 2u : 6u;
}

}  // namespace AscendC
