// LayerNormGradBeta (adv_api/normalization/layernormgradbeta.h), with LayerNormGrad the backward of
// LayerNorm:
//   LayerNormGradBeta<T, isReuseSource = false>(outputPdGamma, outputPdBeta, resForGamma, inputDy,
//                                               [sharedTmpBuffer,] LayerNormGradBetaTiling& tiling)
//   pd_gamma[h] = sum over the B*S rows of dy * res_for_gamma, pd_beta[h] = sum of dy (docs:
//   LayerNormGradBeta.md, 算法公式).
//
// As the device computes it: in float (half is cast up per pass and the sums cast back), each
// column summed row after row in order (one vector Add per row onto the running sums, first row
// copied), over the first originalHLength columns only: the columns past it are not written.
// Rows come oneCalSize / H at a time.
#pragma once

#include <vector>

#include "../../sage_sim/adv.h"
#include "layernormgrad_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void layernormgradbeta_check(const LayerNormGradBetaTiling& t, const LocalTensor<uint8_t>* tmp,
                                    sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (t.hLength == 0 || t.oneCalSize == 0 || t.originalHLength == 0 || t.originalHLength > t.hLength) {
        fail("ub-out-of-bounds", loc,
             "LayerNormGradBeta with an empty or inconsistent tiling (hLength %u, originalHLength %u, oneCalSize %u): "
             "fill it with GetLayerNormGradBetaNDTilingInfo from at least GetLayerNormGradBetaMaxMinTmpSize's minimum",
             t.hLength, t.originalHLength, t.oneCalSize);
    }
    uint64_t need = layernormgradbeta_sizes::min_bytes(t.hLength, sizeof(T));
    const char* how = "GetLayerNormGradBetaMaxMinTmpSize's minimum: c * H * 4, c = 4 half, 2 float";
    if (uint64_t(t.stackBufferSize) * 4 > need) {
        need = uint64_t(t.stackBufferSize) * 4;
        how = "the tiling's stackBufferSize, the work area GetLayerNormGradBetaNDTilingInfo planned in";
    }
    tmp_or_free_check(tmp, need, "LayerNormGradBeta", how, loc);
}

template <typename T, bool isReuseSource>
inline void layernormgradbeta_run(const LocalTensor<T>& pdGamma, const LocalTensor<T>& pdBeta,
                                  const LocalTensor<T>& res, const LocalTensor<T>& dy, const LocalTensor<uint8_t>* tmp,
                                  const LayerNormGradBetaTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] LayerNormGradBeta takes half or float");
    touch(loc);
    layernormgradbeta_check<T>(t, tmp, loc);
    const uint32_t h = t.hLength, oh = t.originalHLength;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, n = rows * h;
    const char* api = "LayerNormGradBeta";
    vec_src(res, api, n, loc), vec_src(dy, api, n, loc);
    vec_dst(pdGamma, api, oh, loc), vec_dst(pdBeta, api, oh, loc);
    std::vector<float> g(oh, 0.0f), b(oh, 0.0f);
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint32_t j = 0; j < oh; ++j) {
            const float d = float(dy.data()[r * h + j]), p = d * float(res.data()[r * h + j]);
            g[j] = r == 0 ? p : p + g[j];
            b[j] = r == 0 ? d : d + b[j];
        }
    }
    for (uint32_t j = 0; j < oh; ++j) pdGamma.data()[j] = down<T>(g[j]), pdBeta.data()[j] = down<T>(b[j]);
    ub_mark(pdGamma.range(oh));
    ub_mark(pdBeta.range(oh));
    const bool half_in = std::is_same<T, half>::value;
    const uint64_t per = std::max<uint64_t>(t.bsCurLength, 1);
    for (uint64_t r = 0; r < rows; r += per) {
        const uint64_t k = std::min<uint64_t>(per, rows - r);
        if (half_in) trace_steps({"Cast", "Cast"}, "float16", 2, k * h, loc, pdGamma.range(oh), dy.range(n));
        trace_steps({"Mul"}, "float32", 4, k * h, loc, pdGamma.range(oh), dy.range(n), res.range(n));
        for (uint64_t i = 0; i < 2 * k; ++i) trace_steps({"Add"}, "float32", 4, oh, loc, pdGamma.range(oh));
        if (half_in) trace_steps({"Cast", "Cast"}, "float32", 4, oh, loc, pdGamma.range(oh));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                                         const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                                         const LocalTensor<uint8_t>& sharedTmpBuffer,
                                         const LayerNormGradBetaTiling& tiling, SAGE_LOC) {
    detail::layernormgradbeta_run<T, isReuseSource>(outputPdGamma, outputPdBeta, resForGamma, inputDy,
                                                    &sharedTmpBuffer, tiling, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                                         const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                                         LayerNormGradBetaTiling& tiling, SAGE_LOC) {
    detail::layernormgradbeta_run<T, isReuseSource>(outputPdGamma, outputPdBeta, resForGamma, inputDy, nullptr,
                                                    tiling, loc);
}

}  // namespace AscendC
