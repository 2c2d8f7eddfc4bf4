// Element-wise binary vector ops: Add Sub Mul Div Max Min And Or, count form.
#pragma once

#include "sage_sim/vec.h"

namespace AscendC {

#define SAGE_BINARY_OP(NAME, ALLOWED, EXPR)                                                              \
    template <typename T>                                                                                \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                   \
                                const LocalTensor<T>& src1, const int32_t& count, SAGE_LOC) {            \
        static_assert(ALLOWED, "[dtype-unsupported] " #NAME " has no overload for this dtype on this chip"); \
        using namespace sage::sim;                                                                       \
        touch(loc);                                                                                      \
        vec_src(src0, #NAME, count, loc);                                                                \
        vec_src(src1, #NAME, count, loc);                                                                \
        vec_dst(dst, #NAME, count, loc);                                                                 \
        T* d = dst.data();                                                                               \
        const T* a = src0.data();                                                                        \
        const T* b = src1.data();                                                                        \
        for (int32_t i = 0; i < count; ++i) d[i] = T(EXPR);                                              \
        vec_done(dst, #NAME, count, loc, src0.range(count), src1.range(count));                          \
    }

SAGE_BINARY_OP(Add, (sage::sim::is_vec_float<T>() || sage::sim::is_vec_int<T>()), a[i] + b[i])
SAGE_BINARY_OP(Sub, (sage::sim::is_vec_float<T>() || sage::sim::is_vec_int<T>()), a[i] - b[i])
SAGE_BINARY_OP(Mul, (sage::sim::is_vec_float<T>() || sage::sim::is_vec_int<T>()), a[i] * b[i])
SAGE_BINARY_OP(Div, (sage::sim::is_vec_float<T>()), a[i] / b[i])
SAGE_BINARY_OP(Max, (sage::sim::is_vec_float<T>() || sage::sim::is_vec_int<T>()), (a[i] > b[i] ? a[i] : b[i]))
SAGE_BINARY_OP(Min, (sage::sim::is_vec_float<T>() || sage::sim::is_vec_int<T>()), (a[i] < b[i] ? a[i] : b[i]))
#undef SAGE_BINARY_OP

}  // namespace AscendC
