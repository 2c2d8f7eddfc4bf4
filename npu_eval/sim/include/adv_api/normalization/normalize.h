// Normalize (adv_api/normalization/normalize.h): LayerNorm's second half, from a given mean and
// variance per row of an [A, R] input:
//   Normalize<U, T, isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>(
//       output, outputRstd, inputMean, inputVariance, inputX, gamma, beta, [sharedTmpBuffer,] epsilon, para)
//   rstd = 1 / sqrt(var + epsilon), y = (x - mean) * rstd * gamma + beta   (docs: Normalize.md)
// T (x, y) half or float, U (gamma, beta) float, or half with T half; mean, variance, rstd float;
// config.isNoGamma / isNoBeta drop the affine terms; isOnlyOutput must be false on Atlas A2.
//
// As the device computes it (normalize_common_impl.h): rstd by Sqrt then Div; in float (half x
// cast up, y cast back), (x - mean) * rstd over all rLengthWithPadding columns, then * gamma and
// + beta over the first rLength only, so a padding column's y is (x - mean) * rstd. Rows come N at a
// time, N the rows of 2 * rLengthWithPadding floats the temporary buffer holds (for half gamma/beta
// less their float copies).
#pragma once

#include <vector>

#include "../../sage_sim/adv.h"
#include "../utils/types.h"
#include "normalize_tiling.h"

