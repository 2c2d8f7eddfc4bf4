// Sign (adv_api/math, asc-devkit include/adv_api/math/sign.h): 1 for x > 0, -1 for x < 0, else 0 (NaN too): two Compares and Selects on T.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetSignMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Sign接口/Sign.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "sign_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void sign_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Sign", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kSteps[] = {{"Duplicate", true}, {"Compares", true}, {"Compares", true}, {"Duplicate", true}, {"Select", true}, {"Duplicate", true}, {"Select", true}, {"Add", true}};
    const Steps steps = kSteps;
    uint32_t maxTmp = 0, minTmp = 0;
    GetSignMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Sign", "GetSignMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * 3u), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);  // NaN compares false both ways: 0
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::sign_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::sign_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::sign_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::sign_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
