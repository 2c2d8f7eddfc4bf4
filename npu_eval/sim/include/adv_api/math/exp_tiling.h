// Host tiling for the high-level Exp (asc-devkit include/adv_api/math/exp_tiling.h), documented in
// asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Exp接口/GetExpMaxMinTmpSize.md. The Taylor form
// keeps float tensors of the chunk: 4 for half, 3 for float (2 when the source may be reused).
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {
namespace detail {
inline uint32_t exp_tmp_tensors(uint32_t typeSize, bool isReuseSource) {
    return typeSize == sizeof(float) ? (isReuseSource ? 2u : 3u) : 4u;
}
}  // namespace detail

inline bool GetExpMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxValue, uint32_t& minValue)
{
    const uint32_t n = uint32_t(std::max<int64_t>(srcShape.GetShapeSize(), 0));
    const uint32_t tensors = detail::exp_tmp_tensors(typeSize, isReuseSource);
    minValue = tensors * detail::kMathRepeatBytes;
    maxValue = tensors * std::max<uint32_t>(n * uint32_t(sizeof(float)), detail::kMathRepeatBytes);
    return true;
}

// half: 4 float tensors = 16 bytes per 2-byte element (8); float: 3 float tensors (3).
inline void GetExpTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer)
{
    extraBuffer = 0;
    maxLiveNodeCount = typeSize == sizeof(float) ? 3u : 8u;
}

}  // namespace AscendC
