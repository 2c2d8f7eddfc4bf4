// Bit shifts by a scalar: ShiftLeft, ShiftRight (kernel_operator_vec_binary_scalar_intf.h).
// ShiftRight is logical for unsigned and arithmetic for signed elements; with roundEn (mask
// forms, int16_t/int32_t) it adds the last bit shifted out. On A2/A3 the shift must lie in
// [0, bit width]; a shift of the full width gives 0 (or -1 for a negative signed element).
#pragma once

#include <type_traits>

#include "sage_sim/vec.h"

namespace sage {
namespace sim {

template <typename T>
inline T shift_left(T v, int64_t n) {
    using U = std::make_unsigned_t<T>;
    if (n >= int64_t(sizeof(T) * 8)) return T(0);
    return T(U(U(v) << n));
}

template <typename T>
inline T shift_right(T v, int64_t n, bool round) {
    constexpr int64_t bits = sizeof(T) * 8;
    if (n <= 0) return v;
    T r;
    if (n >= bits) {
        r = (std::is_signed<T>::value && v < 0) ? T(-1) : T(0);
    } else {
        r = T(v >> n);  // >> on a signed value is arithmetic in C++20 and in GCC before it
    }
    if (round && std::is_signed<T>::value && n <= bits) {
        using U = std::make_unsigned_t<T>;
        if ((U(v) >> (n - 1)) & 1u) r = T(r + 1);
    }
    return r;
}

// The shift a kernel passes must lie in [0, bit width] on A2/A3; outside it the device's
// result is unspecified.
template <typename T>
inline void shift_range_check(const char* api, T amount, SrcLoc loc) {
    constexpr int64_t bits = sizeof(T) * 8;
    if (int64_t(amount) < 0 || int64_t(amount) > bits) {
        report("dtype-unsupported", Severity::Warning, loc,
               "%s by %lld bits on %s elements: the shift must lie in [0, %lld] on %s, the device's result is "
               "unspecified outside it",
               api, (long long)amount, dtype_name<T>(), (long long)bits, SAGE_CHIP_LABEL);
    }
}

}  // namespace sim
}  // namespace sage

namespace AscendC {

#define SAGE_SHIFT_OK (::sage::sim::one_of<T, int16_t, uint16_t, int32_t, uint32_t>())
#define SAGE_SHIFT_LIST "int16_t, uint16_t, int32_t, uint32_t"

template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                 const int32_t& count, SAGE_LOC) {
    SAGE_DTYPE_GATE("ShiftLeft", T, SAGE_SHIFT_OK, SAGE_SHIFT_LIST)
    if constexpr (SAGE_SHIFT_OK) {
        ::sage::sim::touch(loc);
        ::sage::sim::shift_range_check("ShiftLeft", scalarValue, loc);
        int64_t n = int64_t(scalarValue);
        ::sage::sim::unary_count("ShiftLeft", dst, src, count, loc,
                                 [n](T& d, const T& s) { d = ::sage::sim::shift_left(s, n); });
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                 uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                                 SAGE_LOC) {
    SAGE_DTYPE_GATE("ShiftLeft", T, SAGE_SHIFT_OK, SAGE_SHIFT_LIST)
    if constexpr (SAGE_SHIFT_OK) {
        ::sage::sim::touch(loc);
        ::sage::sim::shift_range_check("ShiftLeft", scalarValue, loc);
        int64_t n = int64_t(scalarValue);
        auto m = ::sage::sim::repeats_from_array(::sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        ::sage::sim::unary_masked("ShiftLeft", dst, src, m, repeatParams, loc,
                                  [n](T& d, const T& s) { d = ::sage::sim::shift_left(s, n); });
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                 uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                                 SAGE_LOC) {
    SAGE_DTYPE_GATE("ShiftLeft", T, SAGE_SHIFT_OK, SAGE_SHIFT_LIST)
    if constexpr (SAGE_SHIFT_OK) {
        ::sage::sim::touch(loc);
        ::sage::sim::shift_range_check("ShiftLeft", scalarValue, loc);
        int64_t n = int64_t(scalarValue);
        auto m = ::sage::sim::repeats_from_len(::sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        ::sage::sim::unary_masked("ShiftLeft", dst, src, m, repeatParams, loc,
                                  [n](T& d, const T& s) { d = ::sage::sim::shift_left(s, n); });
    }
}

template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                  const int32_t& count, SAGE_LOC) {
    SAGE_DTYPE_GATE("ShiftRight", T, SAGE_SHIFT_OK, SAGE_SHIFT_LIST)
    if constexpr (SAGE_SHIFT_OK) {
        ::sage::sim::touch(loc);
        ::sage::sim::shift_range_check("ShiftRight", scalarValue, loc);
        int64_t n = int64_t(scalarValue);
        ::sage::sim::unary_count("ShiftRight", dst, src, count, loc,
                                 [n](T& d, const T& s) { d = ::sage::sim::shift_right(s, n, false); });
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                  uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                                  bool roundEn = false, SAGE_LOC) {
    SAGE_DTYPE_GATE("ShiftRight", T, SAGE_SHIFT_OK, SAGE_SHIFT_LIST)
    if constexpr (SAGE_SHIFT_OK) {
        ::sage::sim::touch(loc);
        ::sage::sim::shift_range_check("ShiftRight", scalarValue, loc);
        int64_t n = int64_t(scalarValue);
        auto m = ::sage::sim::repeats_from_array(::sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        ::sage::sim::unary_masked("ShiftRight", dst, src, m, repeatParams, loc,
                                  [n, roundEn](T& d, const T& s) { d = ::sage::sim::shift_right(s, n, roundEn); });
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                  uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                                  bool roundEn = false, SAGE_LOC) {
    SAGE_DTYPE_GATE("ShiftRight", T, SAGE_SHIFT_OK, SAGE_SHIFT_LIST)
    if constexpr (SAGE_SHIFT_OK) {
        ::sage::sim::touch(loc);
        ::sage::sim::shift_range_check("ShiftRight", scalarValue, loc);
        int64_t n = int64_t(scalarValue);
        auto m = ::sage::sim::repeats_from_len(::sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        ::sage::sim::unary_masked("ShiftRight", dst, src, m, repeatParams, loc,
                                  [n, roundEn](T& d, const T& s) { d = ::sage::sim::shift_right(s, n, roundEn); });
    }
}

#undef SAGE_SHIFT_OK
#undef SAGE_SHIFT_LIST

}  // namespace AscendC
