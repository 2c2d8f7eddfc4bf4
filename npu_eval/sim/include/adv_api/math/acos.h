// Acos (adv_api/math, asc-devkit include/adv_api/math/acos.h): acos(x) = -(asin(x) - pi/2), Asin's algorithm, in float.
// Rounded once to T at the end, as the final Cast does (on half the device runs the small-argument series in half; here it is float). half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetAcosMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Acos接口/Acos.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "acos_tiling.h"
#include "trig_utils.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void acos_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Acos", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mul"}, {"Muls"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mins"}, {"Adds"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Add"}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mul"}, {"Adds"}, {"Muls"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mul"}, {"Muls"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Mul"}, {"Mins"}, {"Adds"}, {"Cast"}, {"Cast"}, {"Muls"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Add"}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mul"}, {"Adds"}, {"Muls"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAcosMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Acos", "GetAcosMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 2u : 6u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return (asin_doc(x) + -kAsinHalfPi) * -1.0f;
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::acos_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::acos_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::acos_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acos(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::acos_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
