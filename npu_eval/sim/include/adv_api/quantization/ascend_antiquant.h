// AscendAntiQuant (adv_api/quantization, asc-devkit include/adv_api/quantization/ascend_antiquant.h):
// int8 -> half or bfloat16 on Atlas A2, dst = scale * (src + offset).
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/AscendAntiQuant.md. src is [K, N]
// (k = K rows; isTranspose: [N, K], k = K columns), src.GetSize() elements. Per channel, offset and
// scale are [G, N] (transposed: [N, G]) and each group of K / G rows (columns) shares a row
// (column) of them: dst[i][j] = scale[i / gs][j] * (src[i][j] + offset[i / gs][j]). Their shape comes
// from the AntiQuantShapeInfo argument, else from the tensor's SetShapeInfo, else [1, size]
// ([size, 1] transposed); a scale without its own shape takes the offset's. Per tensor, offset
// and scale are scalars. Numerics (实现原理): a half output casts src to half and runs Add(s) then
// Mul(s) in half, each rounded to half, so it can differ from a float computation rounded once; a
// bfloat16 output casts src through half to float, adds and multiplies in float and rounds once to
// bfloat16. A half output needs no temporary space; a bfloat16 one needs
// GetAscendAntiQuantMaxMinTmpSize's minimum. int4b_t input is not emulated yet.
#pragma once

#include "../../basic_api/kernel_operator_vec_vconv_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "ascend_antiquant_tiling.h"

namespace AscendC {

struct AntiQuantShapeInfo {
    uint32_t offsetHeight{0};
    uint32_t offsetWidth{0};
    uint32_t scaleHeight{0};
    uint32_t scaleWidth{0};
};

namespace detail {

// A per-channel operand: its values and its [height, width].
template <typename O>
struct AntiQuantOperand {
    const LocalTensor<O>* tensor;
    O value;
    uint32_t h, w;
    float at(uint32_t r, uint32_t c) const {
        return tensor ? float(tensor->data()[uint64_t(r) * w + c]) : float(value);
    }
};

// The [height, width] of a per-channel operand: the argument's, the tensor's ShapeInfo, or the default.
template <typename O>
inline void antiquant_shape(const LocalTensor<O>& t, uint32_t h, uint32_t w, bool transposed, uint32_t& oh,
                            uint32_t& ow) {
    if (h && w) {
        oh = h, ow = w;
        return;
    }
    const ShapeInfo si = t.GetShapeInfo();
    if (si.shapeDim == 2) {
        oh = si.shape[0], ow = si.shape[1];
    } else if (transposed) {
        oh = t.GetSize(), ow = 1;
    } else {
        oh = 1, ow = t.GetSize();
    }
}

// dst = scale * (src + offset) over [rows, cols], offset and scale shared by groups of gs rows
// (transposed: columns): in half, each step rounded, for a half output; in float otherwise.
template <typename I, typename O, bool isTranspose>
inline void antiquant_values(const LocalTensor<O>& dst, const LocalTensor<I>& src, const AntiQuantOperand<O>& off,
                             const AntiQuantOperand<O>& scale, uint32_t rows, uint32_t cols, uint32_t gs) {
    using sage::sim::down;
    const I* s = src.data();
    O* d = dst.data();
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) {
            const uint32_t orow = isTranspose ? r : r / gs, ocol = isTranspose ? c / gs : c;
            const float x = float(s[uint64_t(r) * cols + c]);
            float y;
            if constexpr (std::is_same<O, half>::value) {
                y = float(down<half>(float(down<half>(x + off.at(orow, ocol))) * scale.at(orow, ocol)));
            } else {
                y = (x + off.at(orow, ocol)) * scale.at(orow, ocol);
            }
            d[uint64_t(r) * cols + c] = down<O>(y);
        }
    }
}

