// Round (adv_api/math, asc-devkit include/adv_api/math/round.h): round to the nearest integer, a tie (x.5) to the even one (CAST_RINT), half through float.
// Rounded once to T at the end, as the final Cast does. half and float; the temporary buffer
// (sharedTmpBuffer, or the free UB in the forms without one) must hold GetRoundMaxMinTmpSize's
// minimum. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Round接口/Round.md.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "round_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void round_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Round", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Cast"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Cast"}, {"Cast", true}};
    const Steps steps = sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf);
    uint32_t maxTmp = 0, minTmp = 0;
    GetRoundMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Round", "GetRoundMaxMinTmpSize", minTmp, uint32_t(sizeof(T) * (sizeof(T) == sizeof(float) ? 1u : 1u)), steps};
    unary(plan, dst, src, tmp, count, loc, [](float x) -> float {
            return std::nearbyint(x);  // the default rounding: a tie goes to the even integer
        });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Round(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    detail::round_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}


template <typename T, bool isReuseSource = false>
__aicore__ inline void Round(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,
                           SAGE_LOC)
{
    detail::round_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

}  // namespace AscendC
