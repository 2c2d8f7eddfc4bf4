// Log, Log2, Log10 (adv_api/math, asc-devkit include/adv_api/math/log.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Log接口/Log-79.md. On Atlas A2:
//   Log   = Ln, on T itself (one rounding);
//   Log10 = Ln, then Muls by 1/ln(10), both on T: half rounds twice, and the constant is a half too;
//   Log2  = Ln, then Muls by 1/ln(2); half goes through float (Cast, Ln, Muls, Cast) in the
//           temporary buffer GetLog2MaxMinTmpSize sizes.
#pragma once

#include <cmath>

#include "../../sage_sim/adv_math.h"
#include "log_tiling.h"

namespace AscendC {
namespace detail {

constexpr float kLn2Reciprocal = 1.4426950408889634f;
constexpr float kLn10Reciprocal = 0.43429448190325176f;

template <typename T>
inline void log_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Log", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kSteps[] = {{"Ln", true}};
    unary(Plan{"Log", "GetLogMaxMinTmpSize", 0, 0, kSteps}, dst, src, nullptr, count, loc,
          [](float x) -> float { return std::log(x); });
}

template <typename T>
inline void log10_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Log10", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kSteps[] = {{"Ln", true}, {"Muls", true}};
    unary(Plan{"Log10", "GetLog10MaxMinTmpSize", 0, 0, kSteps}, dst, src, nullptr, count, loc,
          [](float x) -> float {
              const float ln = sage::sim::round_as<T>(std::log(x));
              return ln * sage::sim::round_as<T>(kLn10Reciprocal);
          });
}

template <typename T>
inline void log2_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Log2", T, (sage::sim::one_of<T, half, float>()), "half, float")
    static constexpr Step kFloat[] = {{"Ln"}, {"Muls"}};
    static constexpr Step kHalf[] = {{"Cast", true}, {"Ln"}, {"Muls"}, {"Cast", true}};
    uint32_t maxTmp = 0, minTmp = 0;
    GetLog2MaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const bool isFloat = sizeof(T) == sizeof(float);
    const Plan plan{"Log2", "GetLog2MaxMinTmpSize", minTmp, isFloat ? 0u : 4u,
                    isFloat ? Steps(kFloat) : Steps(kHalf)};
    unary(plan, dst, src, isFloat ? nullptr : tmp, count, loc,
          [](float x) -> float { return std::log(x) * kLn2Reciprocal; });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount,
                           SAGE_LOC)
{
    detail::log_run(dstTensor, srcTensor, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::log_run(dstTensor, srcTensor, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount,
                             SAGE_LOC)
{
    detail::log10_run(dstTensor, srcTensor, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::log10_run(dstTensor, srcTensor, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, SAGE_LOC)
{
    detail::log2_run(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::log2_run(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount,
                            SAGE_LOC)
{
    detail::log2_run(dstTensor, srcTensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC)
{
    detail::log2_run(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
