// LayerNorm (adv_api/normalization/layernorm.h), the [B, S, H] form with mean and variance out:
//   LayerNorm<T, isReuseSource = false>(output, outputMean, outputVariance, inputX, gamma, beta,
//                                       [sharedTmpBuffer,] epsilon, LayerNormTiling& tiling)
//       per row of H: y = (x - mean) / sqrt(variance + epsilon) * gamma + beta. half and float; the
//       shape is the tiling's (GetLayerNormNDTilingInfo).
//
// As the device computes it (docs: LayerNorm.md, 实现原理; the generic ND implementation), in
// float (half is cast up, and the outputs back): mean = ReduceSum(Muls(x, 1/originalH)),
// variance = ReduceSum(Muls((x - mean)^2, 1/originalH)), each over all H columns, so padding
// columns (the doc asks for zeros) still add mean^2 / originalH each to the variance; then
// Adds(epsilon), Sqrt, Div(1, .), Mul by x - mean, Mul gamma, Add beta. A row sum adds 64-float
// repeats lane-wise, then the 64 lanes pairwise (WholeReduceSum). Rows come bsCurLength at a time.
#pragma once

#include <vector>

#include "../../sage_sim/adv.h"
#include "layernorm_tiling.h"
#include "layernorm_utils.h"
#include "normalize.h"

namespace AscendC {
namespace detail {

// mean and variance of one row of h floats, as the device reduces them (in place: x becomes x - mean).
inline void layernorm_moments(float* x, uint32_t h, float inv, float* mean, float* var) {
    std::vector<float> t(h);
    for (uint32_t j = 0; j < h; ++j) t[j] = x[j] * inv;
    *mean = sage::sim::row_sum(t.data(), h);
    for (uint32_t j = 0; j < h; ++j) {
        x[j] = x[j] - *mean;
        t[j] = (x[j] * x[j]) * inv;
    }
    *var = sage::sim::row_sum(t.data(), h);
}

template <typename T>
inline void layernorm_check(const LayerNormTiling& t, const LocalTensor<uint8_t>* tmp, bool isReuseSource,
                            sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (t.hLength == 0 || t.oneTmpSize == 0 || t.bsCurLength == 0) {
        fail("ub-out-of-bounds", loc,
             "LayerNorm with an empty tiling (hLength %u, oneTmpSize %u): GetLayerNormNDTilingInfo fills it only "
             "when its stackBufferSize holds at least one row; pass at least GetLayerNormMaxMinTmpSize's minimum",
             t.hLength, t.oneTmpSize);
    }
    if (t.hLength * sizeof(T) % 32 != 0) {
        fail("ub-out-of-bounds", loc, "LayerNorm with H = %u: the last axis must be 32-byte aligned (pad H to a "
             "multiple of %u and give the real length as originalHLength)", t.hLength, uint32_t(32 / sizeof(T)));
    }
    if (!tmp) return;
    uint64_t need = layernorm_sizes::min_bytes(t.bLength, t.sLength, t.hLength, sizeof(T), isReuseSource);
    const char* how = "GetLayerNormMaxMinTmpSize's minimum: 3 * align32(H * 4) + 2 * align32(B * S * 4)";
    if (layernorm_sizes::planned_bytes(t) > need) {
        need = layernorm_sizes::planned_bytes(t);
        how = "the tiling's work area: its mean/variance part and numberOfTmpBuf buffers of oneTmpSize floats, as "
              "GetLayerNormNDTilingInfo planned for its stackBufferSize";
    }
    tmp_check(*tmp, need, "LayerNorm", how, loc);
}

template <typename T>
inline void layernorm_trace(uint64_t rows, uint32_t h, sage::sim::UbRange w, sage::sim::UbRange r,
                            sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const uint64_t n = rows * h;
    const bool half_in = std::is_same<T, half>::value;
    if (half_in) trace_steps({"Cast"}, "float16", 2, n, loc, w, r);
    trace_steps({"Muls", "ReduceSum", "Sub", "Mul", "Muls", "ReduceSum", "Adds", "Sqrt", "Div", "Mul", "Mul", "Add"},
                "float32", 4, n, loc, w, r);
    if (half_in) trace_steps({"Cast", "Cast", "Cast"}, "float32", 4, n, loc, w);
}

template <typename T, bool isReuseSource>
inline void layernorm_run(const LocalTensor<T>& out, const LocalTensor<T>& mean, const LocalTensor<T>& var,
                          const LocalTensor<T>& x, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                          const LocalTensor<uint8_t>* tmp, float eps, const LayerNormTiling& t,
                          sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] LayerNorm takes half or float");
    touch(loc);
    layernorm_check<T>(t, tmp, isReuseSource, loc);
    const uint32_t h = t.hLength;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, n = rows * h;
    vec_src(x, "LayerNorm", n, loc);
    vec_src(gamma, "LayerNorm", h, loc);
    vec_src(beta, "LayerNorm", h, loc);
    vec_dst(out, "LayerNorm", n, loc);
    vec_dst(mean, "LayerNorm", rows, loc);
    vec_dst(var, "LayerNorm", rows, loc);
    std::vector<float> row(h);
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint32_t j = 0; j < h; ++j) row[j] = float(x.data()[r * h + j]);
        float m, v;
        layernorm_moments(row.data(), h, t.lastDimValueBack, &m, &v);
        const float rstd = 1.0f / std::sqrt(v + eps);
        for (uint32_t j = 0; j < h; ++j) {
            out.data()[r * h + j] = down<T>(rstd * row[j] * float(gamma.data()[j]) + float(beta.data()[j]));
        }
        mean.data()[r] = down<T>(m);
        var.data()[r] = down<T>(v);
    }
    ub_mark(out.range(n));
    ub_mark(mean.range(rows));
    ub_mark(var.range(rows));
    for (uint64_t r = 0; r < rows; r += t.bsCurLength) {
        layernorm_trace<T>(std::min<uint64_t>(t.bsCurLength, rows - r), h, out.range(n), x.range(n), loc);
    }
}

