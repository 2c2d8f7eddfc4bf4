// TopK (adv_api/sort/topk.h), Atlas A2 (910B) forms, from asc-devkit
// docs/zh/api/SIMD-API/高阶API/排序操作/TopK.md (MERGE_SORT, the algorithm Atlas A2 has):
//
//   TopK<T, isInitIndex = false, isHasfinish = false, isReuseSrc = false, topkMode = TOPK_NORMAL[, config]>(
//       dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal, finishLocal, [tmpLocal,] k, tiling, topKInfo,
//       isLargest = true)
//   half and float. Each of topKInfo.outter rows of topKInfo.inner elements (a multiple of 32; the
//   padding past n takes part in the sort, so the caller pads with values that lose) gives its k
//   largest (isLargest) or smallest values and their indices.
//   Normal mode: output rows are k rounded up to 32 bytes apart (k_pad values, kpad_index
//   indices), inner <= 4096. Small mode: inner is 32 and the outputs are packed, k per row.
//   Indices: srcIndexLocal (isInitIndex: one row of inner shared by every row in Normal mode, one
//   per row in Small mode), else the position 0..inner-1 (the Arange the doc's step 1 generates).
//   isHasfinish: a row whose finishLocal byte is true gets the invalid index n in all k places.
//   isReuseSrc: reserved on Atlas A2 (TopK.md: pass false; only the 950's float path reuses the
//   source), so the source is left intact whatever it says.
//
// Order, as the doc states: the device negates the data for the smallest k (Muls by -1), sorts
// descending (Sort32 then MrgSort), and takes the first k (GatherMask), so equal values keep the
// lower position first, inf is the largest number and NaN comes first in either order.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "../../basic_api/kernel_operator_proposal_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "topk_tiling.h"

namespace AscendC {

namespace detail {

struct TopKCall {
    bool initIndex, hasFinish, small, largest;
    int32_t k;
    TopKInfo info;
};

inline void topk_validate(const TopKCall& c, sage::sim::SrcLoc loc) {
    using sage::sim::fail;
    const TopKInfo& i = c.info;
    if (i.outter < 1 || i.inner < 32 || i.inner % 32 || i.n < 1 || i.n > i.inner) {
        fail("api-misuse", loc,
             "TopK with TopKInfo{outter=%d, inner=%d, n=%d}: inner must be a multiple of 32 and 1 <= n <= inner",
             i.outter, i.inner, i.n);
    }
    if (c.small ? i.inner != 32 : i.inner > 4096) {
        fail("api-misuse", loc, "TopK in %s mode with inner %d: %s", c.small ? "TOPK_NSMALL" : "TOPK_NORMAL",
             i.inner, c.small ? "Small mode needs inner = 32" : "Normal mode takes inner up to 4096");
    }
    if (c.k < 1 || c.k > i.n) fail("api-misuse", loc, "TopK with k = %d: it must be in [1, n = %d]", c.k, i.n);
}

// The vector instructions of one call (doc 实现原理, MERGE_SORT on Atlas A2).
template <typename T>
inline void topk_trace(const TopKCall& c, sage::sim::SrcLoc loc, sage::sim::UbRange dv, sage::sim::UbRange src) {
    using namespace sage::sim;
    const uint64_t all = uint64_t(c.info.outter) * c.info.inner, outs = uint64_t(c.info.outter) * c.k;
    const char* dt = dtype_name<T>();
    if (!c.initIndex) trace_steps({"Arange"}, "int32", 4, c.small ? all : c.info.inner, loc, {});
    if (!c.largest) trace_steps({"Muls"}, dt, sizeof(T), all, loc, {}, src);
    trace_steps({"Sort32"}, dt, 8, all, loc, {}, src);
    if (!c.small) {
        for (uint32_t run = 32; run < uint32_t(c.info.inner); run *= 4) trace_steps({"MrgSort"}, dt, 8, all, loc, {});
    }
    trace_steps({"GatherMask", "GatherMask"}, dt, sizeof(T), outs, loc, dv);
    if (!c.largest) trace_steps({"Muls"}, dt, sizeof(T), outs, loc, dv);
}

template <typename T>
inline void topk_run(const TopKCall& c, const LocalTensor<T>& dstValue, const LocalTensor<int32_t>& dstIndex,
                     const LocalTensor<T>& src, const LocalTensor<int32_t>& srcIndex,
                     const LocalTensor<bool>& finish, const LocalTensor<uint8_t>* tmp, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    topk_validate(c, loc);
    const TopKInfo& in = c.info;
    const uint32_t rows = uint32_t(in.outter), inner = uint32_t(in.inner), k = uint32_t(c.k);
    const uint32_t need = topk_sizes::tmp_bytes(in.inner, in.outter, c.initIndex,
                                                c.small ? TopKMode::TOPK_NSMALL : TopKMode::TOPK_NORMAL, c.largest);
    advmath::take_tmp("TopK", "GetTopKMaxMinTmpSize", tmp, rows * inner, need, loc);
    const uint32_t vpitch = c.small ? k : (k * sizeof(T) + 31) / 32 * 32 / sizeof(T);
    const uint32_t ipitch = c.small ? k : (k + 7) / 8 * 8;
    const uint64_t all = uint64_t(rows) * inner;
    vec_src(src, "TopK", all, loc);
    if (c.initIndex) vec_src(srcIndex, "TopK", c.small ? all : inner, loc);
    if (c.hasFinish) vec_src(finish, "TopK", rows, loc);
    vec_dst(dstValue, "TopK", uint64_t(rows - 1) * vpitch + k, loc);
    vec_dst(dstIndex, "TopK", uint64_t(rows - 1) * ipitch + k, loc);
    std::vector<SortElem> row(inner);
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t i = 0; i < inner; ++i) {
            float v = float(src.data()[uint64_t(r) * inner + i]);
            uint32_t idx = c.initIndex ? uint32_t(srcIndex.data()[c.small ? uint64_t(r) * inner + i : i]) : i;
            row[i] = SortElem{c.largest ? v : -v, idx};
        }
        std::stable_sort(row.begin(), row.end(),
                         [](const SortElem& a, const SortElem& b) { return sorts_before(a.score, b.score); });
        const bool done = c.hasFinish && finish.data()[r];
        for (uint32_t j = 0; j < k; ++j) {
            dstValue.data()[uint64_t(r) * vpitch + j] = T(c.largest ? row[j].score : -row[j].score);
            dstIndex.data()[uint64_t(r) * ipitch + j] = done ? in.n : int32_t(row[j].index);
        }
        ub_mark(dstValue[r * vpitch].range(k));
        ub_mark(dstIndex[r * ipitch].range(k));
    }
    topk_trace<T>(c, loc, dstValue.range(uint64_t(rows - 1) * vpitch + k), src.range(all));
}

}  // namespace detail

