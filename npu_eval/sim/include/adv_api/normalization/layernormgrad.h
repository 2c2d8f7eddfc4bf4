// LayerNormGrad (adv_api/normalization/layernormgrad.h), the [B, S, H] backward of LayerNorm:
//   LayerNormGrad<T, isReuseSource = false>(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean,
//                                           inputGamma, [sharedTmpBuffer,] epsilon, LayerNormGradTiling& tiling,
//                                           const LayerNormGradShapeInfo& shapeInfo = {})
//   per row (docs: LayerNormGrad.md, 算法公式 and 实现原理):
//     x1 = dy * gamma, x2 = x - mean, pd_var = sum(-0.5 * x1 * x2 * (var + eps)^-1.5),
//     pd_mean = sum(-x1 * (var + eps)^-0.5) + pd_var / H * sum(-2 * x2),
//     pd_x = x1 * (var + eps)^-0.5 + pd_var * 2 / H * x2 + pd_mean / H, res_for_gamma = x2 * (var + eps)^-0.5
//
// As the device computes it (the generic ND implementation), in float (half inputs are cast up,
// the outputs back): (var + eps)^-1.5 as 1 / Sqrt((v * v) * v) and (var + eps)^-0.5 as 1 / Sqrt(v);
// the products in the order the steps issue them ((x2 * r15) * x1 * -0.5); each row sum over all
// hLength columns (padding included: x - mean is -mean there) by repeated WholeReduceSum passes of
// 64 floats; 1/H and 2/H are the tiling's (originalHLength). Rows come nohCalSize at a time.
#pragma once

#include <vector>

#include "../../basic_api/kernel_operator_vec_reduce_intf.h"
#include "../../sage_sim/adv.h"
#include "layernormgrad_tiling.h"

