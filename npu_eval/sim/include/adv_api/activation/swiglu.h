// SwiGLU, GeGLU and ReGlu (adv_api/activation/swiglu.h, geglu.h, reglu.h): gated linear units
// of src0 (the value) and src1 (the gate).
//   SwiGLU<T, isReuseSource = false>(dst, src0, src1, beta, [tmp,] [calCount])  dst = src0 * src1 / (1 + exp(-beta * src1))
//   GeGLU<T, isReuseSource = false>(dst, src0, src1, [tmp,] [calCount])         dst = src0 * gelu(src1)
//   ReGlu<T, isReuseSource = false>(dst, src0, src1, [tmp,] calCount)            dst = src0 * max(src1, 0)
//
// As the device computes them (docs: SwiGLU.md, GeGLU.md, ReGlu.md; their *_common_impl.h): half
// is cast to float, the steps run in float and the result is cast back once; float runs the same
// steps. GeGLU's gelu is the tanh form rewritten as x / (exp((x^2 + 22.363860002236) * x *
// -0.0713548162726) + 1). The sharedTmpBuffer minimum is the host's (activation_sizes.h); without
// calCount the whole src0 is used.
#pragma once

#include "../../sage_sim/adv.h"
#include "geglu_tiling.h"
#include "reglu_tiling.h"
#include "swiglu_tiling.h"

namespace AscendC {
namespace detail {

enum class GluKind { Swi, Ge, Re };

template <typename T>
inline void glu_run(GluKind kind, const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    float beta, const LocalTensor<uint8_t>* tmp, uint32_t calCount, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] SwiGLU/GeGLU/ReGlu take half or float");
    const char* api = kind == GluKind::Swi ? "SwiGLU" : kind == GluKind::Ge ? "GeGLU" : "ReGlu";
    touch(loc);
    if (tmp && kind == GluKind::Swi) {
        tmp_check(*tmp, activation_sizes::swiglu_min(sizeof(T)), api, "GetSwiGLUMaxMinTmpSize: 6 * 256 for half", loc);
    } else if (tmp && kind == GluKind::Ge) {
        tmp_check(*tmp, activation_sizes::geglu_min(sizeof(T)), api, "GetGeGLUMaxMinTmpSize: 4 * 256 for half", loc);
    } else if (tmp) {
        tmp_check(*tmp, activation_sizes::reglu_min(sizeof(T)), api,
                  "GetReGluMaxMinTmpSize: 6 * 256 for half, 256 for float", loc);
    }
    const float nb = -beta;
    adv_map<T>(api, dst, src0, &src1, calCount, loc, [&](float a, float g) {
        if (kind == GluKind::Re) return a * std::max(g, 0.0f);
        if (kind == GluKind::Swi) return a * (g / (std::exp(g * nb) + 1.0f));
        float t = (g * g + 22.363860002236f) * g * -0.0713548162726f;
        return a * (g / (std::exp(t) + 1.0f));
    });
    const UbRange w = dst.range(calCount), r0 = src0.range(calCount), r1 = src1.range(calCount);
    const bool h = std::is_same<T, half>::value;
    if (h) trace_steps({"Cast", "Cast"}, "float16", 2, calCount, loc, w, r0, r1);
    if (kind == GluKind::Swi) trace_steps({"Muls", "Exp", "Adds", "Div", "Mul"}, "float32", 4, calCount, loc, w, r0, r1);
    if (kind == GluKind::Ge) {
        trace_steps({"Mul", "Adds", "Mul", "Muls", "Exp", "Adds", "Div", "Mul"}, "float32", 4, calCount, loc, w, r0, r1);
    }
    if (kind == GluKind::Re) trace_steps({"Maxs", "Mul"}, "float32", 4, calCount, loc, w, r0, r1);
    if (h) trace_steps({"Cast"}, "float32", 4, calCount, loc, w);
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                              const LocalTensor<T>& srcTensor1, const float& scalarValue, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Swi, dstTensor, srcTensor0, srcTensor1, scalarValue, nullptr,
                       srcTensor0.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                              const LocalTensor<T>& srcTensor1, const float& scalarValue,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Swi, dstTensor, srcTensor0, srcTensor1, scalarValue, &sharedTmpBuffer,
                       srcTensor0.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                              const LocalTensor<T>& srcTensor1, const float& scalarValue, const uint32_t calCount,
                              SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Swi, dstTensor, srcTensor0, srcTensor1, scalarValue, nullptr, calCount, loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                              const LocalTensor<T>& srcTensor1, const float& scalarValue,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Swi, dstTensor, srcTensor0, srcTensor1, scalarValue, &sharedTmpBuffer,
                       calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                             const LocalTensor<T>& srcTensor1, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             uint32_t calCount, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Ge, dstTensor, srcTensor0, srcTensor1, 0.0f, &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                             const LocalTensor<T>& srcTensor1, uint32_t calCount, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Ge, dstTensor, srcTensor0, srcTensor1, 0.0f, nullptr, calCount, loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                             const LocalTensor<T>& srcTensor1, const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Ge, dstTensor, srcTensor0, srcTensor1, 0.0f, &sharedTmpBuffer,
                       srcTensor0.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                             const LocalTensor<T>& srcTensor1, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Ge, dstTensor, srcTensor0, srcTensor1, 0.0f, nullptr, srcTensor0.GetSize(),
                       loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void ReGlu(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                             const LocalTensor<T>& srcTensor1, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             const uint32_t calCount, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Re, dstTensor, srcTensor0, srcTensor1, 0.0f, &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void ReGlu(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
                             const LocalTensor<T>& srcTensor1, const uint32_t calCount, SAGE_LOC) {
    detail::glu_run<T>(detail::GluKind::Re, dstTensor, srcTensor0, srcTensor1, 0.0f, nullptr, calCount, loc);
}

}  // namespace AscendC
