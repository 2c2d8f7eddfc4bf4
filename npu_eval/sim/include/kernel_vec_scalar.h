// Tensor-scalar vector ops: Adds Muls Maxs Mins LeakyRelu (kernel_operator_vec_binary_scalar_intf.h).
// The scalar has the tensor's type T, deduced from both arguments as the real headers do,
// so `Muls(halfTensor, halfTensor, 0.5f, n)` fails to compile here as it does on CANN:
// write `(half)0.5` or a half variable.
#pragma once

#include "sage_sim/vec.h"

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
