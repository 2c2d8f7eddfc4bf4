// Host tiling for Digamma (asc-devkit include/adv_api/math/digamma_tiling.h). Also included by
// digamma.h: the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Digamma接口/GetDigammaMaxMinTmpSize.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {
namespace detail {

// The bytes one element takes in Digamma's temporary buffer (Atlas A2): 7 float tensors of
// splitSize elements on float (6 when the source may be overwritten: it holds one of them),
// 8 float tensors on half, counted in half-sized nodes (16).
inline uint32_t digamma_calc_pro(uint32_t typeSize, bool isReuseSource) {
    return typeSize == sizeof(float) ? (isReuseSource ? 6u : 7u) : 16u;
}

}  // namespace detail

// calcPro * max(n * typeSize, 256) at most, calcPro * 256 at least.
inline void GetDigammaMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue)
{
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t calcPro = detail::digamma_calc_pro(typeSize, isReuseSource);
    detail::math_tmp_range(n, typeSize, calcPro, maxValue, minValue);
}

inline void GetDigammaTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer)
{
    extraBuffer = 0;
    maxLiveNodeCount = detail::digamma_calc_pro(typeSize, false);
}

}  // namespace AscendC
