// SoftmaxFlashV3 (adv_api/activation/softmaxflashv3.h), the Softmax PASA step, ND format, Atlas A2:
//   SoftmaxFlashV3<T = half, U = float, isUpdate, isReuseSource, isBasicBlock, isDataFormatNZ, config>(
//       dst, mean, expSum, max, src, expMax, inMean, inExpSum, inMax, [sharedTmpBuffer,] tiling, params)
//   Rows of srcK >= 512 halves (a multiple of 64), srcM a multiple of 8, splitMeanCnt 8. mean,
//   expSum, max and their inputs hold one 32-byte block per row (8 floats), expMax 16 halves.
//
// As the device computes it (docs: SoftmaxFlashV3.md, its Python pseudo code; the v220
// implementation), per row in float (x = the row cast to float, scalar = alpha / (1 - alpha)):
//   1. 64 column sums: BlockReduceSum of the first 512 elements (one sum per 8 consecutive),
//      then each further group of 64 added lane by lane; 8 local means: the 8 sums of 8 of those
//      (BlockReduceSum), times 1 / baseK (baseK = srcK / 8); rowMean = their sum times 1/8.
//      So local mean j covers elements 64j..64j+63 and, past 512, the lanes 8j..8j+7 of every
//      further 64 - not the j-th contiguous eighth of the row.
//   2. the j-th contiguous eighth of x (baseK elements) is lowered by (rowMean - localMean_j) * scalar;
//   3. mean = rowMean, or with update (inMean * (loopCnt - 1) + rowMean) * (1 / loopCnt);
//   4. shiftCurr = (rowMean - mean) * scalar; max = rowmax(x) + shiftCurr; with update,
//      shiftPrev = (inMean - mean) * scalar, max = max(max, inMax + shiftPrev) and
//      expMax = exp(inMax - max + shiftPrev);
//   5. dst = exp(x - (max - shiftCurr)) rounded to half; expSum = rowsum of the float exps (plus
//      expMax * inExpSum with update).
// The results may share their inputs' tensors (mean with inMean, ...): each row reads its inputs first.
// The sharedTmpBuffer holds at least one row (GetSoftMaxFlashV3MaxMinTmpSize's minimum) and the
// tiling's splitM rows when the tiling is for this shape.
#pragma once

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv_math.h"
#include "softmax.h"

