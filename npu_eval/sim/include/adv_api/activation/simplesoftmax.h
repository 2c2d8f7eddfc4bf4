// SimpleSoftMax (adv_api/activation/simplesoftmax.h), ND format:
//   SimpleSoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dst, inSum, inMax, src, [tmp,] tiling, shapeInfo)
//       dst = exp(src - inMax) / inSum per row, with the row's max and sum given (one 32-byte block per
//       row, as SoftMax writes them). half and float; half dst/src may take float sum/max.
//
// As the device computes it (docs: SimpleSoftMax.md): half is cast to float, Sub, Exp and Div run
// in float, the result is cast back; the temporary buffer follows SoftMax's sizes (the same
// SoftMax/SimpleSoftMax tiling functions).
#pragma once

#include "softmax.h"

namespace AscendC {
namespace detail {

template <typename T, typename U>
inline void simple_softmax_run(const LocalTensor<T>& dst, const LocalTensor<U>& inSum, const LocalTensor<U>& inMax,
                               const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                               const SoftMaxShapeInfo& info, uint32_t cfgOriK, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] SimpleSoftMax takes half or float");
    const char* api = "SimpleSoftMax";
    touch(loc);
    const SmShape s = softmax_shape(tiling, info, cfgOriK);
    softmax_shape_check<T>(api, s, info, loc);
    const uint32_t epb = 32 / sizeof(U);
    const uint64_t n = uint64_t(s.m) * s.k, nr = uint64_t(s.m) * epb;
    vec_src(src, api, n, loc);
    vec_src(inSum, api, nr, loc);
    vec_src(inMax, api, nr, loc);
    vec_dst(dst, api, n, loc);
    const uint32_t tile = softmax_rows_per_tile<U>(api, s, tiling, tmp, false, loc);
    for (uint32_t r = 0; r < s.m; ++r) {
        const float mx = float(inMax.data()[uint64_t(r) * epb]), sm = float(inSum.data()[uint64_t(r) * epb]);
        for (uint32_t j = 0; j < s.k; ++j) {
            const uint64_t i = uint64_t(r) * s.k + j;
            dst.data()[i] = down<T>(std::exp(float(src.data()[i]) - mx) / sm);
        }
    }
    ub_mark(dst.range(n));
    for (uint32_t r = 0; r < s.m; r += tile) {
        const uint64_t rows_n = uint64_t(std::min(tile, s.m - r)) * s.k;
        if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float16", 2, rows_n, loc, dst.range(n), src.range(n));
        trace_steps({"Sub", "Exp", "Div"}, "float32", 4, rows_n, loc, dst.range(n), src.range(n), inMax.range(nr));
        if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float32", 4, rows_n, loc, dst.range(n));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                                     const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                                     const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                     SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SimpleSoftMax: the NZ data format is not emulated");
    detail::simple_softmax_run<T, T>(dstTensor, inSumTensor, inMaxTensor, srcTensor, nullptr, tiling,
                                     softmaxShapeInfo, config.oriSrcK, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SimpleSoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& inSumTensor,
                                     const LocalTensor<float>& inMaxTensor, const LocalTensor<half>& srcTensor,
                                     const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                     SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SimpleSoftMax: the NZ data format is not emulated");
    detail::simple_softmax_run<half, float>(dstTensor, inSumTensor, inMaxTensor, srcTensor, nullptr, tiling,
                                            softmaxShapeInfo, config.oriSrcK, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                                     const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                                     const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                                     const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SimpleSoftMax: the NZ data format is not emulated");
    detail::simple_softmax_run<T, T>(dstTensor, inSumTensor, inMaxTensor, srcTensor, &sharedTmpBuffer, tiling,
                                     softmaxShapeInfo, config.oriSrcK, loc);
}

template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
__aicore__ inline void SimpleSoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& inSumTensor,
                                     const LocalTensor<float>& inMaxTensor, const LocalTensor<half>& srcTensor,
                                     const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                                     const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SimpleSoftMax: the NZ data format is not emulated");
    detail::simple_softmax_run<half, float>(dstTensor, inSumTensor, inMaxTensor, srcTensor, &sharedTmpBuffer, tiling,
                                            softmaxShapeInfo, config.oriSrcK, loc);
}

}  // namespace AscendC
