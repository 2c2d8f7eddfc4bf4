// Tan (adv_api/math, asc-devkit include/adv_api/math/tan.h): tan(x) by k = rint(x / pi), x0 = x - k pi, x0 Q(x0^2) / ((x0^2 + d)(x0 + pi/2)(x0 - pi/2)), in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetTanMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Tan接口/Tan.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "tan_tiling.h"
#include "trig_utils.h"

namespace AscendC {
namespace detail {

// Tan's instructions per chunk on float (Lgamma and Digamma issue them too).
inline constexpr sage::sim::advmath::Step kTanFloatSteps[] = {{"Adds"}, {"Muls"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Adds"}, {"Adds"}, {"Muls"}, {"Sub"}, {"Sub"}, {"Sub"}, {"Adds"}, {"Adds"}, {"Muls"}, {"Sub"}, {"Sub"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Sub"}, {"Sub"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Mul"}, {"Div"}};

template <typename T>
inline void tan_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Tan", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kHalf[] = {{"Cast", true}, {"Adds"}, {"Muls"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Adds"}, {"Adds"}, {"Muls"}, {"Sub"}, {"Sub"}, {"Sub"}, {"Adds"}, {"Adds"}, {"Muls"}, {"Sub"}, {"Sub"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Sub"}, {"Sub"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Mul"}, {"Div"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kTanFloatSteps) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetTanMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Tan", "GetTanMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 4u : 10u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return tan_doc(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::tan_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::tan_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::tan_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::tan_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