namespace AscendC {
namespace detail {

template <typename T, typename U>
struct FlashV3Args {
    const LocalTensor<T>& dst;
    const LocalTensor<U>& mean;
    const LocalTensor<U>& expSum;
    const LocalTensor<U>& max;
    const LocalTensor<T>& src;
    const LocalTensor<T>& expMax;
    const LocalTensor<U>& inMean;
    const LocalTensor<U>& inExpSum;
    const LocalTensor<U>& inMax;
};

struct FlashV3Row {
    float mean, expSum, max, expMax;
};

// Steps 1 and 2 on one row: returns rowMean and shifts x in place.
inline float flashv3_center(std::vector<float>& x, uint32_t k, float scalar) {
    float lanes[64], local[8], blk[8];
    for (uint32_t j = 0; j < 64; ++j) {
        for (uint32_t t = 0; t < 8; ++t) blk[t] = x[8 * j + t];
        lanes[j] = sage::sim::tree_sum<float>(blk, 8);
    }
    for (uint32_t r = 512; r + 64 <= k; r += 64) {
        for (uint32_t l = 0; l < 64; ++l) lanes[l] = x[r + l] + lanes[l];
    }
    const uint32_t baseK = k / 8;
    const float inv = 1.0f / float(baseK);
    for (uint32_t j = 0; j < 8; ++j) {
        for (uint32_t t = 0; t < 8; ++t) blk[t] = lanes[8 * j + t];
        local[j] = sage::sim::tree_sum<float>(blk, 8) * inv;
    }
    for (uint32_t t = 0; t < 8; ++t) blk[t] = local[t];
    const float rowMean = sage::sim::tree_sum<float>(blk, 8) * 0.125f;
    for (uint32_t j = 0; j < 8; ++j) {
        const float shift = (rowMean - local[j]) * scalar;
        for (uint32_t t = 0; t < baseK; ++t) x[j * baseK + t] -= shift;
    }
    return rowMean;
}

template <typename T, typename U>
inline void flashv3_row(const FlashV3Args<T, U>& a, uint32_t k, uint32_t r, const SoftMaxParams& p, bool update,
                        std::vector<float>& x) {
    using namespace sage::sim;
    const float scalar = p.alpha / (1.0f - p.alpha);
    const uint64_t at = uint64_t(r) * k, b = uint64_t(r) * 8;
    const float inMean = update ? float(a.inMean.data()[b]) : 0.0f, inMax = update ? float(a.inMax.data()[b]) : 0.0f,
                inSum = update ? float(a.inExpSum.data()[b]) : 0.0f;
    for (uint32_t j = 0; j < k; ++j) x[j] = float(a.src.data()[at + j]);
    const float rowMean = flashv3_center(x, k, scalar);
    FlashV3Row o{rowMean, 0.0f, 0.0f, 0.0f};
    if (update) o.mean = (inMean * (float(p.loopCnt) - 1.0f) + rowMean) * (1.0f / float(p.loopCnt));
    const float shiftCurr = (rowMean - o.mean) * scalar;
    o.max = row_max(x.data(), k) + shiftCurr;
    if (update) {
        const float shiftPrev = (inMean - o.mean) * scalar, prev = inMax + shiftPrev;
        o.max = o.max > prev ? o.max : prev;
        o.expMax = std::exp(inMax - o.max + shiftPrev);
    }
    const float m2 = o.max - shiftCurr;
    for (uint32_t j = 0; j < k; ++j) x[j] = std::exp(x[j] - m2);
    o.expSum = row_sum(x.data(), k) + (update ? o.expMax * inSum : 0.0f);
    for (uint32_t j = 0; j < k; ++j) a.dst.data()[at + j] = down<T>(x[j]);
    for (uint32_t j = 0; j < 8; ++j) {
        a.mean.data()[b + j] = o.mean, a.max.data()[b + j] = o.max, a.expSum.data()[b + j] = o.expSum;
    }
    if (update) {
        for (uint32_t j = 0; j < 16; ++j) a.expMax.data()[uint64_t(r) * 16 + j] = down<T>(o.expMax);
    }
}

inline void flashv3_shape_check(const SoftMaxParams& p, sage::sim::SrcLoc loc) {
    using sage::sim::fail;
    if (p.srcK < 512 || p.srcK % 64 || p.srcM == 0 || p.srcM % 8) {
        fail("api-misuse", loc,
             "SoftmaxFlashV3 on [%u, %u]: the last axis must be at least 512 and a multiple of 64, the rows a "
             "multiple of 8 (SoftmaxFlashV3.md, constraints)", p.srcM, p.srcK);
    }
    if (p.oriSrcM != p.srcM || p.oriSrcK != p.srcK) {
        fail("api-misuse", loc, "SoftmaxFlashV3 with oriSrcM/oriSrcK %u/%u != srcM/srcK %u/%u: unaligned shapes "
             "are not supported", p.oriSrcM, p.oriSrcK, p.srcM, p.srcK);
    }
    if (p.splitMeanCnt != 8) fail("api-misuse", loc, "SoftmaxFlashV3 with splitMeanCnt %u: it must be 8", p.splitMeanCnt);
    if (p.loopCnt < 1) fail("api-misuse", loc, "SoftmaxFlashV3 with loopCnt 0: it must be at least 1");
}

// Checks the temporary space (one row, or the tiling's splitM rows with a sharedTmpBuffer when
// the tiling is for this shape) and returns the rows per tile.
inline uint32_t flashv3_rows_per_tile(const SoftMaxParams& p, const SoftMaxTiling& tiling,
                                      const LocalTensor<uint8_t>* tmp, sage::sim::SrcLoc loc) {
    const uint32_t row = softmax_sizes::flashv3_row_floats(p.srcK, 4) * softmax_sizes::kFloat;
    const bool matches = tiling.srcM == p.srcM && tiling.srcK == p.srcK && tiling.splitM > 0;
    uint64_t need = row;
    const char* how = "GetSoftMaxFlashV3MaxMinTmpSize's minimum";
    if (tmp && matches && uint64_t(tiling.splitM) * row > need) {
        need = uint64_t(tiling.splitM) * row;
        how = "the tiling's splitM rows, as SoftMaxFlashV3TilingFunc planned for its localWorkSpaceSize";
    }
    sage::sim::advmath::take_tmp("SoftmaxFlashV3", how, tmp, p.srcM * p.srcK, uint32_t(need), loc);
    return matches ? tiling.splitM : 1;
}

template <typename T, typename U>
inline void flashv3_run(const FlashV3Args<T, U>& a, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                        const SoftMaxParams& p, bool update, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const char* api = "SoftmaxFlashV3";
    touch(loc);
    flashv3_shape_check(p, loc);
    const uint64_t n = uint64_t(p.srcM) * p.srcK, nr = uint64_t(p.srcM) * 8;
    vec_src(a.src, api, n, loc);
    if (update) vec_src(a.inMean, api, nr, loc), vec_src(a.inMax, api, nr, loc), vec_src(a.inExpSum, api, nr, loc);
    vec_dst(a.dst, api, n, loc), vec_dst(a.mean, api, nr, loc), vec_dst(a.max, api, nr, loc);
    vec_dst(a.expSum, api, nr, loc);
    if (update) vec_dst(a.expMax, api, uint64_t(p.srcM) * 16, loc);
    const uint32_t tile = flashv3_rows_per_tile(p, tiling, tmp, loc);
    std::vector<float> x(p.srcK);
    for (uint32_t r = 0; r < p.srcM; ++r) flashv3_row(a, p.srcK, r, p, update, x);
    ub_mark(a.dst.range(n)), ub_mark(a.mean.range(nr)), ub_mark(a.max.range(nr)), ub_mark(a.expSum.range(nr));
    if (update) ub_mark(a.expMax.range(uint64_t(p.srcM) * 16));
    for (uint32_t r = 0; r < p.srcM; r += tile) {
        const uint64_t rows = std::min(tile, p.srcM - r), rn = rows * p.srcK, rr = rows * 8;
        trace_steps({"Cast", "BlockReduceSum", "Add", "Sub", "ReduceMax", "Sub", "Exp", "ReduceSum"}, "float32", 4, rn,
                    loc, a.dst.range(n), a.src.range(n));
        trace_steps({"BlockReduceSum", "Muls", "BlockReduceSum", "Sub", "Muls", "Add", "Sub"}, "float32", 4, rr, loc,
                    a.mean.range(nr));
        if (update) trace_steps({"Muls", "Add", "Muls", "Max", "Sub", "Exp", "Mul", "Add"}, "float32", 4, rr, loc,
                                a.max.range(nr));
        trace_steps({"Cast"}, "float32", 4, rn, loc, a.dst.range(n));
    }
}

}  // namespace detail

#define SAGE_FLASHV3_TEMPLATE                                                                                   \
    template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false, \
              bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define SAGE_FLASHV3_CHECKS                                                                                    \
    static_assert(std::is_same<T, half>::value && std::is_same<U, float>::value,                              \
                  "[dtype-unsupported] SoftmaxFlashV3 takes T = half and U = float");                          \
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftmaxFlashV3: the NZ data format is not emulated")

SAGE_FLASHV3_TEMPLATE
__aicore__ inline void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor,
                                      const LocalTensor<U>& expSumTensor, const LocalTensor<U>& maxTensor,
                                      const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                                      const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                                      const LocalTensor<U>& inMaxTensor, const SoftMaxTiling& tiling,
                                      const SoftMaxParams& params, SAGE_LOC) {
    SAGE_FLASHV3_CHECKS;
    detail::flashv3_run<T, U>({dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor, inMeanTensor,
                               inExpSumTensor, inMaxTensor},
                              nullptr, tiling, params, isUpdate, loc);
}

SAGE_FLASHV3_TEMPLATE
__aicore__ inline void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor,
                                      const LocalTensor<U>& expSumTensor, const LocalTensor<U>& maxTensor,
                                      const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                                      const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                                      const LocalTensor<U>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                      const SoftMaxTiling& tiling, const SoftMaxParams& params, SAGE_LOC) {
    SAGE_FLASHV3_CHECKS;
    detail::flashv3_run<T, U>({dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor, inMeanTensor,
                               inExpSumTensor, inMaxTensor},
                              &sharedTmpBuffer, tiling, params, isUpdate, loc);
}

#undef SAGE_FLASHV3_CHECKS
#undef SAGE_FLASHV3_TEMPLATE

}  // namespace AscendC
