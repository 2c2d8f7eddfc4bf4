// BatchNorm (adv_api/normalization/batchnorm.h), over the batch axis of [B, S, H]:
//   BatchNorm<T, isReuseSource = false, isBasicBlock = false>(output, outputMean, outputVariance, inputX, gamm,
//                                                             beta, [sharedTmpBuffer,] epsilon, BatchNormTiling& tiling)
//   per position (s, h): mean = sum_b x / B, var = sum_b (x - mean)^2 / B, and per b:
//   y = gamm[b] * (x - mean) / sqrt(var + epsilon) + beta[b]      (docs: BatchNorm.md; gamm and beta are [B],
//   outputMean and outputVariance [S, H])
//
// As the device computes it (batchnorm_common_impl.h, batchnorm_common_pre_impl.h, A2): in float
// (half is cast up, the outputs back, epsilon as T); mean as the batch rows of x * (1/B) added row
// after row; var the same over (x - mean)^2 * (1/B); 1/sqrt as Exp(Muls(Ln(var + eps), -0.5)); then
// (x - mean) * that, * gamm[b], + beta[b]. Positions come shCurLength at a time (the tiling).
#pragma once

#include <vector>

#include "../../sage_sim/adv.h"
#include "batchnorm_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void batchnorm_check(const BatchNormTiling& t, const LocalTensor<uint8_t>* tmp, bool basic,
                            sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (t.originalBLength == 0 || t.meanVarSize == 0 || t.oneTmpSize == 0 || t.shCurLength == 0) {
        fail("ub-out-of-bounds", loc,
             "BatchNorm with an empty tiling (originalBLength %u, S*H %u, oneTmpSize %u): GetBatchNormNDTilingInfo "
             "returns false and leaves it empty when its stackBufferByteSize is below GetBatchNormMaxMinTmpSize's "
             "minimum or S*H is not 32-byte aligned", t.originalBLength, t.meanVarSize, t.oneTmpSize);
    }
    if (t.meanVarSize * sizeof(T) % 32 != 0) {
        fail("api-misuse", loc, "BatchNorm with S*H = %u: S*H must be 32-byte aligned", t.meanVarSize);
    }
    uint64_t need = batchnorm_sizes::min_bytes(t.originalBLength, t.meanVarSize, sizeof(T), basic);
    const char* how = "GetBatchNormMaxMinTmpSize's minimum: 3 * B * (32 float, 64 half) + 2 * align32(S*H*4)";
    if (batchnorm_sizes::planned_bytes(t) > need) {
        need = batchnorm_sizes::planned_bytes(t);
        how = "the tiling's work area: the mean/variance part and 3 buffers of oneTmpSize floats";
    }
    tmp_or_free_check(tmp, need, "BatchNorm", how, loc);
}

// One position's batch column x[0..b) (floats): its mean, variance and the normalized values.
inline void batchnorm_column(const float* x, uint32_t b, float inv, float eps, const float* g, const float* be,
                             float* y, float* mean, float* var) {
    float m = x[0] * inv;
    for (uint32_t i = 1; i < b; ++i) m = m + x[i] * inv;
    std::vector<float> d(b);
    float v = 0.0f;
    for (uint32_t i = 0; i < b; ++i) {
        d[i] = x[i] - m;
        const float q = (d[i] * d[i]) * inv;
        v = i == 0 ? q : v + q;
    }
    const float r = std::exp(std::log(v + eps) * -0.5f);
    for (uint32_t i = 0; i < b; ++i) y[i] = be[i] + g[i] * (d[i] * r);
    *mean = m, *var = v;
}

template <typename T, bool isBasicBlock>
inline void batchnorm_run(const LocalTensor<T>& out, const LocalTensor<T>& mean, const LocalTensor<T>& var,
                          const LocalTensor<T>& x, const LocalTensor<T>& gamm, const LocalTensor<T>& beta,
                          const LocalTensor<uint8_t>* tmp, float eps, const BatchNormTiling& t,
                          sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] BatchNorm takes half or float");
    touch(loc);
    batchnorm_check<T>(t, tmp, isBasicBlock, loc);
    const uint32_t b = t.originalBLength, sh = t.meanVarSize;
    const uint64_t n = uint64_t(b) * sh;
    const char* api = "BatchNorm";
    vec_src(x, api, n, loc), vec_src(gamm, api, b, loc), vec_src(beta, api, b, loc);
    vec_dst(out, api, n, loc), vec_dst(mean, api, sh, loc), vec_dst(var, api, sh, loc);
    std::vector<float> col(b), g(b), be(b), y(b);
    for (uint32_t i = 0; i < b; ++i) g[i] = float(gamm.data()[i]), be[i] = float(beta.data()[i]);
    for (uint32_t c = 0; c < sh; ++c) {
        for (uint32_t i = 0; i < b; ++i) col[i] = float(x.data()[uint64_t(i) * sh + c]);
        float m, v;
        batchnorm_column(col.data(), b, t.firstDimValueBack, eps, g.data(), be.data(), y.data(), &m, &v);
        for (uint32_t i = 0; i < b; ++i) out.data()[uint64_t(i) * sh + c] = down<T>(y[i]);
        mean.data()[c] = down<T>(m), var.data()[c] = down<T>(v);
    }
    ub_mark(out.range(n)), ub_mark(mean.range(sh)), ub_mark(var.range(sh));
    const bool half_in = std::is_same<T, half>::value;
    for (uint32_t c = 0; c < sh; c += t.shCurLength) {
        const uint64_t k = std::min(t.shCurLength, sh - c), e = k * b;
        if (half_in) trace_steps({"Cast"}, "float16", 2, e, loc, out.range(n), x.range(n));
        trace_steps({"Muls"}, "float32", 4, e, loc, out.range(n), x.range(n));
        for (uint32_t i = 1; i < b; ++i) trace_steps({"Add"}, "float32", 4, k, loc, mean.range(sh));
        trace_steps({"Sub", "Mul", "Muls"}, "float32", 4, e, loc, out.range(n), x.range(n));
        for (uint32_t i = 1; i < b; ++i) trace_steps({"Add"}, "float32", 4, k, loc, var.range(sh));
        trace_steps({"Adds", "Ln", "Muls", "Exp"}, "float32", 4, k, loc, var.range(sh));
        trace_steps({"Mul", "Brcb", "Mul", "Brcb", "Add"}, "float32", 4, e, loc, out.range(n));
        if (half_in) trace_steps({"Cast", "Cast", "Cast"}, "float32", 4, e, loc, out.range(n));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                                 const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
                                 const LocalTensor<T>& gamm, const LocalTensor<T>& beta,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, BatchNormTiling& tiling,
                                 SAGE_LOC) {
    detail::batchnorm_run<T, isBasicBlock>(output, outputMean, outputVariance, inputX, gamm, beta, &sharedTmpBuffer,
                                           float(epsilon), tiling, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                                 const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
                                 const LocalTensor<T>& gamm, const LocalTensor<T>& beta, const T epsilon,
                                 BatchNormTiling& tiling, SAGE_LOC) {
    detail::batchnorm_run<T, isBasicBlock>(output, outputMean, outputVariance, inputX, gamm, beta, nullptr,
                                           float(epsilon), tiling, loc);
}

}  // namespace AscendC
