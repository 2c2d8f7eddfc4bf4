// Cos (adv_api/math, asc-devkit include/adv_api/math/cos.h): cos(x) as sin(x0) with k = rint(x / pi + 1/2), x0 = x - k pi + pi/2 (pi in five parts), clipped to [-1, 1], in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetCosMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Cos接口/Cos.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "cos_tiling.h"
#include "trig_utils.h"

namespace AscendC {
namespace detail {

// Cos's instructions per chunk on float (Lgamma and Digamma issue them too).
inline constexpr sage::sim::advmath::Step kCosFloatSteps[] = {{"Muls"}, {"Adds"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Adds"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Muls"}, {"Add"}, {"Adds"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Mul"}, {"Mins"}, {"Maxs"}};

template <typename T, bool isReuseSource>
inline void cos_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Cos", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kHalf[] = {{"Cast", true}, {"Muls"}, {"Adds"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Adds"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Muls"}, {"Add"}, {"Adds"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Mul"}, {"Mins"}, {"Maxs"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kCosFloatSteps) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetCosMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), isReuseSource, maxTmp, minTmp);
    const Plan plan{"Cos", "GetCosMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? (isReuseSource ? 2u : 3u) : 8u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return cos_doc(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::cos_run<T, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::cos_run<T, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::cos_run<T, isReuseSource>(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::cos_run<T, isReuseSource>(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