template <typename I, typename O, bool isTranspose>
inline void antiquant_run(const LocalTensor<O>& dst, const LocalTensor<I>& src, AntiQuantOperand<O> off,
                          AntiQuantOperand<O> scale, const LocalTensor<uint8_t>* tmp, uint32_t k,
                          sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<I, int8_t>::value,
                  "[dtype-unsupported] AscendAntiQuant: the emulator takes int8_t input (int4b_t is not emulated yet)");
    static_assert(one_of<O, half, bfloat16_t>(), "[dtype-unsupported] AscendAntiQuant outputs half or bfloat16_t on Atlas A2");
    touch(loc);
    const uint32_t total = src.GetSize();
    const uint32_t rows = isTranspose ? (k ? total / k : 0) : k, cols = isTranspose ? k : (k ? total / k : 0);
    const uint32_t n = isTranspose ? rows : cols;  // the channel axis
    const uint32_t groups = off.tensor ? (isTranspose ? off.w : off.h) : (scale.tensor ? (isTranspose ? scale.w : scale.h) : 1);
    const bool offOk = !off.tensor || (isTranspose ? off.h == n : off.w == n);
    const bool scaleOk = !scale.tensor || (isTranspose ? scale.h == n && scale.w == groups : scale.w == n && scale.h == groups);
    if (k == 0 || total % k != 0 || total % 32 != 0 || groups == 0 || k % groups != 0 || !offOk || !scaleOk ||
        (isTranspose && k % 32 != 0)) {
        fail("api-misuse", loc,
             "AscendAntiQuant on %u elements with k = %u%s: src must be [K, N] (k = K rows%s), 32-byte aligned, and "
             "offset/scale [G, N] (transposed [N, G]) with G dividing K; got offset [%u, %u], scale [%u, %u] "
             "(AscendAntiQuant.md)",
             total, k, isTranspose ? " (isTranspose)" : "", isTranspose ? ", transposed: [N, K] with K 32-byte aligned" : "",
             off.h, off.w, scale.h, scale.w);
    }
    vec_src(src, "AscendAntiQuant", total, loc);
    if (off.tensor) vec_src(*off.tensor, "AscendAntiQuant", uint64_t(off.h) * off.w, loc);
    if (scale.tensor) vec_src(*scale.tensor, "AscendAntiQuant", uint64_t(scale.h) * scale.w, loc);
    vec_dst(dst, "AscendAntiQuant", total, loc);
    const TensorShape srcShape(std::vector<int64_t>{int64_t(isTranspose ? n : k), int64_t(isTranspose ? k : n)});
    const TensorShape scaleShape(std::vector<int64_t>{int64_t(scale.h), int64_t(scale.w)});
    const TensorDataType outType = std::is_same<O, half>::value ? ge::DT_FLOAT16 : ge::DT_BF16;
    const uint32_t minTmp = GetAscendAntiQuantMinTmpSize(srcShape, scaleShape, isTranspose, ge::DT_INT8, outType);
    advmath::Tmp t = advmath::take_tmp("AscendAntiQuant", "GetAscendAntiQuantMaxMinTmpSize", tmp, total, minTmp, loc);
    const uint32_t gs = k / (groups ? groups : 1);
    antiquant_values<I, O, isTranspose>(dst, src, off, scale, rows, cols, gs);
    ub_mark(dst.range(total));
    advmath::done(t);
    const bool toFloat = !std::is_same<O, half>::value;
    const char* calc = toFloat ? "float" : "half";
    trace_steps({"Cast"}, "int8_t", 1, total, loc, toFloat ? t.range : dst.range(total), src.range(total));
    if (toFloat) trace_steps({"Cast"}, "half", 2, total, loc, t.range, t.range);
    trace_steps({off.tensor ? "Add" : "Adds", scale.tensor ? "Mul" : "Muls"}, calc, toFloat ? 4 : 2, total, loc,
                toFloat ? t.range : dst.range(total), toFloat ? t.range : dst.range(total));
    if (toFloat) trace_steps({"Cast"}, "float", 4, total, loc, dst.range(total), t.range);
}

template <typename O, bool isTranspose>
inline AntiQuantOperand<O> antiquant_tensor(const LocalTensor<O>& t, uint32_t h, uint32_t w) {
    AntiQuantOperand<O> o{&t, O(), 0, 0};
    antiquant_shape(t, h, w, isTranspose, o.h, o.w);
    return o;
}

