// SoftmaxFlashV2 (adv_api/activation/softmaxflashv2.h), the FlashAttention-2 softmax step, ND format:
//   SoftmaxFlashV2<T, isUpdate, isReuseSource, isBasicBlock, isDataFormatNZ, config>(
//       dst, [outReduceMax,] expSum, max, src, expMax, inExpSum, inMax, [sharedTmpBuffer,] tiling, shapeInfo)
//   per row: without update, max = rowmax(x), dst = exp(x - max), expSum = rowsum(dst);
//   with update, max = max(inMax, rowmax(x)), dst = exp(x - max), expMax = exp(inMax - max),
//   expSum = expMax * inExpSum + rowsum(dst). outReduceMax is rowmax(x). Sums and maxes are one
//   32-byte block per row; half dst/src may take float sums and maxes (expMax then stays half).
//
// As the device computes it (docs: SoftmaxFlashV2.md, 实现原理): half is cast to float, all steps
// run in float, the rounded results are stored; reductions as SoftMax's. The sharedTmpBuffer holds
// at least GetSoftMaxFlashV2MinTmpSize (and the tiling's planned rows when it is for this shape).
#pragma once

#include "softmax.h"

namespace AscendC {
namespace detail {

// The tensors of one SoftmaxFlashV2 call: T = dst/src/expMax type, U = sum/max type.
template <typename T, typename U>
struct FlashV2Args {
    const LocalTensor<T>& dst;
    const LocalTensor<U>* reduceMax;
    const LocalTensor<U>& expSum;
    const LocalTensor<U>& max;
    const LocalTensor<T>& src;
    const LocalTensor<T>& expMax;
    const LocalTensor<U>& inExpSum;
    const LocalTensor<U>& inMax;
};

template <typename T, typename U>
inline void flashv2_checks(const FlashV2Args<T, U>& a, const SmShape& s, bool update, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const char* api = "SoftmaxFlashV2";
    const uint64_t n = uint64_t(s.m) * s.k, nr = uint64_t(s.m) * (32 / sizeof(U));
    vec_src(a.src, api, n, loc);
    vec_dst(a.dst, api, n, loc);
    vec_dst(a.expSum, api, nr, loc);
    vec_dst(a.max, api, nr, loc);
    if (a.reduceMax) vec_dst(*a.reduceMax, api, nr, loc);
    if (!update) return;
    vec_src(a.inExpSum, api, nr, loc);
    vec_src(a.inMax, api, nr, loc);
    vec_dst(a.expMax, api, uint64_t(s.m) * (32 / sizeof(T)), loc);
}

template <typename T, typename U>
inline uint32_t flashv2_rows_per_tile(const SmShape& s, const SoftMaxTiling& tiling, const LocalTensor<uint8_t>* tmp,
                                      bool basicBlock, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const bool matches = tiling.srcM == s.m && tiling.srcK == s.k && tiling.splitM > 0;
    if (!tmp) return matches ? tiling.splitM : s.m;
    const bool basic = softmax_sizes::flashv2_basic(s.k, basicBlock) && s.m % 8 == 0;
    const uint64_t row = uint64_t(softmax_sizes::flashv2_row_floats(s.k, sizeof(T), sizeof(U), basic)) * 4;
    uint64_t need = softmax_sizes::flashv2_min_bytes(s.m, s.k, sizeof(T), sizeof(U), basicBlock, false);
    const char* how = "GetSoftMaxFlashV2MinTmpSize";
    if (matches && tiling.splitM * row > need) {
        need = tiling.splitM * row;
        how = "the tiling's splitM rows, as SoftMaxFlashV2TilingFunc planned for its localWorkSpaceSize";
    }
    tmp_check(*tmp, need, "SoftmaxFlashV2", how, loc);
    if (matches) return tiling.splitM;
    const uint64_t fit = tmp->GetSize() / row;
    return fit ? uint32_t(std::min<uint64_t>(fit, s.m)) : 1;
}

template <typename T, typename U>
inline void flashv2_row(const FlashV2Args<T, U>& a, const SmShape& s, uint32_t r, bool update, std::vector<float>& e) {
    using namespace sage::sim;
    const uint32_t eu = 32 / sizeof(U), et = 32 / sizeof(T);
    for (uint32_t j = 0; j < s.k; ++j) e[j] = float(a.src.data()[uint64_t(r) * s.k + j]);
    const float rowMax = row_max(e.data(), s.oriK);
    const float inMax = update ? float(a.inMax.data()[uint64_t(r) * eu]) : -INFINITY;
    const float mx = update && inMax > rowMax ? inMax : rowMax;
    for (uint32_t j = 0; j < s.k; ++j) e[j] = std::exp(e[j] - mx);
    float sm = row_sum(e.data(), s.oriK);
    if (update) {
        const float expMax = std::exp(inMax - mx);
        sm = expMax * float(a.inExpSum.data()[uint64_t(r) * eu]) + sm;
        for (uint32_t j = 0; j < et; ++j) a.expMax.data()[uint64_t(r) * et + j] = down<T>(expMax);
    }
    for (uint32_t j = 0; j < s.k; ++j) a.dst.data()[uint64_t(r) * s.k + j] = down<T>(e[j]);
    for (uint32_t j = 0; j < eu; ++j) {
        a.max.data()[uint64_t(r) * eu + j] = down<U>(mx);
        a.expSum.data()[uint64_t(r) * eu + j] = down<U>(sm);
        if (a.reduceMax) a.reduceMax->data()[uint64_t(r) * eu + j] = down<U>(rowMax);
    }
}

template <typename T, typename U>
inline void flashv2_run(const FlashV2Args<T, U>& a, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                        const SoftMaxShapeInfo& info, bool update, bool basicBlock, uint32_t cfgOriK,
                        sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] SoftmaxFlashV2 takes half or float");
    touch(loc);
    const SmShape s = softmax_shape(tiling, info, cfgOriK);
    softmax_shape_check<T>("SoftmaxFlashV2", s, info, loc);
    flashv2_checks(a, s, update, loc);
    const uint32_t tile = flashv2_rows_per_tile<T, U>(s, tiling, tmp, basicBlock, loc);
    std::vector<float> e(s.k);
    for (uint32_t r = 0; r < s.m; ++r) flashv2_row(a, s, r, update, e);
    const uint64_t n = uint64_t(s.m) * s.k, eu = 32 / sizeof(U);
    ub_mark(a.dst.range(n));
    ub_mark(a.max.range(s.m * eu));
    ub_mark(a.expSum.range(s.m * eu));
    if (a.reduceMax) ub_mark(a.reduceMax->range(s.m * eu));
    if (update) ub_mark(a.expMax.range(uint64_t(s.m) * (32 / sizeof(T))));
    for (uint32_t r = 0; r < s.m; r += tile) {
        const uint64_t rows = std::min(tile, s.m - r), rn = rows * s.k;
        if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float16", 2, rn, loc, a.dst.range(n), a.src.range(n));
        trace_steps({"ReduceMax", "Sub", "Exp", "ReduceSum"}, "float32", 4, rn, loc, a.dst.range(n), a.src.range(n));
        if (update) trace_steps({"Max", "Sub", "Exp", "Mul", "Add"}, "float32", 4, rows * eu, loc, a.max.range(n));
        if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float32", 4, rn, loc, a.dst.range(n));
    }
}

}  // namespace detail

