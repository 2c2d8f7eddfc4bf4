// Atan (adv_api/math, asc-devkit include/adv_api/math/atan.h): atan(x) as the least of four Taylor forms (around 0, tan(pi/8), 1 and its pi/8 transform) on |x| clipped to 10000, times the sign, in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetAtanMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Atan接口/Atan.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "atan_tiling.h"
#include "trig_utils.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void atan_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Atan", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mins"}, {"Maxs"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Min"}, {"Adds"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Min"}, {"Muls"}, {"Adds"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Adds"}, {"Min"}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mul"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mins"}, {"Maxs"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Min"}, {"Adds"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Min"}, {"Muls"}, {"Adds"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Mul"}, {"Muls"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Mul"}, {"Adds"}, {"Adds"}, {"Min"}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Mul"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAtanMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Atan", "GetAtanMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 5u : 12u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return atan_doc(x);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Atan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::atan_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Atan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::atan_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Atan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::atan_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Atan(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::atan_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
