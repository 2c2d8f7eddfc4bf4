// Cosh (adv_api/math, asc-devkit include/adv_api/math/cosh.h): cosh(x) = e^(x - ln2) + 0.25 / e^(x - ln2), in float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetCoshMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Cosh接口/Cosh.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "cosh_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void cosh_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Cosh", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Adds"}, {"Exp"}, {"Duplicate"}, {"Div"}, {"Add"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Adds"}, {"Exp"}, {"Duplicate"}, {"Div"}, {"Add"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetCoshMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Cosh", "GetCoshMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 2u : 6u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            constexpr float kNegLn2 = -0.69314718055994530942f;
            const float h = std::exp(x + kNegLn2);  // e^x / 2
            return h + 0.25f / h;
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::cosh_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::cosh_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::cosh_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Cosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::cosh_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
