// Acosh (adv_api/math, asc-devkit include/adv_api/math/acosh.h): acosh(x) = ln(x + sqrt(x^2 - 1)), in float (NaN for x < 1).
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetAcoshMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Acosh接口/Acosh.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "acosh_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void acosh_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Acosh", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mul"}, {"Adds"}, {"Sqrt"}, {"Add"}, {"Div"}, {"Mul"}, {"Ln"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Add"}, {"Div"}, {"Mul"}, {"Ln"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAcoshMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Acosh", "GetAcoshMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 1u : 2u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            const float s = std::sqrt(x * x + -1.0f);
            return std::log(x + s);  // NaN below 1, as sqrt of a negative
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::acosh_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::acosh_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::acosh_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::acosh_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
