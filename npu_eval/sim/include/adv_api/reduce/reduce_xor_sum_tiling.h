// Host tiling for ReduceXorSum (asc-devkit include/adv_api/reduce/reduce_xor_sum_tiling.h), from
// docs/zh/api/SIMD-API/高阶API/归约操作/ReduceXorSum接口/GetReduceXorSumMaxMinTmpSize.md (maximum =
// minimum; the size is CANN's). Also included by reduce_xor_sum.h, whose check calls the same size.
#pragma once

#include <cstdint>

#include "../utils/types.h"

namespace AscendC {

namespace xor_sum_sizes {

// Three int16 work buffers of the input's size (two when src1 is reused), at least one repeat each.
inline uint32_t tmp_bytes(uint32_t count, uint32_t typeSize, bool isReuseSource) {
    const uint32_t bytes = count * typeSize;
    return (isReuseSource ? 2u : 3u) * (bytes > 256 ? bytes : 256u);
}

}  // namespace xor_sum_sizes

// typeSize must be 2 (int16_t) and the shape non-empty; otherwise nothing is written, as the real
// function asserts.
inline void GetReduceXorSumMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize,
                                         const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    const int64_t size = srcShape.GetShapeSize();
    if (size <= 0 || typeSize != 2) return;
    maxValue = minValue = xor_sum_sizes::tmp_bytes(uint32_t(size), typeSize, isReuseSource);
}

}  // namespace AscendC
