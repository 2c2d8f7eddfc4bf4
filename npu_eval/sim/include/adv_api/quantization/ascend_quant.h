// AscendQuant (adv_api/quantization, asc-devkit include/adv_api/quantization/ascend_quant.h):
// int8 quantization on Atlas A2, per tensor (scalar scale and offset) and per channel (a scale
// tensor of scaleCount elements, offset scalar or tensor, element i using index i % scaleCount).
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/AscendQuant.md (实现原理): every
// step runs in half: a float src, scale or offset is cast to half first, then Mul(s) by the scale,
// Add(s) of the offset (each rounded to half), and the cast to int8 rounds half to even and
// saturates to [-128, 127]. So a float input carries half's precision and range (a scale beyond
// 65504 overflows), unlike a float64 reference. The temporary buffer (sharedTmpBuffer, or the free
// UB in the forms without one) must hold GetAscendQuantMaxMinTmpSize's minimum for the element
// count; the trace records the instruction sequence once per buffer's worth of elements.
// Ascend 950's other destination types, PER_TOKEN and PER_GROUP are not on Atlas A2.
#pragma once

#include "../../basic_api/kernel_operator_vec_vconv_intf.h"
#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "ascend_quant_tiling.h"

namespace AscendC {

struct AscendQuantConfig {
    __aicore__ constexpr AscendQuantConfig(const uint32_t calcCount, const uint32_t offsetCount,
                                           const uint32_t scaleCount, const uint32_t workLocalSize)
        : calcCount(calcCount), offsetCount(offsetCount), scaleCount(scaleCount), workLocalSize(workLocalSize) {}
    uint32_t calcCount = 0;
    uint32_t offsetCount = 0;
    uint32_t scaleCount = 0;
    uint32_t workLocalSize = 0;
};
constexpr AscendQuantConfig ASCEND_QUANT_DEFAULT_CFG = {0, 0, 0, 0};

enum class AscendQuantPolicy : int32_t {
    PER_TENSOR,
    PER_CHANNEL,
    PER_TOKEN,
    PER_GROUP,
    PER_CHANNEL_PER_GROUP,
    PER_TOKEN_PER_GROUP
};

struct AscendQuantParam {
    uint32_t m;
    uint32_t n;
    uint32_t calCount;
    uint32_t groupSize = 0;
};

namespace detail {

// One element as the device computes it: half(half(x) * scale) + offset, rounded to half, then to int8.
inline int8_t quant_one(float x, half scale, half offset) {
    using namespace sage::sim;
    half t = down<half>(float(down<half>(x)) * float(scale));
    t = down<half>(float(t) + float(offset));
    return convert<int8_t, half>(t, RoundMode::CAST_RINT);
}

// Where a per-channel call's scale (or offset) comes from: a tensor of `count` elements, or one value.
template <typename T>
struct QuantParam {
    const LocalTensor<T>* tensor;
    float value;
    uint32_t count;
    half at(uint32_t i) const { return sage::sim::down<half>(tensor ? float(tensor->data()[i % count]) : value); }
};

template <typename T>
inline void quant_run(const LocalTensor<int8_t>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                      const QuantParam<T>& scale, const QuantParam<T>& offset, uint32_t calCount,
                      sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(one_of<T, half, float>(), "[dtype-unsupported] AscendQuant takes half or float on Atlas A2");
    touch(loc);
    if (calCount % 32 != 0 || (scale.tensor && scale.count == 0) ||
        (offset.tensor && offset.count == 0)) {
        fail("api-misuse", loc,
             "AscendQuant on %u elements (scaleCount %u, offsetCount %u): the input and the int8 output must fill "
             "whole 32-byte blocks (a multiple of 32 elements), and a scale or offset tensor have at least one "
             "element (AscendQuant.md)",
             calCount, scale.count, offset.count);
    }
    vec_src(src, "AscendQuant", calCount, loc);
    if (scale.tensor) vec_src(*scale.tensor, "AscendQuant", scale.count, loc);
    if (offset.tensor) vec_src(*offset.tensor, "AscendQuant", offset.count, loc);
    vec_dst(dst, "AscendQuant", calCount, loc);
    uint32_t maxTmp = 0, minTmp = 0;
    GetAscendQuantMaxMinTmpSize(TensorShape({int64_t(calCount)}), sizeof(T), maxTmp, minTmp);
    advmath::Tmp t = advmath::take_tmp("AscendQuant", "GetAscendQuantMaxMinTmpSize", tmp, calCount, minTmp, loc);
    const T* s = src.data();
    int8_t* d = dst.data();
    for (uint32_t i = 0; i < calCount; ++i) d[i] = quant_one(float(s[i]), scale.at(i), offset.at(i));
    ub_mark(dst.range(calCount));
    advmath::done(t);
    const uint64_t chunk = t.bytes / 2 / 16 * 16;  // half intermediates per fill of the buffer
    const bool perChannel = scale.tensor != nullptr;
    if (sizeof(T) == 4) trace_chunks({"Cast"}, dtype_name<T>(), 4, calCount, chunk, loc, t.range, src.range(calCount));
    trace_chunks({perChannel ? "Mul" : "Muls", offset.tensor ? "Add" : "Adds"}, "half", 2, calCount, chunk, loc,
                 t.range, t.range);
    trace_chunks({"Cast"}, "half", 2, calCount, chunk, loc, dst.range(calCount), t.range);
}

}  // namespace detail

// Per tensor.
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                                   const uint32_t calCount, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, {nullptr, scale, 1}, {nullptr, offset, 1}, calCount,
                         loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const float scale, const float offset, const uint32_t calCount, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, nullptr, {nullptr, scale, 1}, {nullptr, offset, 1}, calCount, loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                                   SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, {nullptr, scale, 1}, {nullptr, offset, 1},
                         srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const float scale, const float offset, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, nullptr, {nullptr, scale, 1}, {nullptr, offset, 1},
                         srcTensor.GetSize(), loc);
}

