// CreateVecIndex: dst[i] = first + i.
#pragma once

#include "../sage_sim/vec.h"
#include "kernel_common.h"

namespace AscendC {

#define SAGE_IDX_OK (::sage::sim::one_of<T, half, float, int16_t, int32_t>())

// dst[i] = firstValue + i; in the mask/repeat forms i counts every element of every repeat.
template <typename T>
__aicore__ inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count, SAGE_LOC) {
    SAGE_DTYPE_GATE("CreateVecIndex", T, SAGE_IDX_OK, "half, float, int16_t, int32_t")
    if constexpr (SAGE_IDX_OK) {
        using namespace sage::sim;
        touch(loc);
        vec_dst(dst, "CreateVecIndex", count, loc);
        T* d = dst.data();
        auto f = up(firstValue);
        for (uint32_t i = 0; i < count; ++i) d[i] = down<T>(f + calc_t<T>(i));
        vec_done(dst, "CreateVecIndex", count, loc, {});
        count_form_done();
    }
}

namespace detail {
template <typename T>
inline void vec_index_masked(const LocalTensor<T>& dst, const T& first, const sage::sim::Repeats& m, uint16_t bs,
                             uint8_t rs, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    Lay ld = lay<T>(bs, rs);
    uint64_t ed = masked_check(dst, m, ld, "CreateVecIndex", loc, "dst");
    T* d = dst.data();
    auto f = up(first);
    m.each([&](uint32_t r, uint32_t k) { d[ld.off(r, k)] = down<T>(f + calc_t<T>(uint64_t(r) * m.epr + k)); });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, "CreateVecIndex", m, loc, {});
}
}  // namespace detail

template <typename T>
__aicore__ inline void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, uint64_t mask,
                                      uint8_t repeatTime, uint16_t dstBlkStride, uint8_t dstRepStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("CreateVecIndex", T, SAGE_IDX_OK, "half, float, int16_t, int32_t")
    if constexpr (SAGE_IDX_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), true, mask, repeatTime);
        detail::vec_index_masked(dst, firstValue, m, dstBlkStride, dstRepStride, loc);
    }
}
template <typename T>
__aicore__ inline void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, const uint64_t mask[],
                                      uint8_t repeatTime, uint16_t dstBlkStride, uint8_t dstRepStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("CreateVecIndex", T, SAGE_IDX_OK, "half, float, int16_t, int32_t")
    if constexpr (SAGE_IDX_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), true, mask, repeatTime);
        detail::vec_index_masked(dst, firstValue, m, dstBlkStride, dstRepStride, loc);
    }
}
#undef SAGE_IDX_OK

}  // namespace AscendC
