// SoftMax and AdjustSoftMaxRes (adv_api/activation/softmax.h), ND format.
//
//   SoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dst, sum, max, src, [tmp,] tiling, shapeInfo)
//   SoftMax<T, isReuseSource, isBasicBlock, config>(dst, src, [tmp,] tiling, shapeInfo)
//       per row of [srcM, srcK]: max = rowmax(x), e = exp(x - max), sum = rowsum(e), dst = e / sum;
//       sum and max are written as one 32-byte block per row (the value repeated). half and float;
//       half dst/src may take float sum/max.
//   AdjustSoftMaxRes<T1, T2>(res, max, from, to, shapeInfo) -> bool
//       rows whose max has the bit pattern `from` are set to `to`.
//
// As the device computes it (docs: SoftMax.md, 实现原理; the v220 generic ND implementation):
// half input is cast to float first; the reductions, Sub, Exp and Div run in float, over the
// first oriSrcK elements of a row for the reductions and over all srcK for the element-wise
// steps (the padding columns get exp(pad - max) / sum, which the doc warns of); the rows come
// in tiles of the tiling's splitM (recomputed from the sharedTmpBuffer when the tiling does not
// match the shape, as isCheckTiling does). A half max/sum output is the float value rounded; the
// division uses the float sum.
#pragma once

#include <vector>

#include "../../sage_sim/adv.h"
#include "softmax_tiling.h"
#include "softmax_utils.h"