// Per channel: a scale tensor, the offset a scalar.
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                                   const T offset, const uint32_t scaleCount, const uint32_t calCount, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, {&scaleTensor, 0.0f, scaleCount},
                         {nullptr, float(offset), 1}, calCount, loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<T>& scaleTensor, const T offset, const uint32_t scaleCount,
                                   const uint32_t calCount, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, nullptr, {&scaleTensor, 0.0f, scaleCount}, {nullptr, float(offset), 1},
                         calCount, loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                                   const T offset, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, {&scaleTensor, 0.0f, scaleTensor.GetSize()},
                         {nullptr, float(offset), 1}, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<T>& scaleTensor, const T offset, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, nullptr, {&scaleTensor, 0.0f, scaleTensor.GetSize()},
                         {nullptr, float(offset), 1}, srcTensor.GetSize(), loc);
}

// Per channel: scale and offset tensors.
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                                   const LocalTensor<T>& offsetTensor, const uint32_t scaleCount,
                                   const uint32_t offsetCount, const uint32_t calCount, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, {&scaleTensor, 0.0f, scaleCount},
                         {&offsetTensor, 0.0f, offsetCount}, calCount, loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor,
                                   const uint32_t scaleCount, const uint32_t offsetCount, const uint32_t calCount,
                                   SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, nullptr, {&scaleTensor, 0.0f, scaleCount},
                         {&offsetTensor, 0.0f, offsetCount}, calCount, loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                                   const LocalTensor<T>& offsetTensor, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, {&scaleTensor, 0.0f, scaleTensor.GetSize()},
                         {&offsetTensor, 0.0f, offsetTensor.GetSize()}, srcTensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
__aicore__ inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                                   const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor, SAGE_LOC) {
    detail::quant_run<T>(dstTensor, srcTensor, nullptr, {&scaleTensor, 0.0f, scaleTensor.GetSize()},
                         {&offsetTensor, 0.0f, offsetTensor.GetSize()}, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
