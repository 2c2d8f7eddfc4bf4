// Mean (adv_api/reduce/mean.h), from asc-devkit docs/zh/api/SIMD-API/高阶API/归约操作/Mean接口/Mean.md:
//
//   Mean<T, accType = T, isReuseSource = false, isBasicBlock = false, reduceDim = -1>(
//       dst, src, [sharedTmpBuffer,] MeanParams{outter, inner, n})
//       dst[i] = (src[i*inner] + ... + src[i*inner + n - 1]) / n for each of the `outter` rows;
//       inner is n rounded up to 32 bytes. T half or float; accType float with half T sums in float.
//
// As the device computes it (the doc: "sum first, then divide", the sum in Sum's binary tree):
// each 256-byte repeat of the row is summed pairwise (RepeatReduceSum, every level rounded to the
// type it runs in), the partials again until one is left, then Muls by 1/n - for half without
// accType the scalar itself is rounded to half and the product too; with accType float the row
// is cast up, summed and scaled in float and cast back (rounding to nearest) once.
#pragma once

#include <type_traits>
#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "mean_tiling.h"

namespace AscendC {

struct MeanParams {
    uint32_t outter = 1;
    uint32_t inner;
    uint32_t n;
};

namespace detail {

template <typename T, typename A>
inline void mean_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                     const MeanParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    const uint32_t perBlk = 32 / sizeof(T);
    if (p.n == 0 || p.n > p.inner || p.inner % perBlk || p.outter == 0) {
        fail("api-misuse", loc,
             "Mean with MeanParams{outter=%u, inner=%u, n=%u}: inner must be n rounded up to a multiple of %u "
             "elements (32 bytes), n and outter at least 1", p.outter, p.inner, p.n, perBlk);
    }
    advmath::take_tmp("Mean", "GetMeanMaxMinTmpSize(n, sizeof(T), sizeof(accType))", tmp, p.n,
                      mean_sizes::tmp_bytes(p.n, sizeof(T), sizeof(A)), loc);
    const uint64_t total = uint64_t(p.outter) * p.inner;
    vec_src(src, "Mean", total, loc);
    vec_dst(dst, "Mean", p.outter, loc);
    const uint32_t epr = 256 / sizeof(A);
    const float inv = 1.0f / float(int32_t(p.n));
    std::vector<float> v(p.n);
    for (uint32_t i = 0; i < p.outter; ++i) {
        for (uint32_t k = 0; k < p.n; ++k) v[k] = float(src.data()[uint64_t(i) * p.inner + k]);
        const float sum = repeat_tree_sum<A>(v.data(), p.n, epr);
        const float scale = float(down<A>(inv));  // Muls takes the scalar as A
        dst.data()[i] = down<T>(float(down<A>(sum * scale)));
    }
    ub_mark(dst.range(p.outter));
    const char* dt = dtype_name<A>();
    if (!std::is_same<T, A>::value) trace_steps({"Cast"}, dt, sizeof(A), total, loc, dst.range(p.outter), src.range(total));
    trace_steps({"RepeatReduceSum"}, dt, sizeof(A), total, loc, dst.range(p.outter), src.range(total));
    trace_steps({"Muls"}, dt, sizeof(A), p.outter, loc, dst.range(p.outter));
    if (!std::is_same<T, A>::value) trace_steps({"Cast"}, dt, sizeof(A), p.outter, loc, dst.range(p.outter));
}

}  // namespace detail

template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
__aicore__ inline void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, const MeanParams& meanParams, SAGE_LOC) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Mean takes half or float");
    static_assert(std::is_same<accType, T>::value || std::is_same<accType, float>::value,
                  "Mean: accType is T, or float for half T");
    detail::mean_run<T, accType>(dstTensor, srcTensor, &sharedTmpBuffer, meanParams, loc);
}

template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
__aicore__ inline void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                            const MeanParams& meanParams, SAGE_LOC) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Mean takes half or float");
    static_assert(std::is_same<accType, T>::value || std::is_same<accType, float>::value,
                  "Mean: accType is T, or float for half T");
    detail::mean_run<T, accType>(dstTensor, srcTensor, nullptr, meanParams, loc);
}

}  // namespace AscendC
