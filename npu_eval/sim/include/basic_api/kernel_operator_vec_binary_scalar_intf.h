// Tensor-scalar vector ops: Adds Muls Maxs Mins LeakyRelu, and the bit shifts ShiftLeft/ShiftRight.
// The scalar has the tensor's type T, deduced from both arguments as the real headers do,
// so `Muls(halfTensor, halfTensor, 0.5f, n)` fails to compile here as it does on CANN:
// write `(half)0.5` or a half variable.
#pragma once

#include <type_traits>

#include "../sage_sim/vec.h"

namespace AscendC {

#define SAGE_SCALAR_OP(NAME, OK, LIST, EXPR)                                                                      \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,      \
                                const int32_t& count, SAGE_LOC) {                                                \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            auto b = ::sage::sim::up(scalarValue);                                                               \
            ::sage::sim::unary_count(#NAME, dst, src, count, loc, [b](T& d, const T& s) {                        \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,      \
                                const uint64_t mask[], const uint8_t repeatTime,                                 \
                                const UnaryRepeatParams& repeatParams, SAGE_LOC) {                               \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::touch(loc);                                                                             \
            auto b = ::sage::sim::up(scalarValue);                                                               \
            auto m = ::sage::sim::repeats_from_array(::sage::sim::elems_per_repeat<T>(), isSetMask, mask,        \
                                                     repeatTime);                                                \
            ::sage::sim::unary_masked(#NAME, dst, src, m, repeatParams, loc, [b](T& d, const T& s) {             \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,      \
                                uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,  \
                                SAGE_LOC) {                                                                      \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::touch(loc);                                                                             \
            auto b = ::sage::sim::up(scalarValue);                                                               \
            auto m = ::sage::sim::repeats_from_len(::sage::sim::elems_per_repeat<T>(), isSetMask, mask,          \
                                                   repeatTime);                                                  \
            ::sage::sim::unary_masked(#NAME, dst, src, m, repeatParams, loc, [b](T& d, const T& s) {             \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }

#define SAGE_ARITH_OK (::sage::sim::one_of<T, half, float, int16_t, int32_t>())
#define SAGE_ARITH_LIST "half, float, int16_t, int32_t"

SAGE_SCALAR_OP(Adds, SAGE_ARITH_OK, SAGE_ARITH_LIST, a + b)
SAGE_SCALAR_OP(Muls, SAGE_ARITH_OK, SAGE_ARITH_LIST, a * b)
SAGE_SCALAR_OP(Maxs, SAGE_ARITH_OK, SAGE_ARITH_LIST, ((a > b || a != a) ? a : b))
SAGE_SCALAR_OP(Mins, SAGE_ARITH_OK, SAGE_ARITH_LIST, ((a < b || a != a) ? a : b))
SAGE_SCALAR_OP(LeakyRelu, (::sage::sim::one_of<T, half, float>()), "half, float", (a >= 0 ? a : a * b))

#undef SAGE_ARITH_OK
#undef SAGE_ARITH_LIST
#undef SAGE_SCALAR_OP

}  // namespace AscendC

// ---------------------------------------------------------------- ShiftLeft / ShiftRight

// Bit shifts by a scalar.
// ShiftRight is logical for unsigned and arithmetic for signed elements; with roundEn (mask
// forms, int16_t/int32_t) it adds the last bit shifted out. On A2/A3 the shift must lie in
// [0, bit width]; a shift of the full width gives 0 (or -1 for a negative signed element).
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
