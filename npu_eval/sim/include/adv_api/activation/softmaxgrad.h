// SoftmaxGrad and SoftmaxGradFront (adv_api/activation/softmaxgrad.h), ND format:
//   SoftmaxGrad<T, isReuseSource, isDataFormatNZ>(dst, grad, src, [tmp,] tiling, isFront = false, shapeInfo = {})
//   SoftmaxGradFront<T, isBasicBlock, isDataFormatNZ>(dst, grad, src, [tmp,] tiling, shapeInfo = {})
//       per row: s = rowsum(grad * src); isFront (and SoftmaxGradFront) writes s as one 32-byte block
//       per row, otherwise dst = (grad - s) * src. half and float.
//
// As the device computes it (docs: SoftmaxGrad.md, 实现原理: mul, reducesum, broadcast, sub, mul):
// half is cast to float first, the sum over the first oriSrcK columns as SoftMax's. The
// sharedTmpBuffer holds at least GetSoftMaxGradMinTmpSize (and the tiling's planned rows when it
// is for this shape).
#pragma once

#include "softmax.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void softmax_grad_run(const LocalTensor<T>& dst, const LocalTensor<T>& grad, const LocalTensor<T>& src,
                             const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling, bool isFront,
                             const SoftMaxShapeInfo& info, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] SoftmaxGrad takes half or float");
    const char* api = isFront ? "SoftmaxGradFront" : "SoftmaxGrad";
    touch(loc);
    const SmShape s = softmax_shape(tiling, info, 0);
    softmax_shape_check<T>(api, s, info, loc);
    const uint32_t epb = 32 / sizeof(T);
    const uint64_t n = uint64_t(s.m) * s.k, nd = isFront ? uint64_t(s.m) * epb : n;
    vec_src(grad, api, n, loc);
    vec_src(src, api, n, loc);
    vec_dst(dst, api, nd, loc);
    const uint64_t row = uint64_t(softmax_sizes::grad_row_floats(s.k, sizeof(T), isFront)) * 4;
    uint32_t tile = tiling.srcM == s.m && tiling.srcK == s.k && tiling.splitM ? tiling.splitM : s.m;
    if (tmp) {
        const bool planned = tiling.srcM == s.m && tiling.srcK == s.k && tiling.splitM * row > row;
        tmp_check(*tmp, planned ? tiling.splitM * row : row, api,
                  planned ? "the tiling's splitM rows, as SoftMaxGradTilingFunc planned" : "GetSoftMaxGradMinTmpSize",
                  loc);
        if (!planned && tiling.srcM != s.m) tile = uint32_t(std::max<uint64_t>(1, tmp->GetSize() / row));
    }
    std::vector<float> p(s.k), out(s.k);
    for (uint32_t r = 0; r < s.m; ++r) {
        const uint64_t o = uint64_t(r) * s.k;
        for (uint32_t j = 0; j < s.k; ++j) p[j] = float(grad.data()[o + j]) * float(src.data()[o + j]);
        const float sm = row_sum(p.data(), s.oriK);
        if (isFront) {
            for (uint32_t j = 0; j < epb; ++j) dst.data()[uint64_t(r) * epb + j] = down<T>(sm);
            continue;
        }
        for (uint32_t j = 0; j < s.k; ++j) out[j] = (float(grad.data()[o + j]) - sm) * float(src.data()[o + j]);
        for (uint32_t j = 0; j < s.k; ++j) dst.data()[o + j] = down<T>(out[j]);
    }
    ub_mark(dst.range(nd));
    for (uint32_t r = 0; r < s.m; r += tile) {
        const uint64_t rn = uint64_t(std::min(tile, s.m - r)) * s.k;
        if (std::is_same<T, half>::value) trace_steps({"Cast", "Cast"}, "float16", 2, rn, loc, dst.range(nd), src.range(n));
        trace_steps({"Mul", "ReduceSum", "Brcb"}, "float32", 4, rn, loc, dst.range(nd), src.range(n), grad.range(n));
        if (!isFront) trace_steps({"Sub", "Mul"}, "float32", 4, rn, loc, dst.range(nd), src.range(n), grad.range(n));
        if (std::is_same<T, half>::value) trace_steps({"Cast"}, "float32", 4, rn, loc, dst.range(nd));
    }
}

}  // namespace detail

template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
__aicore__ inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                                   const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling, bool isFront = false,
                                   const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftmaxGrad: the NZ data format is not emulated");
    detail::softmax_grad_run<T>(dstTensor, gradTensor, srcTensor, nullptr, tiling, isFront, softmaxShapeInfo, loc);
}

template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
__aicore__ inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                                   const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                   const SoftMaxTiling& tiling, bool isFront = false,
                                   const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftmaxGrad: the NZ data format is not emulated");
    detail::softmax_grad_run<T>(dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling, isFront, softmaxShapeInfo,
                                loc);
}

template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
__aicore__ inline void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                                        const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                                        const SoftMaxShapeInfo& softmaxShapeInfo = {}, SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftmaxGradFront: the NZ data format is not emulated");
    detail::softmax_grad_run<T>(dstTensor, gradTensor, srcTensor, nullptr, tiling, true, softmaxShapeInfo, loc);
}

template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
__aicore__ inline void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                                        const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                        const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                                        SAGE_LOC) {
    static_assert(!isDataFormatNZ, "[api-unsupported] SoftmaxGradFront: the NZ data format is not emulated");
    detail::softmax_grad_run<T>(dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling, true, softmaxShapeInfo,
                                loc);
}

}  // namespace AscendC
