// DeepNorm (adv_api/normalization/deepnorm.h):
//   DeepNorm<T, isReuseSrc = false, isBasicBlock = false>(dst, mean, rstd, src, gx, beta, gamma,
//                                                          [sharedTmpBuffer,] alpha, epsilon, DeepNormTiling& tiling)
//       LayerNorm(alpha * src + gx) per row of H, the shape from the tiling; `rstd` receives the
//       variance, as the implementation writes it. half and float.
//
// As the device computes it (docs: DeepNorm.md; deepnorm_common_impl.h), in float: Muls(alpha),
// Add(gx); mean and variance as LayerNorm's (Muls by 1/originalH first) but each row summed over
// its originalH columns by RepeatReduceSum, 64 at a time and again over the partial sums; then
// Adds(epsilon), Sqrt, Div(1, .), Mul by x - mean, Mul gamma, Add beta.
#pragma once

#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "deepnorm_tiling.h"
#include "layernorm.h"
#include "rmsnorm.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void deepnorm_row(std::vector<float>& x, const DeepNormTiling& t, float eps, const T* gamma, const T* beta,
                         T* out, float* mean, float* var) {
    const uint32_t h = t.hLength, oh = t.originalHLength;
    const float inv = t.lastDimValueBack;
    std::vector<float> q(oh);
    for (uint32_t j = 0; j < oh; ++j) q[j] = x[j] * inv;
    *mean = sage::sim::repeat_tree_sum<float>(q.data(), q.size(), 64);
    for (uint32_t j = 0; j < h; ++j) x[j] = x[j] + -*mean;
    for (uint32_t j = 0; j < oh; ++j) q[j] = (x[j] * x[j]) * inv;
    *var = sage::sim::repeat_tree_sum<float>(q.data(), q.size(), 64);
    const float rstd = 1.0f / std::sqrt(*var + eps);
    for (uint32_t j = 0; j < h; ++j) out[j] = sage::sim::down<T>(x[j] * rstd * float(gamma[j]) + float(beta[j]));
}

template <typename T, bool isReuseSrc>
inline void deepnorm_run(const LocalTensor<T>& dst, const LocalTensor<T>& mean, const LocalTensor<T>& rstd,
                         const LocalTensor<T>& src, const LocalTensor<T>& gx, const LocalTensor<T>& beta,
                         const LocalTensor<T>& gamma, const LocalTensor<uint8_t>* tmp, float alpha, float eps,
                         const DeepNormTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] DeepNorm takes half or float");
    touch(loc);
    const LayerNormTiling lt = layernorm_sizes::from_deep(t);
    layernorm_check<T>(lt, tmp, isReuseSrc, loc);
    const uint32_t h = t.hLength;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, n = rows * h;
    vec_src(src, "DeepNorm", n, loc);
    vec_src(gx, "DeepNorm", n, loc);
    vec_src(gamma, "DeepNorm", h, loc);
    vec_src(beta, "DeepNorm", h, loc);
    vec_dst(dst, "DeepNorm", n, loc);
    vec_dst(mean, "DeepNorm", rows, loc);
    vec_dst(rstd, "DeepNorm", rows, loc);
    std::vector<float> row(h);
    std::vector<T> out(h);
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint32_t j = 0; j < h; ++j) row[j] = float(gx.data()[r * h + j]) + float(src.data()[r * h + j]) * alpha;
        float m, v;
        deepnorm_row<T>(row, t, eps, gamma.data(), beta.data(), out.data(), &m, &v);
        memcpy(dst.data() + r * h, out.data(), h * sizeof(T));
        mean.data()[r] = down<T>(m);
        rstd.data()[r] = down<T>(v);
    }
    ub_mark(dst.range(n));
    ub_mark(mean.range(rows));
    ub_mark(rstd.range(rows));
    for (uint64_t r = 0; r < rows; r += t.bsCurLength) {
        const uint64_t e = std::min<uint64_t>(t.bsCurLength, rows - r) * h;
        trace_steps({"Muls", "Add"}, "float32", 4, e, loc, dst.range(n), src.range(n), gx.range(n));
        layernorm_trace<T>(std::min<uint64_t>(t.bsCurLength, rows - r), h, dst.range(n), src.range(n), loc);
    }
}

}  // namespace detail

template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
__aicore__ inline void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal,
                                const LocalTensor<T>& rstdLocal, const LocalTensor<T>& srcLocal,
                                const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
                                const LocalTensor<T>& gammaLocal, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                const T alpha, const T epsilon, DeepNormTiling& tiling, SAGE_LOC) {
    detail::deepnorm_run<T, isReuseSrc>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal, gammaLocal,
                                        &sharedTmpBuffer, float(alpha), float(epsilon), tiling, loc);
}

template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
__aicore__ inline void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal,
                                const LocalTensor<T>& rstdLocal, const LocalTensor<T>& srcLocal,
                                const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
                                const LocalTensor<T>& gammaLocal, const T alpha, const T epsilon,
                                DeepNormTiling& tiling, SAGE_LOC) {
    detail::deepnorm_run<T, isReuseSrc>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal, gammaLocal,
                                        nullptr, float(alpha), float(epsilon), tiling, loc);
}

}  // namespace AscendC