namespace AscendC {
namespace detail {

// The shape an API call works on, after the defaults: a zero shapeInfo means the tiling's.
struct SmShape {
    uint32_t m, k, oriK;
};

inline SmShape softmax_shape(const SoftMaxTiling& tiling, const SoftMaxShapeInfo& info, uint32_t cfgOriK) {
    SmShape s{info.srcM, info.srcK, info.oriSrcK};
    if (info.srcM == 0 || info.srcK == 0) s = SmShape{tiling.srcM, tiling.srcK, tiling.srcK};
    if (s.oriK == 0 || s.oriK > s.k) s.oriK = s.k;
    if (cfgOriK) s.oriK = cfgOriK < s.k ? cfgOriK : s.k;
    return s;
}

template <typename T>
inline void softmax_shape_check(const char* api, const SmShape& s, const SoftMaxShapeInfo& info,
                                sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (s.m == 0 || s.k == 0) {
        fail("ub-out-of-bounds", loc,
             "%s over [%u, %u]: the shape is empty. Pass SoftMaxShapeInfo{srcM, srcK, oriSrcM, oriSrcK}, or a "
             "tiling filled by SoftMaxTilingFunc for this shape", api, s.m, s.k);
    }
    if (s.k * sizeof(T) % 32 != 0) {
        fail("ub-out-of-bounds", loc,
             "%s with srcK = %u: the last axis must be 32-byte aligned (a multiple of %u elements); pad the row "
             "to srcK = %u and give the real length as oriSrcK", api, s.k, uint32_t(32 / sizeof(T)),
             (s.k * uint32_t(sizeof(T)) + 31) / 32 * 32 / uint32_t(sizeof(T)));
    }
    if (info.oriSrcK > s.k || info.oriSrcM > s.m) {
        fail("ub-out-of-bounds", loc, "%s with SoftMaxShapeInfo{srcM=%u, srcK=%u, oriSrcM=%u, oriSrcK=%u}: the "
             "original shape must fit the padded one", api, info.srcM, info.srcK, info.oriSrcM, info.oriSrcK);
    }
}

// The rows per tile: the tiling's when it was made for this shape, else what the buffer holds.
// Checks the buffer against the documented minimum (and the tiling's own need) first.
template <typename U>
inline uint32_t softmax_rows_per_tile(const char* api, const SmShape& s, const SoftMaxTiling& tiling,
                                      const LocalTensor<uint8_t>* tmp, bool update, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const bool matches = tiling.srcM == s.m && tiling.srcK == s.k && tiling.splitM > 0;
    if (!tmp) return matches ? tiling.splitM : s.m;
    uint64_t need = softmax_sizes::min_bytes(s.k, sizeof(U), update);
    const char* how = "GetSoftMaxMinTmpSize: (32 / sizeof(sum type) + srcK + 64) * 4";
    if (matches && uint64_t(tiling.splitM) * need > need) {
        need = uint64_t(tiling.splitM) * need;
        how = "the tiling's splitM rows of (32 / sizeof(sum type) + srcK + 64) floats, as SoftMaxTilingFunc "
              "planned for its localWorkSpaceSize";
    }
    tmp_check(*tmp, need, api, how, loc);
    if (matches) return tiling.splitM;
    SoftMaxTiling local;
    softmax_sizes::fill(s.m, s.k, sizeof(U), tmp->GetSize(), local, update);
    return local.splitM ? local.splitM : 1;
}

// The instructions one tile of `rows` rows issues (dtype: the float work area).
template <typename T>
inline void softmax_trace(uint32_t rows, const SmShape& s, uint32_t epb, sage::sim::UbRange w,
                          sage::sim::UbRange r, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const uint64_t n = uint64_t(rows) * s.k, nr = uint64_t(rows) * epb;
    if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float16", 2, n, loc, w, r);
    trace_steps({"ReduceMax", "Sub", "Exp", "ReduceSum", "Div"}, "float32", 4, n, loc, w, r);
    trace_steps({"Brcb", "Brcb"}, "float32", 4, nr, loc, w);
    if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float32", 4, n, loc, w);
}

// SoftMax's result, or LogSoftMax's: log10 of it, as Ln then Muls by 1 / ln(10) (LogSoftMax.md, 实现原理 8).
enum class SmOut { Prob, Log10 };
constexpr float kInvLn10 = 0.4342944819f;

// One row: e[j] = exp(x[j] - max) over all k columns, max and sum over the first oriK.
inline void softmax_row(float* e, uint32_t k, uint32_t oriK, float* mx, float* sm) {
    *mx = sage::sim::row_max(e, oriK);
    for (uint32_t j = 0; j < k; ++j) e[j] = std::exp(e[j] - *mx);
    *sm = sage::sim::row_sum(e, oriK);
}

template <typename T, typename U>
inline void softmax_run(const char* api, const LocalTensor<T>& dst, const LocalTensor<U>* sum,
                        const LocalTensor<U>* max, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                        const SoftMaxTiling& tiling, const SoftMaxShapeInfo& info, uint32_t cfgOriK,
                        sage::sim::SrcLoc loc, SmOut out = SmOut::Prob) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] SoftMax takes half or float");
    touch(loc);
    const SmShape s = softmax_shape(tiling, info, cfgOriK);
    softmax_shape_check<T>(api, s, info, loc);
    const uint32_t epb = 32 / sizeof(U);
    const uint64_t n = uint64_t(s.m) * s.k, nr = uint64_t(s.m) * epb;
    vec_src(src, api, n, loc);
    vec_dst(dst, api, n, loc);
    if (sum) vec_dst(*sum, api, nr, loc);
    if (max) vec_dst(*max, api, nr, loc);
    const uint32_t tile = softmax_rows_per_tile<U>(api, s, tiling, tmp, false, loc);
    std::vector<float> e(s.k);
    for (uint32_t r = 0; r < s.m; ++r) {
        for (uint32_t j = 0; j < s.k; ++j) e[j] = float(src.data()[uint64_t(r) * s.k + j]);
        float mx, sm;
        softmax_row(e.data(), s.k, s.oriK, &mx, &sm);
        for (uint32_t j = 0; j < s.k; ++j) {
            const float p = e[j] / sm;
            dst.data()[uint64_t(r) * s.k + j] = down<T>(out == SmOut::Prob ? p : std::log(p) * kInvLn10);
        }
        for (uint32_t j = 0; j < epb; ++j) {
            if (sum) sum->data()[uint64_t(r) * epb + j] = down<U>(sm);
            if (max) max->data()[uint64_t(r) * epb + j] = down<U>(mx);
        }
    }
    ub_mark(dst.range(n));
    if (sum) ub_mark(sum->range(nr));
    if (max) ub_mark(max->range(nr));
    for (uint32_t r = 0; r < s.m; r += tile) {
        softmax_trace<T>(std::min(tile, s.m - r), s, epb, dst.range(n), src.range(n), loc);
        if (out == SmOut::Log10) {
            trace_steps({"Ln", "Muls"}, "float32", 4, uint64_t(std::min(tile, s.m - r)) * s.k, loc, dst.range(n));
        }
    }
}

