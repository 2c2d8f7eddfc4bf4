// Asin (adv_api/math, asc-devkit include/adv_api/math/asin.h): asin(x): a 7-term Taylor series in x below |x| = sqrt(1/2), pi/2 minus the series at sqrt(1 - x^2) above, times the sign, in float.
// Rounded once to T at the end, as the final Cast does (on half the device runs the small-argument series in half; here it is float). half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetAsinMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Asin接口/Asin.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "asin_tiling.h"
#include "trig_utils.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void asin_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Asin", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mul"}, {"Muls"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mins"}, {"Adds"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Add"}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mul"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mul"}, {"Muls"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mins"}, {"Adds"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Add"}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mul"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAsinMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Asin", "GetAsinMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 2u : 6u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return asin_doc(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::asin_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::asin_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::asin_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::asin_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
