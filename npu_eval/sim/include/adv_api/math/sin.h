// Sin (adv_api/math, asc-devkit include/adv_api/math/sin.h): sin(x) by k = round(x / pi), x0 = x - k pi (pi in four parts), (-1)^k x0 P(x0^2), in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetSinMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Sin接口/Sin.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "sin_tiling.h"
#include "trig_utils.h"

namespace AscendC {
namespace detail {

// Sin's instructions per chunk on float (Lgamma and Digamma issue them too).
inline constexpr sage::sim::advmath::Step kSinFloatSteps[] = {{"Muls"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Mul"}, {"Muls"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Muls"}, {"Add"}, {"Adds"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Mul"}};

template <typename T, bool isReuseSource>
inline void sin_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Sin", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kHalf[] = {{"Cast", true}, {"Muls"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Sub"}, {"Mul"}, {"Muls"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Muls"}, {"Add"}, {"Adds"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Mul"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kSinFloatSteps) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetSinMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), isReuseSource, maxTmp, minTmp);
    const Plan plan{"Sin", "GetSinMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? (isReuseSource ? 2u : 3u) : 8u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return sin_doc(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::sin_run<T, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::sin_run<T, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::sin_run<T, isReuseSource>(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::sin_run<T, isReuseSource>(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
