// Duplicate: fill a tensor with one scalar.
#pragma once

#include "../sage_sim/vec.h"
#include "kernel_common.h"

namespace AscendC {

#define SAGE_DUP_OK                                                                                               \
    (::sage::sim::one_of<T, int16_t, uint16_t, half, int32_t, uint32_t, float>() ||                               \
     (SAGE_CHIP_FAMILY != 310 && std::is_same<T, bfloat16_t>::value))
#if SAGE_CHIP_FAMILY == 310
#define SAGE_DUP_LIST "int16_t, uint16_t, half, int32_t, uint32_t, float"
#else
#define SAGE_DUP_LIST "int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float"
#endif

namespace detail {
template <typename T>
inline void duplicate_masked(const LocalTensor<T>& dst, const T& value, const sage::sim::Repeats& m,
                             uint16_t dstBlockStride, uint8_t dstRepeatStride, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    Lay ld = lay<T>(dstBlockStride, dstRepeatStride);
    uint64_t ed = masked_check(dst, m, ld, "Duplicate", loc, "dst");
    T* d = dst.data();
    m.each([&](uint32_t r, uint32_t k) { d[ld.off(r, k)] = value; });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, "Duplicate", m, loc, {});
}
}  // namespace detail

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count, SAGE_LOC) {
    SAGE_DTYPE_GATE("Duplicate", T, SAGE_DUP_OK, SAGE_DUP_LIST)
    if constexpr (SAGE_DUP_OK) {
        using namespace sage::sim;
        touch(loc);
        uint64_t n = count_arg(count, "Duplicate", loc);
        vec_dst(dst, "Duplicate", n, loc);
        T* d = dst.data();
        const T v = scalarValue;
        for (uint64_t i = 0; i < n; ++i) d[i] = v;
        vec_done(dst, "Duplicate", n, loc, {});
        count_form_done();
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,
                                 const uint8_t repeatTime, const uint16_t dstBlockStride,
                                 const uint8_t dstRepeatStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("Duplicate", T, SAGE_DUP_OK, SAGE_DUP_LIST)
    if constexpr (SAGE_DUP_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        detail::duplicate_masked(dst, scalarValue, m, dstBlockStride, dstRepeatStride, loc);
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                                 const uint8_t repeatTime, const uint16_t dstBlockStride,
                                 const uint8_t dstRepeatStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("Duplicate", T, SAGE_DUP_OK, SAGE_DUP_LIST)
    if constexpr (SAGE_DUP_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        detail::duplicate_masked(dst, scalarValue, m, dstBlockStride, dstRepeatStride, loc);
    }
}
#undef SAGE_DUP_OK
#undef SAGE_DUP_LIST

}  // namespace AscendC
