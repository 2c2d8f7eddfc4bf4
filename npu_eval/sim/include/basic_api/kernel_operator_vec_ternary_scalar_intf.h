// Axpy: dst = dst + src * scalar.
#pragma once

#include "../sage_sim/vec.h"
#include "kernel_common.h"

namespace AscendC {

// dst = dst + src * scalar, computed in float and rounded to T once. T/U pairs:
// half/half, float/float, and float/half (dst float, src half).
#define SAGE_AXPY_OK                                                                                              \
    ((std::is_same<T, U>::value && ::sage::sim::one_of<T, half, float>()) ||                                      \
     (std::is_same<T, float>::value && std::is_same<U, half>::value))
#define SAGE_AXPY_LIST "dst/src half/half, float/float or float/half"

namespace detail {
template <typename T, typename U>
inline auto axpy_fn(const U& scalar) {
    float a = float(scalar);
    return [a](T& d, const U& s) { d = sage::sim::down<T>(float(d) + float(s) * a); };
}
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            const int32_t& count, SAGE_LOC) {
    SAGE_DTYPE_GATE("Axpy", T, SAGE_AXPY_OK, SAGE_AXPY_LIST)
    if constexpr (SAGE_AXPY_OK) {
        sage::sim::unary_count("Axpy", dst, src, count, loc, detail::axpy_fn<T, U>(scalarValue), true);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                            SAGE_LOC) {
    SAGE_DTYPE_GATE("Axpy", T, SAGE_AXPY_OK, SAGE_AXPY_LIST)
    if constexpr (SAGE_AXPY_OK) {
        sage::sim::touch(loc);
        constexpr uint32_t epr = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
        auto m = sage::sim::repeats_from_array(epr, isSetMask, mask, repeatTime);
        sage::sim::unary_masked("Axpy", dst, src, m, repeatParams, loc, detail::axpy_fn<T, U>(scalarValue), true);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                            SAGE_LOC) {
    SAGE_DTYPE_GATE("Axpy", T, SAGE_AXPY_OK, SAGE_AXPY_LIST)
    if constexpr (SAGE_AXPY_OK) {
        sage::sim::touch(loc);
        constexpr uint32_t epr = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
        auto m = sage::sim::repeats_from_len(epr, isSetMask, mask, repeatTime);
        sage::sim::unary_masked("Axpy", dst, src, m, repeatParams, loc, detail::axpy_fn<T, U>(scalarValue), true);
    }
}
#undef SAGE_AXPY_OK
#undef SAGE_AXPY_LIST

// CANN 9 kernels start with InitSocState(): the core's mask and compare registers return to
// their reset state (the emulator also resets them at every block's start).
__aicore__ inline void InitSocState(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs() = sage::sim::VecRegs{};
    sage::sim::vregs().block = sage::sim::blk().idx;
}

}  // namespace AscendC
