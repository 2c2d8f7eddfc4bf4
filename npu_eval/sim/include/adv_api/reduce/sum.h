// Sum (adv_api/reduce): the sum of each row.
//
//   Sum<T, reduceDim = -1, isReuseSource = false, isBasicBlock = false>(dst, src, [tmp,] SumParams{outter, inner, n})
//       dst[i] = src[i*inner] + ... + src[i*inner + n - 1] for each of the `outter` rows; `inner` is n
//       rounded up to 32 bytes (the row pitch in UB). half and float.
//
// The order is the documented one (Sum.md, constraints: as ReduceSum and ReduceRepeat, a binary
// tree adding neighbours pairwise): each 256-byte repeat of the row is a pairwise tree, every
// partial rounded to T, then the repeats' sums the same way (repeat_tree_sum, the basic
// ReduceSum's order). One vector instruction over the elements read is traced.
#pragma once

#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/vec.h"
#include "sum_tiling.h"

namespace AscendC {

struct SumParams {
    uint32_t outter = 1;
    uint32_t inner;  // n rounded up to 32 bytes, in elements
    uint32_t n;      // the row's real length
};

namespace detail {

template <typename T>
inline void sum_rows(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SumParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    const uint32_t per_block = 32 / sizeof(T);
    if (p.n == 0 || p.n > p.inner || p.inner % per_block) {
        fail("ub-out-of-bounds", loc,
             "Sum with SumParams{outter=%u, inner=%u, n=%u}: inner must be n rounded up to a multiple of %u elements "
             "(32 bytes), and n at least 1", p.outter, p.inner, p.n, per_block);
    }
    uint64_t total = uint64_t(p.outter) * p.inner;
    vec_src(src, "Sum", total, loc);
    vec_dst(dst, "Sum", p.outter, loc);
    const T* s = src.data();
    T* d = dst.data();
    std::vector<float> row(p.n);
    for (uint32_t i = 0; i < p.outter; ++i) {
        for (uint32_t k = 0; k < p.n; ++k) row[k] = float(s[uint64_t(i) * p.inner + k]);
        d[i] = down<T>(repeat_tree_sum<T>(row.data(), p.n, 256 / sizeof(T)));
    }
    ub_mark(dst.range(p.outter));
    trace_instr(Pipe::V, "Sum", dtype_name<T>(), uint32_t(total), total * sizeof(T), loc, dst.range(p.outter),
                src.range(total));
}

}  // namespace detail

template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const SumParams& sumParams, SAGE_LOC) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Sum takes half or float");
    uint32_t maxSize = 0, minSize = 0;
    GetSumMaxMinTmpSize(sumParams.n, sizeof(T), isReuseSource, maxSize, minSize);
    sage::sim::tmp_check(sharedTmpBuffer, minSize, "Sum", "GetSumMaxMinTmpSize(n, sizeof(T))", loc);
    detail::sum_rows(dstTensor, srcTensor, sumParams, loc);
}

template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const SumParams& sumParams, SAGE_LOC) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Sum takes half or float");
    detail::sum_rows(dstTensor, srcTensor, sumParams, loc);
}

}  // namespace AscendC
