// ReduceXorSum (adv_api/reduce/reduce_xor_sum.h), from asc-devkit
// docs/zh/api/SIMD-API/高阶API/归约操作/ReduceXorSum接口/ReduceXorSum.md:
//
//   ReduceXorSum<T = int16_t, isReuseSource = false>(dst, src0, src1, [sharedTmpBuffer,] calCount)
//       dst[0] = sum over i < calCount of (src0[i] ^ src1[i]), saturated to [-32768, 32767].
//
// As the device computes it (Atlas A2): the xor as (x | y) & ~(x & y) in int16, Cast to float,
// the basic ReduceSum in float (a pairwise tree per 64-element repeat, then the partials again),
// Cast back to int16 rounding half away from zero and saturating. A sum past 2^24 is the float
// sum's, not the exact integer. isReuseSource: src1 is the ReduceSum's work area and holds no
// data afterwards.
#pragma once

#include <cmath>
#include <type_traits>
#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "reduce_xor_sum_tiling.h"

namespace AscendC {

namespace detail {

template <typename T>
inline void xor_sum_run(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                        const LocalTensor<uint8_t>* tmp, uint32_t count, bool reuse, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    if (count == 0) fail("api-misuse", loc, "ReduceXorSum with calCount 0");
    advmath::take_tmp("ReduceXorSum", "GetReduceXorSumMaxMinTmpSize", tmp, count,
                      xor_sum_sizes::tmp_bytes(count, sizeof(T), reuse), loc);
    vec_src(src0, "ReduceXorSum", count, loc);
    vec_src(src1, "ReduceXorSum", count, loc);
    vec_dst(dst, "ReduceXorSum", 1, loc);
    std::vector<float> x(count);
    for (uint32_t i = 0; i < count; ++i) x[i] = float(int16_t(src0.data()[i] ^ src1.data()[i]));
    const float sum = repeat_tree_sum<float>(x.data(), count, 64);
    const float r = std::round(sum);  // CAST_ROUND: half away from zero
    dst.data()[0] = T(r > 32767.0f ? 32767 : r < -32768.0f ? -32768 : int32_t(r));
    ub_mark(dst.range(1));
    trace_steps({"And", "Or", "Not", "And"}, "int16", 2, count, loc, dst.range(1), src0.range(count), src1.range(count));
    trace_steps({"Cast", "ReduceSum"}, "float32", 4, count, loc, dst.range(1));
    trace_steps({"Cast"}, "float32", 4, 1, loc, dst.range(1));
    if (reuse) reuse_clobber(src1, count);
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void ReduceXorSum(LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                                    const LocalTensor<T>& src1Tensor, LocalTensor<uint8_t>& sharedTmpBuffer,
                                    const uint32_t calCount, SAGE_LOC) {
    static_assert(std::is_same<T, int16_t>::value, "[dtype-unsupported] ReduceXorSum takes int16_t");
    detail::xor_sum_run<T>(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, calCount, isReuseSource, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void ReduceXorSum(LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                                    const LocalTensor<T>& src1Tensor, const uint32_t calCount, SAGE_LOC) {
    static_assert(std::is_same<T, int16_t>::value, "[dtype-unsupported] ReduceXorSum takes int16_t");
    detail::xor_sum_run<T>(dstTensor, src0Tensor, src1Tensor, nullptr, calCount, isReuseSource, loc);
}

}  // namespace AscendC
