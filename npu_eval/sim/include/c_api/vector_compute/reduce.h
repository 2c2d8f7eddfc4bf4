// The C API's reductions (asc-devkit include/c_api/vector_compute/vector_compute.h) for 910B:
//   asc_repeat_reduce_sum / _max_* / _min_*   one result per repeat (vcadd, vcmax, vcmin); the
//                                             max/min suffix names the order of (value, index)
//   asc_datablock_reduce_sum/max/min          one result per 32-byte block (vcgadd, vcgmax, vcgmin)
//   asc_pair_reduce_sum                       element 2j + element 2j+1 (vcpadd)
// in the repeat form (current vector mask), the count form (Counter mode) and `_sync`, on the
// C++ API's reduction engines: the documented pairwise summation order, every partial rounded.
#pragma once

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/ubuf.h"

namespace sage {
namespace sim {
namespace capi {

enum class ReduceShape { Repeat, Block, Pair };

template <typename T>
inline void reduce_rep(const char* api, ReduceShape shape, ReduceType kind, ReduceOrder order, T* dst, T* src,
                       uint8_t repeat, uint16_t dst_repeat_stride, uint16_t src_block_stride,
                       uint16_t src_repeat_stride, SrcLoc loc) {
    touch(loc);
    auto d = ub_view(dst, api, "dst", loc);
    auto s = ub_view(src, api, "src", loc);
    Repeats m = finish_repeats(elems_per_repeat<T>(), repeat);
    if (shape == ReduceShape::Repeat) {
        whole_reduce(api, kind, d, s, m, dst_repeat_stride, src_block_stride, src_repeat_stride, order, loc);
    } else if (shape == ReduceShape::Block) {
        block_reduce(api, kind, d, s, m, dst_repeat_stride, src_block_stride, src_repeat_stride, loc);
    } else {
        pair_reduce(api, d, s, m, dst_repeat_stride, src_block_stride, src_repeat_stride, loc);
    }
}

}  // namespace capi
}  // namespace sim
}  // namespace sage

// The count form runs one repeat form in Counter mode with strides 1 (dst), 1 and 8 (src), as
// asc-devkit's count forms do.
#define SAGE_CAPI_REDUCE(NAME, SHAPE, KIND, ORDER)                                                   \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, uint8_t repeat, uint16_t dst_repeat_stride,    \
                                uint16_t src_block_stride, uint16_t src_repeat_stride, SAGE_LOC) {               \
        SAGE_DTYPE_GATE(#NAME, T, (::sage::sim::one_of<T, half, float>()), "half, float")                        \
        if constexpr (::sage::sim::one_of<T, half, float>()) {                                                   \
            using namespace ::sage::sim;                                                                         \
            capi::reduce_rep(#NAME, capi::ReduceShape::SHAPE, ReduceType::KIND, ReduceOrder::ORDER, dst, src,    \
                             repeat, dst_repeat_stride, src_block_stride, src_repeat_stride, loc);               \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, SAGE_LOC) {                    \
        ::sage::sim::capi_count_check(#NAME, count, loc, src);                                                   \
        ::sage::sim::capi_count(count, [&] { NAME(dst, src, 1, 1, 1, 8, loc); });                       \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, SAGE_LOC) {             \
        NAME(dst, src, count, loc);                                                                              \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }

SAGE_CAPI_REDUCE(asc_repeat_reduce_sum, Repeat, SUM, ORDER_ONLY_VALUE)
SAGE_CAPI_REDUCE(asc_repeat_reduce_max_value_index, Repeat, MAX, ORDER_VALUE_INDEX)
SAGE_CAPI_REDUCE(asc_repeat_reduce_max_index_value, Repeat, MAX, ORDER_INDEX_VALUE)
SAGE_CAPI_REDUCE(asc_repeat_reduce_max_only_value, Repeat, MAX, ORDER_ONLY_VALUE)
SAGE_CAPI_REDUCE(asc_repeat_reduce_max_only_index, Repeat, MAX, ORDER_ONLY_INDEX)
SAGE_CAPI_REDUCE(asc_repeat_reduce_min_value_index, Repeat, MIN, ORDER_VALUE_INDEX)
SAGE_CAPI_REDUCE(asc_repeat_reduce_min_index_value, Repeat, MIN, ORDER_INDEX_VALUE)
SAGE_CAPI_REDUCE(asc_repeat_reduce_min_only_value, Repeat, MIN, ORDER_ONLY_VALUE)
SAGE_CAPI_REDUCE(asc_repeat_reduce_min_only_index, Repeat, MIN, ORDER_ONLY_INDEX)
SAGE_CAPI_REDUCE(asc_datablock_reduce_sum, Block, SUM, ORDER_ONLY_VALUE)
SAGE_CAPI_REDUCE(asc_datablock_reduce_max, Block, MAX, ORDER_ONLY_VALUE)
SAGE_CAPI_REDUCE(asc_datablock_reduce_min, Block, MIN, ORDER_ONLY_VALUE)
SAGE_CAPI_REDUCE(asc_pair_reduce_sum, Pair, SUM, ORDER_ONLY_VALUE)

#undef SAGE_CAPI_REDUCE
