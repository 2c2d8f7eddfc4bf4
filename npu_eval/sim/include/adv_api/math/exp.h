// The high-level Exp (adv_api/math, asc-devkit include/adv_api/math/exp.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Exp接口/Exp-81.md:
//   Exp<T, taylorExpandLevel, isReuseSource>(dst, src, [sharedTmpBuffer,] calCount)
// taylorExpandLevel 0 is the basic Exp. Otherwise, in float: n = floor(x) (Cast CAST_FLOOR),
// d = x - n, e^x = e^n * (1 + d + d^2/2! + ... + d^L/L!), the terms built as t = t * d * (1/i)
// one vector op at a time; half is cast to float and back. The temporary buffer must hold
// GetExpMaxMinTmpSize's minimum. taylorExpandLevel has no default, as in CANN, so Exp<T>(dst,
// src, n) stays the basic API.
#pragma once

#include <cmath>

#include "../../basic_api/kernel_operator_vec_unary_intf.h"
#include "../../sage_sim/adv_math.h"
#include "exp_tiling.h"

namespace AscendC {
namespace detail {

inline float exp_taylor(float x, uint32_t level) {
    const float n = std::floor(x);
    const float d = x - n;
    const float en = std::exp(n);
    float res = (d + 0.0f) + 1.0f;
    float term = d + 0.0f;
    for (uint32_t i = 2; i <= level; ++i) {
        term = d * term;
        term = term * (1.0f / float(i));
        res = res + term;
    }
    return res * en;
}

template <typename T, uint8_t level, bool isReuseSource>
inline void exp_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                    uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Exp", T, (sage::sim::one_of<T, half, float>()), "half, float")
    // The chunk's sequence: floor, subtract, exp of the integer part, the series, the product.
    static constexpr Step kHead[] = {{"Cast", true}, {"Cast"}, {"Sub"}, {"Exp"}, {"Adds"}, {"Adds"}, {"Adds"}};
    uint32_t maxTmp = 0, minTmp = 0;
    GetExpMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), isReuseSource, maxTmp, minTmp);
    const uint32_t per = 4u * exp_tmp_tensors(sizeof(T), isReuseSource);
    const Plan plan{"Exp", "GetExpMaxMinTmpSize", minTmp, per, kHead};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float { return exp_taylor(x, level); });
    // The series: Mul, Muls, Add per term, then the product with e^n and the cast back.
    static constexpr Step kTerm[] = {{"Mul"}, {"Muls"}, {"Add"}};
    static constexpr Step kTail[] = {{"Mul"}, {"Cast", true}};
    const uint32_t chunk = chunk_elems<T>(tmp ? tmp->GetSize() : free_ub_bytes(), per, count);
    for (uint32_t i = 2; i <= level; ++i) trace_steps<T>(kTerm, count, chunk, loc, {}, {}, {}, {});
    trace_steps<T>(kTail, count, chunk, loc, dst.range(count), {}, {}, {});
}

}  // namespace detail

template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
__aicore__ inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    if constexpr (taylorExpandLevel == 0) {
        (void)sharedTmpBuffer;
        Exp<T>(dstLocal, srcLocal, int32_t(calCount), loc);
    } else {
        detail::exp_run<T, taylorExpandLevel, isReuseSource>(dstLocal, srcLocal, &sharedTmpBuffer, calCount, loc);
    }
}

template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
__aicore__ inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t calCount,
                           SAGE_LOC)
{
    if constexpr (taylorExpandLevel == 0) {
        Exp<T>(dstLocal, srcLocal, int32_t(calCount), loc);
    } else {
        detail::exp_run<T, taylorExpandLevel, isReuseSource>(dstLocal, srcLocal, nullptr, calCount, loc);
    }
}

}  // namespace AscendC
