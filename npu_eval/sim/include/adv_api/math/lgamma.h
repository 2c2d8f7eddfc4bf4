// Lgamma (adv_api/math, asc-devkit include/adv_api/math/lgamma.h): ln|Gamma(x)| by the Atlas A2
// algorithm (lgamma_utils.h: range-split polynomials and Stirling's series on float, a shifted
// Stirling form on half computed in float, the reflection formula below 0), rounded once to T.
// half and float; the temporary buffer (sharedTmpBuffer, or the free UB in the form without one)
// must hold GetLgammaMaxMinTmpSize's minimum. With isReuseSource on float the device keeps the
// selects' zeros in the source: its first min(calCount, chunk) elements come back 0.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Lgamma接口/Lgamma.md.
#pragma once

#include <algorithm>

#include "../../sage_sim/adv_math.h"
#include "lgamma_tiling.h"
#include "lgamma_utils.h"
#include "sin.h"

namespace AscendC {
namespace detail {

// The vector instructions the Atlas A2 implementation issues per chunk.
inline sage::sim::advmath::StepList lgamma_float_steps() {
    sage::sim::advmath::StepList s;
    s.mask().mask().add("Abs").add("Duplicate");
    s.add("Duplicate").mask().horner(7).add("Mul").add("Add").add("Ln").add("Muls").pick();  // lgamma(|x|)
    s.range().add("Muls").add("Adds").horner(11).pick();
    s.range().add("Adds").horner(10).pick();
    s.range().add("Adds").horner(4).add("Adds").horner(3).add("Adds").add("Div").add("Add").pick();
    s.range().add("Ln").add("Muls").add("Adds").add("Mul").add("Reciprocal").add("Mul").horner(2);
    s.add("Adds").add("Mul").add("Adds").add("Add").add("Add").add("Sub").pick();
    s.mask().pick().add("Duplicate").pick();
    s.add("Duplicate").mask().add("Ln").add("Muls").pick();  // the reflection for x < 0
    s.add("Add").add("Adds").add("Cast").add("Muls").add("Cast").add("Muls").add("Sub").mask().add("Not");
    s.add("Muls").add("Add").add("Muls").add("Mul").horner(3).add("Mul").add("Add").add("Duplicate").pick();
    s.horner(4).add("Adds").pick().add("Abs").add("Mul").add("Ln").add("Muls").add("Adds").add("Muls").add("Add");
    s.add("Cast").add("Compare").add("Duplicate").add("Compare").add("And").mask().add("And").pick();
    s.add("Not").mask().add("And").add("Duplicate").pick().pick();
    s.add("Not").add("Not").add("And").pick();  // NaN
    return s;
}

// The half path's lgamma for x >= 0 (LgammaComputePosHalf).
inline void lgamma_pos_half_steps(sage::sim::advmath::StepList& s) {
    s.add("Adds").add("Duplicate").add("Div").add("Muls").add("Muls").add("Ln").add("Muls").add("Muls").add("Muls");
    s.add("Add").add("Duplicate").add("Div").add("Add").add("Ln").add("Adds").add("Mul").add("Add").add("Ln");
    s.pairs("Adds", "Ln", 3).add("Add", 3).add("Sub");
}

inline sage::sim::advmath::StepList lgamma_half_steps() {
    sage::sim::advmath::StepList s;
    s.add("Duplicate").add_on_t("Cast");
    s.add("Duplicate");
    lgamma_pos_half_steps(s);
    s.mask().pick().add("Muls").add("Adds");
    lgamma_pos_half_steps(s);
    s.add("Muls").add("Cast").add("Sub").add("Muls").add(kSinFloatSteps).add("Abs").add("Duplicate").add("Div");
    s.add("Ln").add("Add").mask().pick().add("Not").add("Not").add("And").pick();
    s.add("Abs").mask().add("Not").add("Duplicate").add("Select").add_on_t("Cast");
    return s;
}

template <typename T, bool isReuseSource>
inline void lgamma_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                       uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Lgamma", T, (sage::sim::one_of<T, half, float>()), "half, float")
    constexpr bool kFloat = sizeof(T) == sizeof(float);
    constexpr bool kReuse = kFloat && isReuseSource;  // the parameter only counts for float
    static const sage::sim::advmath::StepList steps = kFloat ? lgamma_float_steps() : lgamma_half_steps();
    uint32_t maxTmp = 0, minTmp = 0;
    GetLgammaMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), kReuse, maxTmp, minTmp);
    const uint32_t perElem = 4u * lgamma_float_nodes(sizeof(T), kReuse);
    const Plan plan{"Lgamma", "GetLgammaMaxMinTmpSize", minTmp, perElem, steps.view()};
    const uint32_t tmpBytes = tmp ? tmp->GetSize() : free_ub_bytes();
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float { return kFloat ? lgamma_f(x) : lgamma_h(x); });
    if constexpr (kReuse) {
        // The zeros the selects compare with live at the source's start.
        const uint32_t n = std::min(count, float_split(tmpBytes, perElem));
        std::fill(src.data(), src.data() + n, 0.0f);
        sage::sim::ub_mark(src.range(n));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Lgamma(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::lgamma_run<T, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Lgamma(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                              SAGE_LOC)
{
    detail::lgamma_run<T, isReuseSource>(dstTensor, srcTensor, nullptr, calCount, loc);
}

}  // namespace AscendC