template <typename O>
inline AntiQuantOperand<O> antiquant_scalar(O v) {
    return AntiQuantOperand<O>{nullptr, v, 1, 1};
}

}  // namespace detail

template <typename InputDataType, typename OutputDataType, bool isTranspose>
__aicore__ inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                                       const LocalTensor<OutputDataType>& offset,
                                       const LocalTensor<OutputDataType>& scale,
                                       const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                                       const AntiQuantShapeInfo& shapeInfo = {}, SAGE_LOC) {
    auto o = detail::antiquant_tensor<OutputDataType, isTranspose>(offset, shapeInfo.offsetHeight, shapeInfo.offsetWidth);
    auto s = detail::antiquant_tensor<OutputDataType, isTranspose>(scale, shapeInfo.scaleHeight, shapeInfo.scaleWidth);
    if (!shapeInfo.scaleHeight && scale.GetShapeInfo().shapeDim != 2) s.h = o.h, s.w = o.w;
    detail::antiquant_run<InputDataType, OutputDataType, isTranspose>(dst, src, o, s, &sharedTmpBuffer, k, loc);
}

template <typename InputDataType, typename OutputDataType, bool isTranspose>
__aicore__ inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                                       const LocalTensor<OutputDataType>& scale,
                                       const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                                       const AntiQuantShapeInfo& shapeInfo = {}, SAGE_LOC) {
    auto s = detail::antiquant_tensor<OutputDataType, isTranspose>(scale, shapeInfo.scaleHeight, shapeInfo.scaleWidth);
    detail::antiquant_run<InputDataType, OutputDataType, isTranspose>(
        dst, src, detail::antiquant_scalar(OutputDataType(0.0f)), s, &sharedTmpBuffer, k, loc);
}

template <typename InputDataType, typename OutputDataType, bool isTranspose>
__aicore__ inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                                       const LocalTensor<OutputDataType>& offset,
                                       const LocalTensor<OutputDataType>& scale, const uint32_t k,
                                       const AntiQuantShapeInfo& shapeInfo = {}, SAGE_LOC) {
    auto o = detail::antiquant_tensor<OutputDataType, isTranspose>(offset, shapeInfo.offsetHeight, shapeInfo.offsetWidth);
    auto s = detail::antiquant_tensor<OutputDataType, isTranspose>(scale, shapeInfo.scaleHeight, shapeInfo.scaleWidth);
    if (!shapeInfo.scaleHeight && scale.GetShapeInfo().shapeDim != 2) s.h = o.h, s.w = o.w;
    detail::antiquant_run<InputDataType, OutputDataType, isTranspose>(dst, src, o, s, nullptr, k, loc);
}

template <typename InputDataType, typename OutputDataType, bool isTranspose>
__aicore__ inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                                       const OutputDataType offset, const OutputDataType scale,
                                       const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                                       const AntiQuantShapeInfo& shapeInfo = {}, SAGE_LOC) {
    (void)shapeInfo;
    detail::antiquant_run<InputDataType, OutputDataType, isTranspose>(
        dst, src, detail::antiquant_scalar(offset), detail::antiquant_scalar(scale), &sharedTmpBuffer, k, loc);
}

template <typename InputDataType, typename OutputDataType, bool isTranspose>
__aicore__ inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                                       const OutputDataType scale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                       const uint32_t k, const AntiQuantShapeInfo& shapeInfo = {}, SAGE_LOC) {
    (void)shapeInfo;
    detail::antiquant_run<InputDataType, OutputDataType, isTranspose>(
        dst, src, detail::antiquant_scalar(OutputDataType(0.0f)), detail::antiquant_scalar(scale), &sharedTmpBuffer, k,
        loc);
}

template <typename InputDataType, typename OutputDataType, bool isTranspose>
__aicore__ inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                                       const OutputDataType offset, const OutputDataType scale, const uint32_t k,
                                       const AntiQuantShapeInfo& shapeInfo = {}, SAGE_LOC) {
    (void)shapeInfo;
    detail::antiquant_run<InputDataType, OutputDataType, isTranspose>(
        dst, src, detail::antiquant_scalar(offset), detail::antiquant_scalar(scale), nullptr, k, loc);
}

}  // namespace AscendC
