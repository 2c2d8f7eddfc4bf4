// The high-level Axpy (adv_api/math, asc-devkit include/adv_api/math/axpy.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Axpy接口/Axpy-80.md:
//   Axpy<T, U, isReuseSource>(dst, src, scalarValue, sharedTmpBuffer, calCount): dst = dst + src * scalar
// T (dst) and U (src, scalar) are half or float; a half source is cast to float, multiplied and
// added in float, and the sum rounded once to T. The basic Axpy (no sharedTmpBuffer) is in
// basic_api/kernel_operator_vec_ternary_scalar_intf.h.
#pragma once

#include "../../sage_sim/adv_math.h"
#include "axpy_tiling.h"

namespace AscendC {

template <typename T, typename U, bool isReuseSource = false>
__aicore__ inline void Axpy(const LocalTensor<T>& dstTensor, const LocalTensor<U>& srcTensor, const U scalarValue,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC)
{
    using namespace sage::sim;
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Axpy", T, (one_of<T, half, float>()), "half, float")
    SAGE_DTYPE_GATE("Axpy", U, (one_of<U, half, float>()), "half, float")
    static_assert(sizeof(T) >= sizeof(U), "[dtype-unsupported] Axpy takes half->half, half->float or float->float");
    touch(loc);
    vec_src(dstTensor, "Axpy", calCount, loc);  // dst is read: the sum accumulates into it
    uint32_t maxTmp = 0, minTmp = 0;
    GetAxpyMaxMinTmpSize(TensorShape({int64_t(calCount)}), sizeof(U), isReuseSource, maxTmp, minTmp);
    static constexpr Step kFloat[] = {{"Axpy"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Muls"}, {"Add"}, {"Cast", true}};
    const bool isFloat = sizeof(U) == sizeof(float);
    const Plan plan{"Axpy", "GetAxpyMaxMinTmpSize", minTmp, isFloat ? 0u : 4u * uint32_t(sizeof(U)),
                    isFloat ? Steps(kFloat) : Steps(kHalf)};
    // The engine maps src to dst; the accumulation reads the old dst, so keep a copy of it.
    std::vector<float> old(calCount);
    for (uint32_t i = 0; i < calCount && i < dstTensor.GetSize(); ++i) old[i] = float(dstTensor.data()[i]);
    const float a = float(scalarValue);
    uint32_t i = 0;
    unary(plan, dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc, [&](float x) -> float {
        const float prod = sizeof(T) == sizeof(U) ? round_as<T>(x * a) : x * a;
        return old[i++] + prod;
    });
}

}  // namespace AscendC