namespace AscendC {

struct NormalizeConfig {
    ReducePattern reducePattern = ReducePattern::AR;
    int32_t aLength = -1;
    bool isNoBeta = false;
    bool isNoGamma = false;
    bool isOnlyOutput = false;
};
constexpr NormalizeConfig NLCFG_NORM = {ReducePattern::AR, -1, false, false, false};
constexpr NormalizeConfig NLCFG_NOBETA = {ReducePattern::AR, -1, true, false, false};
constexpr NormalizeConfig NLCFG_NOGAMMA = {ReducePattern::AR, -1, false, true, false};
constexpr NormalizeConfig NLCFG_NOOPT = {ReducePattern::AR, -1, true, true, false};

struct NormalizePara {
    uint32_t aLength;
    uint32_t rLength;
    uint32_t rLengthWithPadding;
};

namespace detail {

// Rows per pass in a work area of `floats` (0: not one row fits).
template <typename U>
inline uint32_t normalize_rows(uint64_t floats, const NormalizePara& p) {
    const uint64_t r2 = 2ull * p.rLengthWithPadding;
    const uint64_t n = std::is_same<U, float>::value ? floats / r2 : (floats > r2 ? (floats - r2) / r2 : 0);
    return uint32_t(std::min<uint64_t>(n, p.aLength));
}

template <typename U, typename T>
inline void normalize_check(const NormalizePara& p, const LocalTensor<uint8_t>* tmp, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (p.aLength == 0 || p.rLength == 0 || p.rLength > p.rLengthWithPadding ||
        p.rLengthWithPadding * sizeof(T) % 32 != 0) {
        fail("api-misuse", loc,
             "Normalize with aLength %u, rLength %u, rLengthWithPadding %u: it takes 0 < rLength <= "
             "rLengthWithPadding, the padded length 32-byte aligned", p.aLength, p.rLength, p.rLengthWithPadding);
    }
    tmp_or_free_check(tmp, normalize_sizes::min_bytes(p.aLength, p.rLengthWithPadding, sizeof(U)), "Normalize",
                      "GetNormalizeMaxMinTmpSize's minimum: max(A floats, 2 rows of rLengthWithPadding floats, 4 "
                      "with half gamma/beta)", loc);
}

// rstd from the variance, then y row by row, as described above (on the tensors' elements).
template <typename U, typename T, const NormalizeConfig& config>
inline void normalize_compute(T* y, float* rstd, const float* mean, const float* var, const T* x, const U* gamma,
                              const U* beta, float eps, const NormalizePara& p) {
    const uint32_t r = p.rLength, rp = p.rLengthWithPadding;
    for (uint32_t a = 0; a < p.aLength; ++a) rstd[a] = 1.0f / std::sqrt(var[a] + eps);
    for (uint32_t a = 0; a < p.aLength; ++a) {
        for (uint32_t j = 0; j < rp; ++j) {
            float v = (float(x[a * rp + j]) - mean[a]) * rstd[a];
            if (j < r && !config.isNoGamma) v = v * float(gamma[j]);
            if (j < r && !config.isNoBeta) v = v + float(beta[j]);
            y[a * rp + j] = sage::sim::down<T>(v);
        }
    }
}

template <typename U, typename T>
inline void normalize_trace(const NormalizePara& p, uint32_t rows, sage::sim::UbRange w, sage::sim::UbRange r,
                            sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    trace_steps({"Adds", "Duplicate", "Sqrt", "Div"}, "float32", 4, p.aLength, loc, w);
    if (std::is_same<U, half>::value) trace_steps({"Cast", "Cast"}, "float16", 2, p.rLength, loc, w);
    const uint32_t per = std::max<uint32_t>(rows, 1);
    for (uint32_t a = 0; a < p.aLength; a += per) {
        const uint32_t k = std::min(per, p.aLength - a);
        const uint64_t n = uint64_t(k) * p.rLengthWithPadding;
        trace_steps({std::is_same<T, half>::value ? "Cast" : "Adds"}, "float32", 4, n, loc, w, r);
        for (uint32_t i = 0; i < 2 * k; ++i) trace_steps({"Duplicate"}, "float32", 4, p.rLength, loc, w);
        trace_steps({"Sub", "Mul"}, "float32", 4, n, loc, w);
        for (uint32_t i = 0; i < k; ++i) trace_steps({"Mul", "Add"}, "float32", 4, p.rLength, loc, w);
        trace_steps({std::is_same<T, half>::value ? "Cast" : "Adds"}, "float32", 4, n, loc, w);
    }
}

template <typename U, typename T, const NormalizeConfig& config>
inline void normalize_run(const LocalTensor<T>& y, const LocalTensor<float>& rstd, const LocalTensor<float>& mean,
                          const LocalTensor<float>& var, const LocalTensor<T>& x, const LocalTensor<U>& gamma,
                          const LocalTensor<U>& beta, const LocalTensor<uint8_t>* tmp, float eps,
                          const NormalizePara& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert((std::is_same<T, float>::value && std::is_same<U, float>::value) ||
                      (std::is_same<T, half>::value && (std::is_same<U, half>::value || std::is_same<U, float>::value)),
                  "[dtype-unsupported] Normalize takes T float with U float, or T half with U half or float");
    static_assert(!config.isOnlyOutput, "[not-emulated] Normalize's isOnlyOutput is not supported on Atlas A2");
    touch(loc);
    normalize_check<U, T>(p, tmp, loc);
    const uint64_t n = uint64_t(p.aLength) * p.rLengthWithPadding;
    const char* api = "Normalize";
    vec_src(x, api, n, loc), vec_src(mean, api, p.aLength, loc), vec_src(var, api, p.aLength, loc);
    if (!config.isNoGamma) vec_src(gamma, api, p.rLength, loc);
    if (!config.isNoBeta) vec_src(beta, api, p.rLength, loc);
    vec_dst(y, api, n, loc), vec_dst(rstd, api, p.aLength, loc);
    normalize_compute<U, T, config>(y.data(), rstd.data(), mean.data(), var.data(), x.data(), gamma.data(), beta.data(),
                                    eps, p);
    ub_mark(y.range(n)), ub_mark(rstd.range(p.aLength));
    const uint64_t bytes = tmp ? uint64_t(tmp->GetSize()) : uint64_t(rt().ub_bytes) - ub_free_base();
    normalize_trace<U, T>(p, normalize_rows<U>(bytes / 4, p), y.range(n), x.range(n), loc);
}

}  // namespace detail

template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
__aicore__ inline void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd,
                                 const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                                 const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const float epsilon,
                                 const NormalizePara& para, SAGE_LOC) {
    detail::normalize_run<U, T, config>(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta,
                                        &sharedTmpBuffer, epsilon, para, loc);
}

template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
__aicore__ inline void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd,
                                 const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                                 const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
                                 const float epsilon, const NormalizePara& para, SAGE_LOC) {
    detail::normalize_run<U, T, config>(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta, nullptr,
                                        epsilon, para, loc);
}

}  // namespace AscendC
