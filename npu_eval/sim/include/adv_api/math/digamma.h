// Digamma (adv_api/math, asc-devkit include/adv_api/math/digamma.h): psi(x) = Gamma'(x) / Gamma(x)
// by the Atlas A2 algorithm (digamma_utils.h: an asymptotic series after shifting x up by 10 on
// float, by 3 on half computed in float, the reflection formula below 0, NaN at negative
// integers), rounded once to T. half and float; the temporary buffer (sharedTmpBuffer, or the free
// UB in the form without one) must hold GetDigammaMaxMinTmpSize's minimum. With isReuseSource on
// float the device keeps an intermediate in the source: its first min(calCount, chunk) elements
// no longer hold the input (marked unwritten here, so a later read is reported).
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Digamma接口/Digamma.md.
#pragma once

#include <algorithm>

#include "../../sage_sim/adv_math.h"
#include "cos.h"
#include "digamma_tiling.h"
#include "digamma_utils.h"
#include "sin.h"
#include "tan.h"

namespace AscendC {
namespace detail {

using sage::sim::advmath::StepList;

// DigammaSelect: the zero scalar duplicated, then Select and Add.
inline StepList& digamma_pick(StepList& s) { return s.add("Duplicate").pick(); }

// The masks for x <= -2^23, a negative integer, NaN, each picking NaN (or x) onto the result.
inline void digamma_special_steps(StepList& s) {
    digamma_pick(s.mask());
    digamma_pick(s.mask().mask().add("And").add("Cast").add("Compare").add("And"));
    digamma_pick(s.mask().mask().add("Not").add("Not").add("And"));
}

inline void digamma_pos_float_steps(StepList& s) {
    s.add("Adds").add("Ln").add("Duplicate").add("Div").add("Muls").add("Sub").add("Mul").add("Duplicate");
    for (int i = 0; i < 6; ++i) s.add("Duplicate").add("Mul").add("Sub");
    s.add("Mul").add("Sub").add("Duplicate").add("Div");
    for (int i = 0; i < 9; ++i) s.add("Adds").add("Div").add("Add");
    s.add("Sub");
}

inline StepList digamma_float_steps() {
    StepList s;
    s.add("Duplicate").add("Duplicate");
    digamma_special_steps(s);
    s.mask();
    digamma_pos_float_steps(s);
    digamma_pick(s).mask().add("Muls").add("Adds");
    digamma_pos_float_steps(s);
    // the cot-term: 2x rounded, its parity, the tangent polynomial, both picks
    s.add("Add").add("Cast").add("Sub").add("Muls").add("Cast").add("Duplicate").add("And").add("Cast");
    s.mask().mask().add("Mul").add("Duplicate").pairs("Mul", "Adds", 5).add("Mul").add("Mul").add("Add");
    digamma_pick(s.add("Duplicate"));
    digamma_pick(s.add("Duplicate").add("Div")).add("Muls").add("Add");
    digamma_pick(s);
    return s;
}

inline void digamma_pos_half_steps(StepList& s) {
    s.add("Adds").add("Ln").add("Duplicate").add("Div").add("Muls").add("Sub");
    s.add("Mul").add("Muls").add("Sub").add("Mul").add("Muls").add("Sub").add("Mul").add("Muls").add("Sub");
    s.add("Duplicate").add("Div");
    for (int i = 0; i < 2; ++i) s.add("Adds").add("Div").add("Add");
    s.add("Sub");
}

inline StepList digamma_half_steps() {
    StepList s;
    s.add_on_t("Cast").add("Cast").add("Sub").add("Muls").add(kTanFloatSteps).add("Duplicate").add("Div");
    s.add("Duplicate").add("Duplicate");
    digamma_special_steps(s);
    s.mask();
    digamma_pos_half_steps(s);
    digamma_pick(s).mask().add("Duplicate").add("Sub");
    digamma_pos_half_steps(s);
    digamma_pick(s.add("Adds").add("Sub"));
    s.add_on_t("Cast").range().add("Cast").add("Sub").add("Muls").add(kCosFloatSteps).add("Muls");
    s.add(kSinFloatSteps).add("Muls").add("Div").add("Sub");
    digamma_pick(s).add_on_t("Cast");
    return s;
}

template <typename T, bool isReuseSource>
inline void digamma_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                        uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Digamma", T, (sage::sim::one_of<T, half, float>()), "half, float")
    constexpr bool kFloat = sizeof(T) == sizeof(float);
    constexpr bool kReuse = kFloat && isReuseSource;  // the parameter only counts for float
    static const StepList steps = kFloat ? digamma_float_steps() : digamma_half_steps();
    uint32_t maxTmp = 0, minTmp = 0;
    GetDigammaMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), kReuse, maxTmp, minTmp);
    // calcPro counts half-sized nodes on half: the chunk keeps 8 float tensors per element.
    const uint32_t perElem = kFloat ? 4u * digamma_calc_pro(4u, kReuse) : 4u * 8u;
    const Plan plan{"Digamma", "GetDigammaMaxMinTmpSize", minTmp, perElem, steps.view()};
    const uint32_t tmpBytes = tmp ? tmp->GetSize() : free_ub_bytes();
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float { return kFloat ? digamma_f(x) : digamma_h(x); });
    if constexpr (kReuse) {
        const uint32_t n = std::min(count, float_split(tmpBytes, perElem));
        sage::sim::ub_clear(src.range(n));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Digamma(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::digamma_run<T, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Digamma(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               const uint32_t calCount, SAGE_LOC)
{
    detail::digamma_run<T, isReuseSource>(dstTensor, srcTensor, nullptr, calCount, loc);
}

}  // namespace AscendC
