// GroupNorm (adv_api/normalization/groupnorm.h), over [N, C, H, W] in groupNum groups of d = C /
// groupNum channels:
//   GroupNorm<T, isReuseSource = false>(output, outputMean, outputVariance, inputX, gamma, beta,
//                                       [sharedTmpBuffer,] epsilon, GroupNormTiling& tiling)
//   per (n, group): mean and variance over its d * H * W values, y = (x - mean) / sqrt(var + eps) *
//   gamma[c] + beta[c]; outputMean/outputVariance [N, groupNum]      (docs: GroupNorm.md)
// Each channel's H*W is stored padded to 32 bytes (hwAlignSize); the padding should be zero.
//
// As the device computes it (groupnorm_common_impl.h, A2), in float (half cast up, the outputs
// back): each group's sum over all its d * hwAlignSize stored values, padding included, times
// factor = 1 / (d * H * W); the sums as ReduceSum (repeated 64-float WholeReduceSum passes), or on
// the small-shape path as WholeReduceSum blocks of small_mask(d * hwAlignSize) and then one over
// the block sums; x - mean on the H*W real values (for float the padding becomes 0, for half it
// keeps x), squared and summed the same way; rstd by Sqrt and Div; y = (x - mean) * rstd over the
// stored values, then * gamma[c] and + beta[c] on the real ones.
#pragma once

#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv.h"
#include "groupnorm_tiling.h"

namespace AscendC {
namespace detail {

// A group's sum as the tiling's path reduces it.
inline float groupnorm_sum(const float* v, uint32_t n, bool small) {
    if (!small) return sage::sim::repeat_tree_sum<float>(v, n, 64);
    const uint32_t m = groupnorm_sizes::small_mask(n);
    std::vector<float> parts;
    for (uint32_t i = 0; i < n; i += m) parts.push_back(sage::sim::row_sum(v + i, m));
    return sage::sim::row_sum(parts.data(), parts.size());
}

template <typename T>
inline void groupnorm_check(const GroupNormTiling& t, const LocalTensor<uint8_t>* tmp, bool reuse,
                            sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (t.n == 0 || t.g == 0 || t.d == 0 || t.oneTmpSize == 0 || t.bsCurLength == 0) {
        fail("ub-out-of-bounds", loc,
             "GroupNorm with an empty tiling (n %u, groups %u, oneTmpSize %u): GetGroupNormNDTilingInfo fills it only "
             "when its stackBufferSize holds one group per buffer; pass at least GetGroupNormMaxMinTmpSize's minimum",
             t.n, t.g, t.oneTmpSize);
    }
    uint64_t need = groupnorm_sizes::min_bytes(t.n, t.c, t.hw, t.g, sizeof(T), reuse);
    const char* how = "GetGroupNormMaxMinTmpSize's minimum: k * d * hwAlign * 4 + 2 * align32(N * groups * 4)";
    if (groupnorm_sizes::planned_bytes(t) > need) {
        need = groupnorm_sizes::planned_bytes(t);
        how = "the tiling's work area: its mean/variance part and k buffers of oneTmpSize floats";
    }
    tmp_or_free_check(tmp, need, "GroupNorm", how, loc);
}

template <typename T, bool isReuseSource>
inline void groupnorm_run(const LocalTensor<T>& out, const LocalTensor<T>& mean, const LocalTensor<T>& var,
                          const LocalTensor<T>& x, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                          const LocalTensor<uint8_t>* tmp, float eps, const GroupNormTiling& t,
                          sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] GroupNorm takes half or float");
    touch(loc);
    groupnorm_check<T>(t, tmp, isReuseSource, loc);
    const uint32_t hwA = t.hwAlignSize, dhwA = t.dhwAlignSize, groups = t.n * t.g;
    const uint64_t n = uint64_t(groups) * dhwA;
    const char* api = "GroupNorm";
    vec_src(x, api, n, loc), vec_src(gamma, api, t.c, loc), vec_src(beta, api, t.c, loc);
    vec_dst(out, api, n, loc), vec_dst(mean, api, groups, loc), vec_dst(var, api, groups, loc);
    const bool half_in = std::is_same<T, half>::value;
    std::vector<float> v(dhwA), sq(dhwA);
    for (uint32_t gi = 0; gi < groups; ++gi) {
        const uint64_t base = uint64_t(gi) * dhwA;
        for (uint32_t j = 0; j < dhwA; ++j) v[j] = float(x.data()[base + j]);
        const float m = groupnorm_sum(v.data(), dhwA, t.smallShape) * t.factor;
        for (uint32_t j = 0; j < dhwA; ++j) {
            v[j] = j % hwA < t.hw ? v[j] + -m : (half_in ? v[j] : 0.0f);
            sq[j] = v[j] * v[j];
        }
        const float vr = groupnorm_sum(sq.data(), dhwA, t.smallShape) * t.factor;
        const float rstd = 1.0f / std::sqrt(vr + eps);
        for (uint32_t j = 0; j < dhwA; ++j) {
            const uint32_t ch = (gi * t.d + j / hwA) % t.c;
            float y = v[j] * rstd;
            if (j % hwA < t.hw) y = y * float(gamma.data()[ch]) + float(beta.data()[ch]);
            out.data()[base + j] = down<T>(y);
        }
        mean.data()[gi] = down<T>(m), var.data()[gi] = down<T>(vr);
    }
    ub_mark(out.range(n)), ub_mark(mean.range(groups)), ub_mark(var.range(groups));
    for (uint32_t gi = 0; gi < groups; gi += t.bsCurLength) {
        const uint32_t k = std::min(t.bsCurLength, groups - gi);
        const uint64_t e = uint64_t(k) * dhwA;
        if (half_in) trace_steps({"Duplicate", "Cast"}, "float16", 2, e, loc, out.range(n), x.range(n));
        trace_steps({t.smallShape ? "WholeReduceSum" : "ReduceSum", "Muls", "Adds", "Mul",
                     t.smallShape ? "WholeReduceSum" : "ReduceSum", "Muls"}, "float32", 4, e, loc, out.range(n),
                    x.range(n));
        trace_steps({"Adds", "Duplicate", "Sqrt", "Div"}, "float32", 4, k, loc, var.range(groups));
        trace_steps({"Muls", "Muls", "Adds"}, "float32", 4, e, loc, out.range(n));
        if (half_in) trace_steps({"Cast"}, "float32", 4, e, loc, out.range(n));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                                 const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
                                 const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, GroupNormTiling& tiling,
                                 SAGE_LOC) {
    detail::groupnorm_run<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta,
                                            &sharedTmpBuffer, float(epsilon), tiling, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                                 const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
                                 const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
                                 GroupNormTiling& tiling, SAGE_LOC) {
    detail::groupnorm_run<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, nullptr,
                                            float(epsilon), tiling, loc);
}

}  // namespace AscendC