#define SAGE_FLASHV2_TEMPLATE                                                                          \
    template <typename T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false, \
              bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define SAGE_FLASHV2_CALL(TT, UU, REDUCE, TMP)                                                                     \
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftmaxFlashV2: the NZ data format is not emulated");      \
    detail::flashv2_run<TT, UU>({dstTensor, REDUCE, expSumTensor, maxTensor, srcTensor, expMaxTensor, inExpSumTensor, \
                                 inMaxTensor},                                                                     \
                                TMP, tiling, softmaxShapeInfo, isUpdate, isBasicBlock, config.oriSrcK, loc)

SAGE_FLASHV2_TEMPLATE
__aicore__ inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor,
                                      const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                                      const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inExpSumTensor,
                                      const LocalTensor<T>& inMaxTensor, const SoftMaxTiling& tiling,
                                      const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASHV2_CALL(T, T, nullptr, nullptr);
}

SAGE_FLASHV2_TEMPLATE
__aicore__ inline void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                                      const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                                      const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                                      const LocalTensor<float>& inMaxTensor, const SoftMaxTiling& tiling,
                                      const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASHV2_CALL(half, float, nullptr, nullptr);
}

SAGE_FLASHV2_TEMPLATE
__aicore__ inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor,
                                      const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                                      const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inExpSumTensor,
                                      const LocalTensor<T>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                      const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                      SAGE_LOC) {
    SAGE_FLASHV2_CALL(T, T, nullptr, &sharedTmpBuffer);
}

SAGE_FLASHV2_TEMPLATE
__aicore__ inline void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                                      const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                                      const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                                      const LocalTensor<float>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                      const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                      SAGE_LOC) {
    SAGE_FLASHV2_CALL(half, float, nullptr, &sharedTmpBuffer);
}

SAGE_FLASHV2_TEMPLATE
__aicore__ inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& outReduceMax,
                                      const LocalTensor<T>& expSumTensor, const LocalTensor<T>& maxTensor,
                                      const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                                      const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor,
                                      const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                      SAGE_LOC) {
    SAGE_FLASHV2_CALL(T, T, &outReduceMax, nullptr);
}

SAGE_FLASHV2_TEMPLATE
__aicore__ inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& outReduceMax,
                                      const LocalTensor<T>& expSumTensor, const LocalTensor<T>& maxTensor,
                                      const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                                      const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor,
                                      const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                                      const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASHV2_CALL(T, T, &outReduceMax, &sharedTmpBuffer);
}

#undef SAGE_FLASHV2_CALL
#undef SAGE_FLASHV2_TEMPLATE

}  // namespace AscendC
