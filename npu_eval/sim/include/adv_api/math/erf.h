// Erf (adv_api/math, asc-devkit include/adv_api/math/erf.h): erf(x) = x P(x^2) / Q(x^2), a rational approximation on x clipped to [-3.92, 3.92], in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetErfMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Erf接口/Erf.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "erf_tiling.h"
#include "erf_utils.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void erf_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Erf", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mins"}, {"Maxs"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Div"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mins"}, {"Maxs"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Div"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetErfMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Erf", "GetErfMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 3u : 8u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return erf_rational(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::erf_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::erf_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::erf_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::erf_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
