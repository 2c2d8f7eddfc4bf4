// ClampMax and ClampMin (adv_api/math, asc-devkit include/adv_api/math/clamp.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Clamp接口/ClampMax.md and ClampMin.md: elements above (ClampMax)
// or below (ClampMin) the scalar become the scalar, by a CompareScalar into the byte mask in the
// temporary buffer and a Select; NaN compares false and stays NaN. half and float. (The tensor-bound
// Clamp of the same page family is not supported on Atlas A2.)
#pragma once

#include "../../sage_sim/adv_math.h"
#include "clamp_tiling.h"

namespace AscendC {
namespace detail {

template <typename T, bool isMax>
inline void clamp_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                      const T scalar, uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("ClampMax/ClampMin", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kSteps[] = {{"CompareScalar", true}, {"Select", true}};
    uint32_t maxTmp = 0, minTmp = 0;
    GetClampMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{isMax ? "ClampMax" : "ClampMin", "GetClampMaxMinTmpSize", minTmp, 1, kSteps};
    const float s = float(scalar);
    unary(plan, dst, src, tmp, count, loc, [s](float x) -> float {
        if (isMax) return x > s ? s : x;
        return x < s ? s : x;
    });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void ClampMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                                const LocalTensor<uint8_t>& sharedTmpBuffer, const T scalar, const uint32_t calCount,
                                SAGE_LOC)
{
    detail::clamp_run<T, true>(dstTensor, srcTensor, &sharedTmpBuffer, scalar, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void ClampMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const T scalar,
                                const uint32_t calCount, SAGE_LOC)
{
    detail::clamp_run<T, true>(dstTensor, srcTensor, nullptr, scalar, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void ClampMin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                                const LocalTensor<uint8_t>& sharedTmpBuffer, const T scalar, const uint32_t calCount,
                                SAGE_LOC)
{
    detail::clamp_run<T, false>(dstTensor, srcTensor, &sharedTmpBuffer, scalar, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void ClampMin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const T scalar,
                                const uint32_t calCount, SAGE_LOC)
{
    detail::clamp_run<T, false>(dstTensor, srcTensor, nullptr, scalar, calCount, loc);
}

}  // namespace AscendC
