// CumSum (adv_api/math, asc-devkit include/adv_api/math/cumsum.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/CumSum接口/CumSum.md: running sums over an {outter, inner}
// tensor, down the rows (first axis: dst[i] = dst[i-1] + src[i], row by row) or along each row
// (last axis, through two transposes). half accumulates in float and rounds each sum once to half;
// float adds in float. With config.outputLastRow the last row of dst is also copied to lastRowTensor.
// The line-by-line algorithm is Atlas A2's (Sklansky is Ascend 950's only).
#pragma once

#include <algorithm>
#include <vector>

#include "../../sage_sim/adv_math.h"
#include "cumsum_tiling.h"

namespace AscendC {

enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
    CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, false, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};
};

namespace detail {

// The instructions: half's casts in and out, then per row (first axis) or per 16-row group and
// column (last axis, between its two transposes) one Add.
template <typename T>
inline void cumsum_trace(bool lastAxis, const CumSumInfo& info, sage::sim::SrcLoc loc, sage::sim::UbRange d,
                         sage::sim::UbRange s) {
    using namespace sage::sim::advmath;
    static constexpr Step kCast[] = {{"Cast", true}};
    static constexpr Step kAdd[] = {{"Add"}};
    static constexpr Step kTranspose[] = {{"TransDataTo5HD", true}};
    const uint32_t n = info.outter * info.inner;
    if (sizeof(T) == 2) trace_steps<T>(kCast, n, n, loc, {}, s, {}, {});
    if (!lastAxis) {
        for (uint32_t r = 1; r < info.outter; ++r) trace_steps<T>(kAdd, info.inner, info.inner, loc, {}, {}, {}, {});
    } else {
        for (uint32_t g = 0; g < info.outter; g += 16) {
            const uint32_t rows = std::min(16u, info.outter - g);
            trace_steps<T>(kTranspose, rows * info.inner, rows * info.inner, loc, {}, {}, {}, {});
            for (uint32_t c = 1; c < info.inner; ++c) trace_steps<T>(kAdd, rows, rows, loc, {}, {}, {}, {});
            trace_steps<T>(kTranspose, rows * info.inner, rows * info.inner, loc, {}, {}, {}, {});
        }
    }
    if (sizeof(T) == 2) trace_steps<T>(kCast, n, n, loc, d, {}, {}, {});
}

template <typename T, const CumSumConfig& config>
inline void cumsum_run(const LocalTensor<T>& dst, const LocalTensor<T>& lastRow, const LocalTensor<T>& src,
                       const LocalTensor<uint8_t>* tmp, const CumSumInfo& info, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("CumSum", T, (one_of<T, half, float>()), "half, float")
    touch(loc);
    if (info.outter == 0 || info.inner == 0 || (info.inner * sizeof(T)) % 32 != 0) {
        fail("ub-out-of-bounds", loc,
             "CumSum with CumSumInfo{outter=%u, inner=%u}: both must be at least 1 and inner a whole number of "
             "32-byte blocks (a multiple of %u elements)", info.outter, info.inner, uint32_t(32 / sizeof(T)));
    }
    const uint32_t n = info.outter * info.inner;
    vec_src(src, "CumSum", n, loc);
    vec_dst(dst, "CumSum", n, loc);
    if (config.outputLastRow) vec_dst(lastRow, "CumSum", info.inner, loc);
    uint32_t maxTmp = 0, minTmp = 0;
    GetCumSumMaxMinTmpSize(TensorShape({int64_t(info.outter), int64_t(info.inner)}), sizeof(T), config.isLastAxis,
                           false, maxTmp, minTmp);
    Tmp t = take_tmp("CumSum", "GetCumSumMaxMinTmpSize", tmp, n, minTmp, loc);
    std::vector<float> acc(n);
    for (uint32_t i = 0; i < n; ++i) acc[i] = float(src.data()[i]);
    for (uint32_t r = 0; r < info.outter; ++r) {
        for (uint32_t c = 0; c < info.inner; ++c) {
            const uint32_t i = r * info.inner + c;
            if (config.isLastAxis && c > 0) acc[i] = acc[i - 1] + acc[i];
            if (!config.isLastAxis && r > 0) acc[i] = acc[i - info.inner] + acc[i];
        }
    }
    for (uint32_t i = 0; i < n; ++i) dst.data()[i] = down<T>(acc[i]);
    ub_mark(dst.range(n));
    if (config.outputLastRow) {
        for (uint32_t c = 0; c < info.inner; ++c) lastRow.data()[c] = dst.data()[(info.outter - 1) * info.inner + c];
        ub_mark(lastRow.range(info.inner));
    }
    done(t);
    cumsum_trace<T>(config.isLastAxis, info, loc, dst.range(n), src.range(n));
}

}  // namespace detail

template <typename T, const CumSumConfig& config = defaultCumSumConfig>
__aicore__ inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                              LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo, SAGE_LOC)
{
    detail::cumsum_run<T, config>(dstTensor, lastRowTensor, srcTensor, &sharedTmpBuffer, cumSumInfo, loc);
}

template <typename T, const CumSumConfig& config = defaultCumSumConfig>
__aicore__ inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                              const CumSumInfo& cumSumInfo, SAGE_LOC)
{
    detail::cumsum_run<T, config>(dstTensor, lastRowTensor, srcTensor, nullptr, cumSumInfo, loc);
}

}  // namespace AscendC
