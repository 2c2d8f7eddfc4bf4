// SoftmaxFlash (adv_api/activation/softmaxflash.h), the first flash softmax (the doc marks it to be
// replaced by SoftmaxFlashV2), ND format:
//   SoftmaxFlash<T, isReuseSource, isBasicBlock>(dst, sum, max, src, expMax, inSum, inMax, [sharedTmpBuffer,]
//       tiling, isUpdate = false, shapeInfo = {})
//   T half or float; half dst/src may take float sums and maxes. Per row (SoftmaxFlash.md's Python):
//   without update SoftMax's result (max, e = exp(x - max), sum, dst = e / sum); with update
//   max = max(inMax, rowmax(x)), e = exp(x - max), expMax = exp(inMax - max),
//   sum = expMax * inSum + rowsum(e), then expMax = expMax * inSum / sum and dst = e / sum.
//   Sums and maxes are one 32-byte block per row, expMax one block of T.
//
// As SoftMax: half is cast to float, every step runs in float, reductions over the first oriSrcK
// columns; the sharedTmpBuffer holds at least GetSoftMaxFlashMinTmpSize (the update path needs
// 4 blocks and 2 rows of floats per row), or the tiling's splitM rows when it is for this shape.
#pragma once

#include "softmaxflashv2.h"

namespace AscendC {
namespace detail {

template <typename T, typename U>
inline void flash_row(const FlashV2Args<T, U>& a, const SmShape& s, uint32_t r, bool update, std::vector<float>& e) {
    using namespace sage::sim;
    const uint32_t eu = 32 / sizeof(U), et = 32 / sizeof(T);
    for (uint32_t j = 0; j < s.k; ++j) e[j] = float(a.src.data()[uint64_t(r) * s.k + j]);
    const float rowMax = row_max(e.data(), s.oriK);
    const float inMax = update ? float(a.inMax.data()[uint64_t(r) * eu]) : -INFINITY;
    const float mx = update && inMax > rowMax ? inMax : rowMax;
    for (uint32_t j = 0; j < s.k; ++j) e[j] = std::exp(e[j] - mx);
    float sm = row_sum(e.data(), s.oriK);
    if (update) {
        const float inSum = float(a.inExpSum.data()[uint64_t(r) * eu]);
        const float em = std::exp(inMax - mx);
        sm = em * inSum + sm;
        const float scaled = em * inSum / sm;
        for (uint32_t j = 0; j < et; ++j) a.expMax.data()[uint64_t(r) * et + j] = down<T>(scaled);
    }
    for (uint32_t j = 0; j < s.k; ++j) a.dst.data()[uint64_t(r) * s.k + j] = down<T>(e[j] / sm);
    for (uint32_t j = 0; j < eu; ++j) {
        a.max.data()[uint64_t(r) * eu + j] = down<U>(mx);
        a.expSum.data()[uint64_t(r) * eu + j] = down<U>(sm);
    }
}

template <typename T, typename U>
inline void flash_run(const FlashV2Args<T, U>& a, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                      const SoftMaxShapeInfo& info, bool update, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] SoftmaxFlash takes half or float");
    touch(loc);
    const SmShape s = softmax_shape(tiling, info, 0);
    softmax_shape_check<T>("SoftmaxFlash", s, info, loc);
    flashv2_checks(a, s, update, loc);
    const uint32_t tile = softmax_rows_per_tile<U>("SoftmaxFlash", s, tiling, tmp, update, loc);
    std::vector<float> e(s.k);
    for (uint32_t r = 0; r < s.m; ++r) flash_row(a, s, r, update, e);
    const uint64_t n = uint64_t(s.m) * s.k, eu = 32 / sizeof(U);
    ub_mark(a.dst.range(n)), ub_mark(a.max.range(s.m * eu)), ub_mark(a.expSum.range(s.m * eu));
    if (update) ub_mark(a.expMax.range(uint64_t(s.m) * (32 / sizeof(T))));
    for (uint32_t r = 0; r < s.m; r += tile) {
        const uint32_t rows = std::min(tile, s.m - r);
        softmax_trace<T>(rows, s, eu, a.dst.range(n), a.src.range(n), loc);
        if (update) trace_steps({"Max", "Sub", "Exp", "Mul", "Add", "Div"}, "float32", 4, rows * eu, loc,
                                a.max.range(s.m * eu));
    }
}

}  // namespace detail

#define SAGE_FLASH_TEMPLATE template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
#define SAGE_FLASH_CALL(TT, UU, TMP)                                                                           \
    detail::flash_run<TT, UU>({dstTensor, nullptr, sumTensor, maxTensor, srcTensor, expMaxTensor, inSumTensor, \
                               inMaxTensor},                                                                   \
                              TMP, tiling, softmaxShapeInfo, isUpdate, loc)

SAGE_FLASH_TEMPLATE
__aicore__ inline void SoftmaxFlash(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
                                    const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                                    const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inSumTensor,
                                    const LocalTensor<T>& inMaxTensor, const SoftMaxTiling& tiling,
                                    bool isUpdate = false, const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASH_CALL(T, T, nullptr);
}

SAGE_FLASH_TEMPLATE
__aicore__ inline void SoftmaxFlash(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                                    const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inSumTensor,
                                    const LocalTensor<float>& inMaxTensor, const SoftMaxTiling& tiling,
                                    bool isUpdate = false, const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASH_CALL(half, float, nullptr);
}

SAGE_FLASH_TEMPLATE
__aicore__ inline void SoftmaxFlash(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
                                    const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                                    const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inSumTensor,
                                    const LocalTensor<T>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                    const SoftMaxTiling& tiling, bool isUpdate = false,
                                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASH_CALL(T, T, &sharedTmpBuffer);
}

SAGE_FLASH_TEMPLATE
__aicore__ inline void SoftmaxFlash(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                                    const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inSumTensor,
                                    const LocalTensor<float>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                    const SoftMaxTiling& tiling, bool isUpdate = false,
                                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    SAGE_FLASH_CALL(half, float, &sharedTmpBuffer);
}

#undef SAGE_FLASH_CALL
#undef SAGE_FLASH_TEMPLATE

}  // namespace AscendC