// The [A, R] form (LayerNorm.md, the rstd form; layernorm_common_impl.h's A2 path): when rLength
// < rLengthWithPadding the padding columns of inputX are first zeroed in place (multiplied by 0);
// per row, in float, mean = row sum over rLengthWithPadding of x * (1/rLength), then
// var = row sum of ((x - mean)^2 * (1/rLength)) (the zeroed padding adds 0), into the temporary
// buffer; then Normalize (its rstd output is outputRstd) in the rest of the buffer.
template <typename T>
inline void layernorm_ar_check(const LayerNormPara& p, const LayerNormSeparateTiling& t,
                               const LocalTensor<uint8_t>* tmp, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const uint32_t a = p.aLength, r = p.rLength, rp = p.rLengthWithPadding;
    if (a == 0 || r == 0 || r > rp || rp * sizeof(T) % 32 != 0 || t.oneTmpSize == 0 || t.rLength != r) {
        fail("api-misuse", loc,
             "LayerNorm [A, R] with aLength %u, rLength %u, rLengthWithPadding %u and a tiling for rLength %u "
             "(oneTmpSize %u): fill the tiling with GetLayerNormNDTilingInfo for the same shape from at least "
             "GetLayerNormMaxMinTmpSize's minimum; rLengthWithPadding is rLength rounded up to 32 bytes",
             a, r, rp, t.rLength, t.oneTmpSize);
    }
    uint64_t need = layernorm_ar_sizes::min_bytes(a, r, sizeof(T));
    const char* how = "GetLayerNormMaxMinTmpSize's minimum for [A, R]";
    if (layernorm_ar_sizes::planned_bytes(t) > need) {
        need = layernorm_ar_sizes::planned_bytes(t);
        how = "the tiling's work area: the variance and two buffers of oneTmpSize floats";
    }
    tmp_or_free_check(tmp, need, "LayerNorm", how, loc);
}

// Zeroes the padding of x in place, then each row's mean (into `mean`) and variance (into `var`).
template <typename T>
inline void layernorm_ar_moments(T* x, const LayerNormPara& p, float inv, float* mean, float* var) {
    const uint32_t r = p.rLength, rp = p.rLengthWithPadding;
    const uint64_t n = uint64_t(p.aLength) * rp;
    for (uint64_t i = 0; i < n && r < rp; ++i) x[i] = sage::sim::down<T>(float(x[i]) * (i % rp < r ? 1.0f : 0.0f));
    std::vector<float> row(rp);
    for (uint32_t i = 0; i < p.aLength; ++i) {
        for (uint32_t j = 0; j < rp; ++j) row[j] = float(x[i * rp + j]) * inv;
        const float m = sage::sim::row_sum(row.data(), rp);
        for (uint32_t j = 0; j < rp; ++j) {
            const float d = j < r ? float(x[i * rp + j]) + -m : float(x[i * rp + j]);
            row[j] = (d * d) * inv;
        }
        mean[i] = m, var[i] = sage::sim::row_sum(row.data(), rp);
    }
}

