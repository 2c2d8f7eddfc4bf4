// Erfc (adv_api/math, asc-devkit include/adv_api/math/erfc.h): erfc(x) = e^(-a^2) R(a) / S(a) for a = |x| (x clipped to [-10, 10]), mirrored to 2 - erfc(a) for negative x through the sign x / (|x| + 2^-62), in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetErfcMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Erfc接口/Erfc.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "erfc_tiling.h"
#include "erf_utils.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void erfc_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Erfc", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mins"}, {"Maxs"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mins"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Div"}, {"Mul"}, {"Muls"}, {"Exp"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Add"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mins"}, {"Maxs"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mins"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Div"}, {"Mul"}, {"Muls"}, {"Exp"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Add"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetErfcMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Erfc", "GetErfcMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 7u : 16u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return erfc_doc(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erfc(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::erfc_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erfc(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::erfc_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erfc(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::erfc_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Erfc(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::erfc_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