namespace AscendC {

struct LayerNormGradShapeInfo {
    DataFormat dataFormat = DataFormat::ND;
};

namespace detail {

template <typename T>
inline void layernormgrad_check(const LayerNormGradTiling& t, const LocalTensor<uint8_t>* tmp, bool reuse,
                                sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (t.hLength == 0 || t.oneCalSize == 0 || t.nohCalSize == 0) {
        fail("ub-out-of-bounds", loc,
             "LayerNormGrad with an empty tiling (hLength %u, oneCalSize %u): GetLayerNormGradNDTilingInfo fills it "
             "only when its stackBufferSize holds one row per buffer; pass at least GetLayerNormGradMaxMinTmpSize's "
             "minimum", t.hLength, t.oneCalSize);
    }
    if (t.hLength * sizeof(T) % 32 != 0) {
        fail("ub-out-of-bounds", loc, "LayerNormGrad with H = %u: the last axis must be 32-byte aligned (pad H to a "
             "multiple of %u with zeros)", t.hLength, uint32_t(32 / sizeof(T)));
    }
    uint64_t need = layernormgrad_sizes::min_bytes(t.bLength, t.sLength, t.hLength, sizeof(T), reuse);
    const char* how = "GetLayerNormGradMaxMinTmpSize's minimum: k * min(B*S*H, H*H) * sizeof(T), k = 9 half, 6 float";
    const uint64_t plan = layernormgrad_sizes::planned_bytes(t, sizeof(T), reuse);
    if (plan > need) {
        need = plan;
        how = "the tiling's work area: k buffers of oneCalSize floats (its row count rounded up to a block), as "
              "GetLayerNormGradNDTilingInfo planned";
    }
    tmp_or_free_check(tmp, need, "LayerNormGrad", how, loc);
}

// One row of H floats: the outputs pd_x and res_for_gamma (the device's step order, see above).
inline void layernormgrad_row(const float* dy, const float* x, const float* gamma, float mean, float var, float eps,
                              float inv, float inv2, uint32_t h, float* pdx, float* res) {
    std::vector<float> x1(h), x2(h), x3(h), t(h);
    const float v = var + eps;
    const float r15 = 1.0f / std::sqrt((v * v) * v), r05 = 1.0f / std::sqrt(v);
    for (uint32_t j = 0; j < h; ++j) {
        x1[j] = dy[j] * gamma[j];
        x2[j] = x[j] - mean;
        t[j] = (x1[j] * (x2[j] * r15)) * -0.5f;
    }
    const float pdVar = sage::sim::repeat_tree_sum<float>(t.data(), h, 64);
    for (uint32_t j = 0; j < h; ++j) {
        res[j] = x2[j] * r05;
        x3[j] = x1[j] * r05;
        t[j] = x3[j] * -1.0f;
    }
    float pdMean = sage::sim::repeat_tree_sum<float>(t.data(), h, 64);
    for (uint32_t j = 0; j < h; ++j) t[j] = x2[j] * -2.0f;
    pdMean = pdMean + pdVar * (sage::sim::repeat_tree_sum<float>(t.data(), h, 64) * inv);
    const float a = pdVar * inv2, m = pdMean * inv;
    for (uint32_t j = 0; j < h; ++j) pdx[j] = (a * x2[j] + m) + x3[j];
}

template <typename T>
inline void layernormgrad_trace(uint64_t rows, uint32_t h, sage::sim::UbRange w, sage::sim::UbRange r,
                                sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const uint64_t n = rows * h;
    const bool half_in = std::is_same<T, half>::value;
    if (half_in) trace_steps({"Cast", "Cast", "Cast"}, "float16", 2, n, loc, w, r);
    trace_steps({"Mul", "Brcb", "Sub"}, "float32", 4, n, loc, w, r);
    trace_steps({"Adds", "Mul", "Mul", "Sqrt", "Div"}, "float32", 4, rows, loc, w);
    trace_steps({"Brcb", "Mul", "Mul", "Muls", "WholeReduceSum"}, "float32", 4, n, loc, w);
    trace_steps({"Adds", "Sqrt", "Div"}, "float32", 4, rows, loc, w);
    trace_steps({"Brcb", "Mul", "Mul", "Muls", "WholeReduceSum", "Muls", "WholeReduceSum"}, "float32", 4, n, loc, w);
    trace_steps({"Muls", "Mul", "Add", "Muls"}, "float32", 4, rows, loc, w);
    trace_steps({"Brcb", "Mul", "Muls", "Brcb", "Add", "Add"}, "float32", 4, n, loc, w);
    if (half_in) trace_steps({"Cast", "Cast"}, "float32", 4, n, loc, w);
}

template <typename T, bool isReuseSource>
inline void layernormgrad_run(const LocalTensor<T>& pdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& dy,
                              const LocalTensor<T>& x, const LocalTensor<T>& var, const LocalTensor<T>& mean,
                              const LocalTensor<T>& gamma, const LocalTensor<uint8_t>* tmp, float eps,
                              const LayerNormGradTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] LayerNormGrad takes half or float");
    touch(loc);
    layernormgrad_check<T>(t, tmp, isReuseSource, loc);
    const uint32_t h = t.hLength;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, n = rows * h;
    const char* api = "LayerNormGrad";
    vec_src(dy, api, n, loc), vec_src(x, api, n, loc), vec_src(gamma, api, h, loc);
    vec_src(var, api, rows, loc), vec_src(mean, api, rows, loc);
    vec_dst(pdX, api, n, loc), vec_dst(resForGamma, api, n, loc);
    const float inv = layernormgrad_sizes::bits_float(t.lastDimValueBack);
    const float inv2 = layernormgrad_sizes::bits_float(t.lastDimValueBackMulTwo);
    std::vector<float> fdy(h), fx(h), fg(h), px(h), rg(h);
    for (uint32_t j = 0; j < h; ++j) fg[j] = float(gamma.data()[j]);
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint32_t j = 0; j < h; ++j) fdy[j] = float(dy.data()[r * h + j]), fx[j] = float(x.data()[r * h + j]);
        layernormgrad_row(fdy.data(), fx.data(), fg.data(), float(mean.data()[r]), float(var.data()[r]), eps, inv,
                          inv2, h, px.data(), rg.data());
        for (uint32_t j = 0; j < h; ++j) {
            pdX.data()[r * h + j] = down<T>(px[j]);
            resForGamma.data()[r * h + j] = down<T>(rg[j]);
        }
    }
    ub_mark(pdX.range(n));
    ub_mark(resForGamma.range(n));
    for (uint64_t r = 0; r < rows; r += t.nohCalSize) {
        layernormgrad_trace<T>(std::min<uint64_t>(t.nohCalSize, rows - r), h, pdX.range(n), x.range(n), loc);
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma,
                                     const LocalTensor<T>& inputDy, const LocalTensor<T>& inputX,
                                     const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                                     const LocalTensor<T>& inputGamma, LocalTensor<uint8_t>& sharedTmpBuffer, T epsilon,
                                     LayerNormGradTiling& tiling, const LayerNormGradShapeInfo& shapeInfo = {},
                                     SAGE_LOC) {
    (void)shapeInfo;
    detail::layernormgrad_run<T, isReuseSource>(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean,
                                                inputGamma, &sharedTmpBuffer, float(epsilon), tiling, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma,
                                     const LocalTensor<T>& inputDy, const LocalTensor<T>& inputX,
                                     const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                                     const LocalTensor<T>& inputGamma, T epsilon, LayerNormGradTiling& tiling,
                                     const LayerNormGradShapeInfo& shapeInfo = {}, SAGE_LOC) {
    (void)shapeInfo;
    detail::layernormgrad_run<T, isReuseSource>(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean,
                                                inputGamma, nullptr, float(epsilon), tiling, loc);
}

}  // namespace AscendC