template <typename U, typename T, const LayerNormConfig& config>
inline void layernorm_ar_run(const LocalTensor<T>& y, const LocalTensor<float>& mean, const LocalTensor<float>& rstd,
                             const LocalTensor<T>& x, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
                             float eps, const LocalTensor<uint8_t>* tmp, const LayerNormPara& p,
                             const LayerNormSeparateTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(!config.isOnlyOutput, "[not-emulated] LayerNorm's isOnlyOutput is not supported on Atlas A2");
    touch(loc);
    layernorm_ar_check<T>(p, t, tmp, loc);
    const uint32_t a = p.aLength, r = p.rLength, rp = p.rLengthWithPadding, rows = std::max<uint32_t>(t.aCurLength, 1);
    const uint64_t n = uint64_t(a) * rp;
    vec_src(x, "LayerNorm", n, loc), vec_dst(mean, "LayerNorm", a, loc);
    if (!config.isNoGamma) vec_src(gamma, "LayerNorm", r, loc);
    if (!config.isNoBeta) vec_src(beta, "LayerNorm", r, loc);
    vec_dst(y, "LayerNorm", n, loc), vec_dst(rstd, "LayerNorm", a, loc);
    std::vector<float> var(a);
    layernorm_ar_moments(x.data(), p, t.rValueBack, mean.data(), var.data());
    // Normalize, reading the variance from the work area as the device does.
    static constexpr NormalizeConfig nc = {ReducePattern::AR, -1, config.isNoBeta, config.isNoGamma, false};
    normalize_compute<U, T, nc>(y.data(), rstd.data(), mean.data(), var.data(), x.data(), gamma.data(), beta.data(),
                                eps, NormalizePara{a, r, rp});
    ub_mark(mean.range(a)), ub_mark(y.range(n)), ub_mark(rstd.range(a));
    const char* load = std::is_same<T, half>::value ? "Cast" : "DataCopy";
    for (uint32_t i = 0; i < a; i += rows) {
        const uint64_t k = uint64_t(std::min(rows, a - i)) * rp;
        trace_steps({load, "Muls", "WholeReduceSum", load, "Adds", "Mul", "Muls", "WholeReduceSum"}, "float32", 4, k,
                    loc, mean.range(a), x.range(n));
    }
    normalize_trace<U, T>(NormalizePara{a, r, rp}, rows, y.range(n), x.range(n), loc);
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                                 const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
                                 const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, LayerNormTiling& tiling,
                                 SAGE_LOC) {
    detail::layernorm_run<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, &sharedTmpBuffer,
                                            float(epsilon), tiling, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                                 const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
                                 const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
                                 LayerNormTiling& tiling, SAGE_LOC) {
    detail::layernorm_run<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, nullptr,
                                            float(epsilon), tiling, loc);
}

}  // namespace AscendC

namespace AscendC {

template <typename U, typename T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM>
__aicore__ inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean,
                                 const LocalTensor<float>& outputRstd, const LocalTensor<T>& inputX,
                                 const LocalTensor<U>& gamma, const LocalTensor<U>& beta, const float epsilon,
                                 const LayerNormPara& para, const LayerNormSeparateTiling& tiling, SAGE_LOC) {
    detail::layernorm_ar_run<U, T, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon, nullptr, para,
                                           tiling, loc);
}

template <typename U, typename T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM>
__aicore__ inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean,
                                 const LocalTensor<float>& outputRstd, const LocalTensor<T>& inputX,
                                 const LocalTensor<U>& gamma, const LocalTensor<U>& beta, const float epsilon,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormPara& para,
                                 const LayerNormSeparateTiling& tiling, SAGE_LOC) {
    detail::layernorm_ar_run<U, T, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon,
                                           &sharedTmpBuffer, para, tiling, loc);
}

}  // namespace AscendC
