// RmsNorm (adv_api/normalization/rmsnorm.h):
//   RmsNorm<T, isBasicBlock = false>(dst, src, gamma, [sharedTmpBuffer,] epsilon, const RmsNormTiling& tiling)
//       per row of H: dst = x * rsqrt(mean(x^2 over originalH) + epsilon) * gamma. half and float; the
//       shape is the tiling's (GetRmsNormTilingInfo).
//
// As the device computes it (docs: RmsNorm.md; rmsnorm_common_impl.h), in float (half is cast up
// and the result back): Mul(x, x); the sum of the first originalH squares by RepeatReduceSum, 64
// at a time (each 64 summed pairwise), again over the partial sums until one is left; Muls(1/originalH),
// Adds(epsilon), then rsqrt as Exp(Muls(Ln(.), -0.5)); Mul by x, Mul gamma.
#pragma once

#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv.h"
#include "rmsnorm_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void rmsnorm_check(const tiling::RmsNormTiling& t, const LocalTensor<uint8_t>* tmp, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (t.hLength == 0 || t.mainBsLength == 0 || t.originalHLength == 0 || t.originalHLength > t.hLength) {
        fail("ub-out-of-bounds", loc,
             "RmsNorm with an empty or inconsistent tiling (hLength %u, originalHLength %u, mainBsLength %u): fill "
             "it with GetRmsNormTilingInfo, which fails when its stackBufferByteSize is below the minimum",
             t.hLength, t.originalHLength, t.mainBsLength);
    }
    if (t.hLength * sizeof(T) % 32 != 0) {
        fail("ub-out-of-bounds", loc, "RmsNorm with H = %u: the last axis must be 32-byte aligned", t.hLength);
    }
    if (!tmp) return;
    uint64_t need = rmsnorm_sizes::min_bytes(t.hLength, sizeof(T));
    const char* how = "GetRmsNormMaxMinTmpSize's minimum: (c * H + 8) * 4, c = 2 for half";
    if (rmsnorm_sizes::planned_bytes(t, sizeof(T)) > need) {
        need = rmsnorm_sizes::planned_bytes(t, sizeof(T));
        how = "the tiling's work area: mainBsLength rows (c * mainBshLength + mainBsLengthAlign floats), as "
              "GetRmsNormTilingInfo planned for its stackBufferByteSize";
    }
    tmp_check(*tmp, need, "RmsNorm", how, loc);
}

template <typename T>
inline void rmsnorm_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& gamma,
                        const LocalTensor<uint8_t>* tmp, float eps, const tiling::RmsNormTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] RmsNorm takes half or float");
    touch(loc);
    rmsnorm_check<T>(t, tmp, loc);
    const uint32_t h = t.hLength;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, n = rows * h;
    vec_src(src, "RmsNorm", n, loc);
    vec_src(gamma, "RmsNorm", h, loc);
    vec_dst(dst, "RmsNorm", n, loc);
    std::vector<float> sq(t.originalHLength);
    for (uint64_t r = 0; r < rows; ++r) {
        const T* x = src.data() + r * h;
        for (uint32_t j = 0; j < t.originalHLength; ++j) sq[j] = float(x[j]) * float(x[j]);
        const float ms = sage::sim::repeat_tree_sum<float>(sq.data(), sq.size(), 64) * t.reciprocalOfHLength + eps;
        const float rstd = std::exp(std::log(ms) * -0.5f);
        for (uint32_t j = 0; j < h; ++j) dst.data()[r * h + j] = down<T>((float(x[j]) * rstd) * float(gamma.data()[j]));
    }
    ub_mark(dst.range(n));
    const bool half_in = std::is_same<T, half>::value;
    for (uint64_t r = 0; r < rows; r += t.mainBsLength) {
        const uint64_t k = std::min<uint64_t>(t.mainBsLength, rows - r), e = k * h;
        if (half_in) trace_steps({"Cast"}, "float16", 2, e, loc, dst.range(n), src.range(n));
        trace_steps({"Mul", "ReduceSum"}, "float32", 4, e, loc, dst.range(n), src.range(n));
        trace_steps({"Muls", "Adds", "Ln", "Muls", "Exp"}, "float32", 4, k, loc, dst.range(n));
        trace_steps({"Mul", "Mul"}, "float32", 4, e, loc, dst.range(n), src.range(n), gamma.range(h));
        if (half_in) trace_steps({"Cast", "Cast"}, "float32", 4, e, loc, dst.range(n));
    }
}

}  // namespace detail

template <typename T, bool isBasicBlock = false>
__aicore__ inline void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                               const LocalTensor<T>& gammaLocal, const LocalTensor<uint8_t>& sharedTmpBuffer,
                               const T epsilon, const tiling::RmsNormTiling& tiling, SAGE_LOC) {
    detail::rmsnorm_run<T>(dstLocal, srcLocal, gammaLocal, &sharedTmpBuffer, float(epsilon), tiling, loc);
}

template <typename T, bool isBasicBlock = false>
__aicore__ inline void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                               const LocalTensor<T>& gammaLocal, const T epsilon, const tiling::RmsNormTiling& tiling,
                               SAGE_LOC) {
    detail::rmsnorm_run<T>(dstLocal, srcLocal, gammaLocal, nullptr, float(epsilon), tiling, loc);
}

}  // namespace AscendC
