// Host tiling for Lgamma (asc-devkit include/adv_api/math/lgamma_tiling.h). Also included by
// lgamma.h: the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Lgamma接口/GetLgammaMaxMinTmpSize.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {
namespace detail {

// The float tensors of splitSize elements one Lgamma chunk keeps (Atlas A2): 8 on float (six
// intermediates, the zero the selects compare with, and the four bit masks), 7 when the source
// may be overwritten (it holds the zeros); 13 on half, whose min and max count them in half-sized
// nodes (26).
inline uint32_t lgamma_float_nodes(uint32_t typeSize, bool isReuseSource) {
    return typeSize == sizeof(float) ? (isReuseSource ? 7u : 8u) : 13u;
}

}  // namespace detail

// calcPro * max(n * typeSize, 256) at most and calcPro * 256 at least, calcPro = 8 (7 reusing the
// source) for float and 13 * 2 for half.
inline void GetLgammaMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                   uint32_t& maxValue, uint32_t& minValue)
{
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const uint32_t nodes = detail::lgamma_float_nodes(typeSize, isReuseSource);
    const uint32_t calcPro = typeSize == sizeof(float) ? nodes : nodes * 2u;
    detail::math_tmp_range(n, typeSize, calcPro, maxValue, minValue);
}

// maxLiveNodeCount is 8 for float and 13 for half (asc-devkit's own value, which is half of what
// GetLgammaMaxMinTmpSize counts for half).
inline void GetLgammaTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer)
{
    extraBuffer = 0;
    maxLiveNodeCount = detail::lgamma_float_nodes(typeSize, false);
}

}  // namespace AscendC
