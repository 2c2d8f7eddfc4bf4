// Fmod (adv_api/math, asc-devkit include/adv_api/math/fmod.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Fmod接口/Fmod.md: the remainder of a / b with the sign of a, on
// Atlas A2 as a - trunc(a / b) * b in float, one vector op at a time (Div, Trunc, Mul, Sub; half
// cast in and out), so a quotient that rounds across an integer gives a remainder off by b, as on
// the device. FmodConfig only matters on Ascend 950 and is accepted and ignored.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "fmod_tiling.h"

namespace AscendC {

constexpr uint32_t FMOD_ITERATION_NUM_MAX = 11;
enum class FmodAlgo { NORMAL = 0, ITERATION_COMPENSATION = 1 };
struct FmodConfig {
    FmodAlgo algo = FmodAlgo::NORMAL;
    uint32_t iterationNum = FMOD_ITERATION_NUM_MAX;
};
constexpr FmodConfig DEFAULT_FMOD_CONFIG = {FmodAlgo::NORMAL, FMOD_ITERATION_NUM_MAX};

namespace detail {

inline float fmod_doc(float a, float b) {
    const float q = std::trunc(a / b);
    return a - q * b;
}

template <typename T>
inline void fmod_run(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                     const LocalTensor<uint8_t>* tmp, uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Fmod", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Div"}, {"Cast"}, {"Mul"}, {"Sub"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Cast", true}, {"Div"}, {"Cast"}, {"Mul"}, {"Sub"},
                                     {"Cast", true}};
    uint32_t maxTmp = 0, minTmp = 0, nodes = 0, extra = 0;
    GetFmodMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    GetFmodTmpBufferFactorSize(sizeof(T), nodes, extra);
    const Plan plan{"Fmod", "GetFmodMaxMinTmpSize", minTmp, nodes * uint32_t(sizeof(T)),
                    sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf)};
    binary<T, float>(plan, dst, src0, src1, tmp, count, loc, fmod_doc);
}

}  // namespace detail

template <typename T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
__aicore__ inline void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                            const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                            const uint32_t calCount, SAGE_LOC)
{
    detail::fmod_run(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
__aicore__ inline void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                            const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::fmod_run(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, src0Tensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
__aicore__ inline void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                            const LocalTensor<T>& src1Tensor, const uint32_t calCount, SAGE_LOC)
{
    detail::fmod_run(dstTensor, src0Tensor, src1Tensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
__aicore__ inline void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                            const LocalTensor<T>& src1Tensor, SAGE_LOC)
{
    detail::fmod_run(dstTensor, src0Tensor, src1Tensor, nullptr, src0Tensor.GetSize(), loc);
}

}  // namespace AscendC
