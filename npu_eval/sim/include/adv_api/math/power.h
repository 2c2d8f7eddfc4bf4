// Power (adv_api/math, asc-devkit include/adv_api/math/power.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Power接口/Power.md: dst = base ^ exp in three forms
// (tensor^tensor, tensor^scalar, scalar^tensor), half and float. On Atlas A2, in float (half cast
// in and out): r = e^(exp * ln|base|); then 1 where exp == 0 or base == 1; a negative base with an
// integral exponent (|exp - rint(exp)| < 1e-8) takes the sign (-1)^rint(|exp|), and with any other
// exponent gives NaN. PowerConfig (its algo) only matters on Ascend 950 and is accepted and ignored.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "power_tiling.h"

namespace AscendC {

enum class PowerAlgo { INTRINSIC = 0, DOUBLE_FLOAT_TECH };
struct PowerConfig {
    PowerAlgo algo = PowerAlgo::INTRINSIC;
};
constexpr PowerConfig defaultPowerConfig = {PowerAlgo::INTRINSIC};

namespace detail {

inline float power_doc(float base, float e) {
    if (e == 0.0f || base == 1.0f) return 1.0f;
    const float r = std::exp(e * std::log(std::fabs(base)));
    if (!(base < 0.0f)) return r;
    const float ae = std::fabs(e);
    const float re = std::nearbyint(ae);
    if (std::fabs(ae - re) >= 0.00000001f) return NAN;
    const float odd = re - std::floor(re * 0.5f) * 2.0f;
    return r * std::nearbyint(odd * -2.0f + 1.0f);
}

// One Power call: base and exponent each a tensor or a scalar (a null tensor pointer).
template <typename T>
inline void power_run(const LocalTensor<T>& dst, const LocalTensor<T>* base, T baseScalar, const LocalTensor<T>* ex,
                      T exScalar, const LocalTensor<uint8_t>* tmp, uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim;
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Power", T, (one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Abs"}, {"Ln"}, {"Mul"}, {"Exp"}, {"Abs"}, {"Cast"}, {"Muls"}, {"Cast"},
                                      {"Muls"}, {"Sub"}, {"Muls"}, {"Adds"}, {"Cast"}, {"CompareScalar"},
                                      {"CompareScalar"}, {"Or"}, {"CompareScalar"}, {"And"}, {"Select"},
                                      {"Select"}, {"Mul"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Cast", true}, {"Abs"}, {"Ln"}, {"Mul"}, {"Exp"}, {"Abs"},
                                     {"Cast"}, {"Muls"}, {"Cast"}, {"Muls"}, {"Sub"}, {"Muls"}, {"Adds"},
                                     {"Cast"}, {"CompareScalar"}, {"CompareScalar"}, {"Or"}, {"CompareScalar"},
                                     {"And"}, {"Select"}, {"Select"}, {"Mul"}, {"Cast", true}};
    const TensorShape tensor({int64_t(count)}), scalar({1});
    uint32_t maxTmp = 0, minTmp = 0;
    GetPowerMaxMinTmpSize(base ? tensor : scalar, ex ? tensor : scalar, false, sizeof(T), false, maxTmp, minTmp);
    const uint32_t proc = power_proc(base && ex, false, sizeof(T));
    const Plan plan{"Power", "GetPowerMaxMinTmpSize", minTmp, proc * uint32_t(sizeof(T)),
                    sizeof(T) == sizeof(float) ? Steps(kFloat) : Steps(kHalf)};
    touch(loc);
    if (base) vec_src(*base, "Power", count, loc);
    if (ex) vec_src(*ex, "Power", count, loc);
    vec_dst(dst, "Power", count, loc);
    Tmp t = take_tmp("Power", plan.host_fn, tmp, count, plan.min_tmp, loc);
    for (uint32_t i = 0; i < count; ++i) {
        const float b = float(base ? base->data()[i] : baseScalar);
        const float e = float(ex ? ex->data()[i] : exScalar);
        dst.data()[i] = down<T>(power_doc(b, e));
    }
    ub_mark(dst.range(count));
    done(t);
    trace_steps<T>(plan.steps, count, chunk_elems<T>(t.bytes, plan.tmp_per_elem, count), loc, dst.range(count),
                   base ? base->range(count) : UbRange{}, ex ? ex->range(count) : UbRange{}, t.range);
}

}  // namespace detail

// Power(dst, src0Tensor, src1Tensor)
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                             const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             uint32_t calCount, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), &src1Tensor, T(), &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                             const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), &src1Tensor, T(), &sharedTmpBuffer, src0Tensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                             const LocalTensor<T>& src1Tensor, uint32_t calCount, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), &src1Tensor, T(), nullptr, calCount, loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                             const LocalTensor<T>& src1Tensor, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), &src1Tensor, T(), nullptr, src0Tensor.GetSize(), loc);
}

// Power(dst, src0Tensor, src1Scalar)
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                             const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), nullptr, src1Scalar, &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                             const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), nullptr, src1Scalar, &sharedTmpBuffer, src0Tensor.GetSize(),
                         loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                             uint32_t calCount, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), nullptr, src1Scalar, nullptr, calCount, loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                             SAGE_LOC)
{
    detail::power_run<T>(dstTensor, &src0Tensor, T(), nullptr, src1Scalar, nullptr, src0Tensor.GetSize(), loc);
}

// Power(dst, src0Scalar, src1Tensor)
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                             const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, nullptr, src0Scalar, &src1Tensor, T(), &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                             const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, nullptr, src0Scalar, &src1Tensor, T(), &sharedTmpBuffer, src1Tensor.GetSize(),
                         loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                             uint32_t calCount, SAGE_LOC)
{
    detail::power_run<T>(dstTensor, nullptr, src0Scalar, &src1Tensor, T(), nullptr, calCount, loc);
}
template <typename T, bool isReuseSource = false, const PowerConfig& config = defaultPowerConfig>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                             SAGE_LOC)
{
    detail::power_run<T>(dstTensor, nullptr, src0Scalar, &src1Tensor, T(), nullptr, src1Tensor.GetSize(), loc);
}

}  // namespace AscendC
