// Tanh (adv_api/math, asc-devkit include/adv_api/math/tanh.h): tanh(x) = (e^(2x) - 1) / (e^(2x) + 1), x first clipped to [-8.8, 8.8] (Mins/Maxs), all in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetTanhMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Tanh接口/Tanh.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "tanh_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void tanh_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Tanh", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Mins"}, {"Maxs"}, {"Muls"}, {"Exp"}, {"Adds"}, {"Adds"}, {"Div"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Mins"}, {"Maxs"}, {"Muls"}, {"Exp"}, {"Adds"}, {"Adds"}, {"Div"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetTanhMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Tanh", "GetTanhMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 1u : 4u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            const float c = std::max(std::min(x, 8.8f), -8.8f);
            const float e = std::exp(c * 2.0f);
            return (e + -1.0f) / (e + 1.0f);
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tanh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::tanh_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tanh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::tanh_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tanh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::tanh_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Tanh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::tanh_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
