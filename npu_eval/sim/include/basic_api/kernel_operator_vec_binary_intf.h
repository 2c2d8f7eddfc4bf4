// Element-wise binary vector ops: Add Sub Mul Div Max Min And Or AddRelu SubRelu.
// Each in three forms, as in kernel_operator_vec_binary_intf.h:
//   NAME(dst, src0, src1, count)                                   first `count` elements
//   NAME<T, isSetMask>(dst, src0, src1, mask[], repeatTime, params) bit mask per repeat
//   NAME<T, isSetMask>(dst, src0, src1, mask, repeatTime, params)   first `mask` per repeat
// Half computes in float and rounds once, which is what the vector unit returns for
// + - * / (float holds the exact result of a half op before its single rounding).
#pragma once

#include "../sage_sim/vec.h"

namespace AscendC {

#define SAGE_BINARY_OP(NAME, OK, LIST, EXPR)                                                                      \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                const int32_t& count, SAGE_LOC) {                                                \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::binary_count<T>(#NAME, dst, src0, src1, count, loc, [](auto a, auto b) { return EXPR; }); \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                const uint64_t mask[], const uint8_t repeatTime,                                 \
                                const BinaryRepeatParams& repeatParams, SAGE_LOC) {                              \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::touch(loc);                                                                             \
            auto m = ::sage::sim::repeats_from_array(::sage::sim::elems_per_repeat<T>(), isSetMask, mask,        \
                                                     repeatTime);                                                \
            ::sage::sim::binary_masked<T>(#NAME, dst, src0, src1, m, repeatParams, loc,                          \
                                          [](auto a, auto b) { return EXPR; });                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, \
                                SAGE_LOC) {                                                                      \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            ::sage::sim::touch(loc);                                                                             \
            auto m = ::sage::sim::repeats_from_len(::sage::sim::elems_per_repeat<T>(), isSetMask, mask,          \
                                                   repeatTime);                                                  \
            ::sage::sim::binary_masked<T>(#NAME, dst, src0, src1, m, repeatParams, loc,                          \
                                          [](auto a, auto b) { return EXPR; });                                  \
        }                                                                                                        \
    }

#define SAGE_ARITH_OK (::sage::sim::one_of<T, half, float, int16_t, int32_t>())
#define SAGE_ARITH_LIST "half, float, int16_t, int32_t"

SAGE_BINARY_OP(Add, SAGE_ARITH_OK, SAGE_ARITH_LIST, a + b)
SAGE_BINARY_OP(Sub, SAGE_ARITH_OK, SAGE_ARITH_LIST, a - b)
SAGE_BINARY_OP(Mul, SAGE_ARITH_OK, SAGE_ARITH_LIST, a * b)
SAGE_BINARY_OP(Div, (::sage::sim::one_of<T, half, float>()), "half, float", a / b)
// A NaN operand wins, as IEEE 754-2019 maximum/minimum (and torch.maximum) have it.
SAGE_BINARY_OP(Max, SAGE_ARITH_OK, SAGE_ARITH_LIST, ((a > b || a != a) ? a : b))
SAGE_BINARY_OP(Min, SAGE_ARITH_OK, SAGE_ARITH_LIST, ((a < b || a != a) ? a : b))
SAGE_BINARY_OP(And, (::sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t", a & b)
SAGE_BINARY_OP(Or, (::sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t", a | b)
SAGE_BINARY_OP(AddRelu, (::sage::sim::one_of<T, half, float, int16_t>()), "half, float, int16_t",
               ((a + b) < 0 ? decltype(a + b)(0) : (a + b)))
SAGE_BINARY_OP(SubRelu, (::sage::sim::one_of<T, half, float, int16_t>()), "half, float, int16_t",
               ((a - b) < 0 ? decltype(a - b)(0) : (a - b)))

#undef SAGE_ARITH_OK
#undef SAGE_ARITH_LIST
#undef SAGE_BINARY_OP

}  // namespace AscendC
