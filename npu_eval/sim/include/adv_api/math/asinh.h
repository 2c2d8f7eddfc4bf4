// Asinh (adv_api/math, asc-devkit include/adv_api/math/asinh.h): asinh(x) = sign(x) * ln(|x| + sqrt(x^2 + 1)), the sign as x*M / (|x*M| + m), in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetAsinhMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Asinh接口/Asinh.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "asinh_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void asinh_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Asinh", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Add"}, {"Ln"}, {"Mul"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Muls"}, {"Abs"}, {"Adds"}, {"Div"}, {"Abs"}, {"Mul"}, {"Adds"}, {"Sqrt"}, {"Add"}, {"Ln"}, {"Mul"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAsinhMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Asinh", "GetAsinhMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 3u : 3u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            // The sign without a compare: x*M / (|x*M| + m), with M, m = 2^62, 2^-62 (float) or 2^15, 2^-15 (half).
            const float big = sizeof(T) == 4 ? 4611686018427387904.0f : 32768.0f;
            const float tiny = sizeof(T) == 4 ? 2.168404344971009e-19f : 3.0517578125e-05f;
            const float sx = x * big;
            const float sign = sx / (std::fabs(sx) + tiny);
            const float a = std::fabs(x);
            return std::log(std::sqrt(a * a + 1.0f) + a) * sign;
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asinh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::asinh_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asinh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::asinh_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asinh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::asinh_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Asinh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::asinh_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