template <typename T1, typename T2>
inline bool adjust_softmax_res(const LocalTensor<T1>& res, const LocalTensor<T2>& max, uint32_t from, T1 to,
                               const SoftMaxShapeInfo& info, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    const uint32_t epb = 32 / sizeof(T2);
    const uint64_t n = uint64_t(info.srcM) * info.srcK;
    vec_src(max, "AdjustSoftMaxRes", uint64_t(info.srcM) * epb, loc);
    vec_src(res, "AdjustSoftMaxRes", n, loc);
    bool any = false;
    for (uint32_t r = 0; r < info.srcM; ++r) {
        uint32_t bits = 0;
        memcpy(&bits, max.data() + uint64_t(r) * epb, sizeof(T2));
        if (bits != (sizeof(T2) == 2 ? (from & 0xFFFFu) : from)) continue;
        any = true;
        for (uint32_t j = 0; j < info.srcK; ++j) res.data()[uint64_t(r) * info.srcK + j] = to;
    }
    trace_steps({"Compare", "Select"}, dtype_name<T1>(), sizeof(T1), n, loc, res.range(n), max.range(info.srcM));
    return any;
}

}  // namespace detail

// ---- with sum and max, the API allocating its work area ----
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
                               const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                               const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftMax: the NZ data format is not emulated");
    detail::softmax_run<T, T>("SoftMax", dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, tiling,
                              softmaxShapeInfo, config.oriSrcK, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                               const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                               const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftMax: the NZ data format is not emulated");
    detail::softmax_run<half, float>("SoftMax", dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, tiling,
                                     softmaxShapeInfo, config.oriSrcK, loc);
}

// ---- without sum and max ----
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    detail::softmax_run<T, T>("SoftMax", dstTensor, nullptr, nullptr, srcTensor, nullptr, tiling, softmaxShapeInfo,
                              config.oriSrcK, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                               const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    detail::softmax_run<T, T>("SoftMax", dstTensor, nullptr, nullptr, srcTensor, &sharedTmpBuffer, tiling,
                              softmaxShapeInfo, config.oriSrcK, loc);
}

// ---- with sum and max, in a sharedTmpBuffer ----
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
                               const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                               const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                               const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftMax: the NZ data format is not emulated");
    detail::softmax_run<T, T>("SoftMax", dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, tiling,
                              softmaxShapeInfo, config.oriSrcK, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                               const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                               const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                               const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftMax: the NZ data format is not emulated");
    detail::softmax_run<half, float>("SoftMax", dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer,
                                     tiling, softmaxShapeInfo, config.oriSrcK, loc);
}

template <typename T1, typename T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
__aicore__ inline bool AdjustSoftMaxRes(const LocalTensor<T1>& softMaxRes, const LocalTensor<T2>& maxTensor,
                                        const uint32_t from, const T1 to, const SoftMaxShapeInfo& softmaxShapeInfo,
                                        SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] AdjustSoftMaxRes: the NZ data format is not emulated");
    return detail::adjust_softmax_res(softMaxRes, maxTensor, from, to, softmaxShapeInfo, loc);
}

}  // namespace AscendC