// The two forms: with tmpLocal, and with the framework's temporary space.
#define SAGE_TOPK_TEMPLATE                                                                                      \
    template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,          \
              enum TopKMode topkMode = TopKMode::TOPK_NORMAL, const TopKConfig& config = defaultTopKConfig>
#define SAGE_TOPK_CALL(TMP)                                                                                     \
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,                                \
                  "[dtype-unsupported] TopK takes half or float on Atlas A2");                                  \
    static_assert(config.algo == TopKAlgo::MERGE_SORT, "TopK: Atlas A2 has only TopKAlgo::MERGE_SORT");         \
    (void)tilling, (void)isReuseSrc;                                                                            \
    const bool largest = config.order == TopKOrder::UNSET ? isLargest : config.order == TopKOrder::LARGEST;      \
    detail::topk_run<T>({isInitIndex, isHasfinish, topkMode == TopKMode::TOPK_NSMALL, largest, k, topKInfo},    \
                        dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal, finishLocal, TMP, loc)

SAGE_TOPK_TEMPLATE
__aicore__ inline void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
                            const LocalTensor<T>& srcLocal, const LocalTensor<int32_t>& srcIndexLocal,
                            const LocalTensor<bool>& finishLocal, const LocalTensor<uint8_t>& tmpLocal,
                            const int32_t k, const TopkTiling& tilling, const TopKInfo& topKInfo,
                            const bool isLargest = true, SAGE_LOC) {
    SAGE_TOPK_CALL(&tmpLocal);
}

SAGE_TOPK_TEMPLATE
__aicore__ inline void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
                            const LocalTensor<T>& srcLocal, const LocalTensor<int32_t>& srcIndexLocal,
                            const LocalTensor<bool>& finishLocal, const int32_t k, const TopkTiling& tilling,
                            const TopKInfo& topKInfo, const bool isLargest = true, SAGE_LOC) {
    SAGE_TOPK_CALL(nullptr);
}

#undef SAGE_TOPK_CALL
#undef SAGE_TOPK_TEMPLATE

}  // namespace AscendC
