// Element-wise unary vector ops: Exp Ln Abs Sqrt Rsqrt Reciprocal Relu Not, each with the
// count form and the two mask/repeat forms (kernel_operator_vec_unary_intf.h).
// Half computes in float and rounds to half once. Sqrt is then exact (correctly rounded);
// Exp/Ln/Rsqrt/Reciprocal use the C library in float, within an ulp of the device's
// approximation in float and equal to it after the rounding to half in nearly every case.
#pragma once

#include <cmath>

#include "../sage_sim/vec.h"

namespace AscendC {

#define SAGE_UNARY_OP(NAME, OK, LIST, EXPR)                                                                       \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count,      \
                                SAGE_LOC) {                                                                      \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::unary_count(#NAME, dst, src, count, loc, [](T& d, const T& s) {                         \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],     \
                                const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, SAGE_LOC) {     \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::touch(loc);                                                                             \
            auto m = ::sage::sim::repeats_from_array(::sage::sim::elems_per_repeat<T>(), isSetMask, mask,        \
                                                     repeatTime);                                                \
            ::sage::sim::unary_masked(#NAME, dst, src, m, repeatParams, loc, [](T& d, const T& s) {              \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,             \
                                const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, SAGE_LOC) {     \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::touch(loc);                                                                             \
            auto m = ::sage::sim::repeats_from_len(::sage::sim::elems_per_repeat<T>(), isSetMask, mask,          \
                                                   repeatTime);                                                  \
            ::sage::sim::unary_masked(#NAME, dst, src, m, repeatParams, loc, [](T& d, const T& s) {              \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }

#define SAGE_FLOAT_OK (::sage::sim::one_of<T, half, float>())

SAGE_UNARY_OP(Exp, SAGE_FLOAT_OK, "half, float", std::exp(a))
SAGE_UNARY_OP(Ln, SAGE_FLOAT_OK, "half, float", std::log(a))
SAGE_UNARY_OP(Abs, SAGE_FLOAT_OK, "half, float", std::fabs(a))
SAGE_UNARY_OP(Sqrt, SAGE_FLOAT_OK, "half, float", std::sqrt(a))
SAGE_UNARY_OP(Rsqrt, SAGE_FLOAT_OK, "half, float", 1.0f / std::sqrt(a))
SAGE_UNARY_OP(Reciprocal, SAGE_FLOAT_OK, "half, float", 1.0f / a)
// NaN passes through (a < 0 is false), as torch.relu does.
SAGE_UNARY_OP(Relu, (::sage::sim::one_of<T, half, float, int32_t>()), "half, float, int32_t",
              (a < 0 ? decltype(a)(0) : a))
SAGE_UNARY_OP(Not, (::sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t", ~a)

#undef SAGE_FLOAT_OK
#undef SAGE_UNARY_OP

}  // namespace AscendC
