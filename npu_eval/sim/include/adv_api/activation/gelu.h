// Gelu, FasterGelu, FasterGeluV2 (adv_api/activation/gelu.h):
//   Gelu / FasterGelu / FasterGeluV2<T, highPrecision = false, highPerformance = false>(dst, src, [tmp,] dataSize)
//
// As the device computes them (docs: Gelu.md, FasterGelu.md, FasterGeluV2.md; gelu_impl.h's
// instruction sequences), every instruction rounding to T, so half computes in half unless
// highPrecision casts to float first. The coefficients are T constants (rounded to half for half):
//   Gelu:         y = 1.5957691 * (x + 0.044715 * x^3);  dst = x / (exp(-|y|) + 1) * exp(min(y, 0))
//   FasterGelu:   dst = x / (1 + exp(-1.702 * x))
//   FasterGeluV2: dst = x * (sgn(x) * (-0.1444 * (min(|0.7071 x|, 1.769) - 1.769)^2 + 0.5) + 0.5),
//                 sgn(x) = (x + 1e-12) / |x + 1e-12|
// highPerformance replaces each Div by Reciprocal and Mul. The sharedTmpBuffer holds at least
// GetGeluMinTmpSize = 3 * 256 bytes.
#pragma once

#include "../../sage_sim/adv.h"
#include "gelu_tiling.h"

namespace AscendC {
namespace detail {

enum class GeluKind { Gelu, Faster, FasterV2 };

// One element in C (half or float): every step rounds to C, as the instruction it stands for.
template <typename C, bool highPerformance>
inline float gelu_elem(GeluKind kind, float x) {
    auto R = [](float v) { return sage::sim::round_as<C>(v); };
    auto div = [&](float a, float b) { return highPerformance ? R(a * R(1.0f / b)) : R(a / b); };
    if (kind == GeluKind::Faster) return div(x, R(R(std::exp(R(x * R(-1.702f)))) + 1.0f));
    if (kind == GeluKind::FasterV2) {
        float a = R(std::fabs(R(x * R(0.7071f))));
        a = R(R(std::min(a, R(1.769f))) + R(-1.769f));
        a = R(R(R(a * a) * R(-0.1444f)) + 0.5f);
        float b = R(x + R(1e-12f));
        b = div(b, R(std::fabs(b)));
        return R(x * R(R(a * b) + 0.5f));
    }
    float a = R(x * x);
    float b = R(x * a);
    a = R(b * R(0.044715f));
    b = R(x + a);
    const float y = R(b * R(1.5957691216057308f));
    const float e = R(std::exp(R(std::min(y, 0.0f))));
    const float d = div(x, R(R(std::exp(R(-R(std::fabs(y))))) + 1.0f));
    return R(d * e);
}

template <typename T, bool highPrecision, bool highPerformance>
inline void gelu_run(GeluKind kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                     const LocalTensor<uint8_t>* tmp, uint32_t dataSize, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Gelu takes half or float");
    const char* api = kind == GeluKind::Gelu ? "Gelu" : kind == GeluKind::Faster ? "FasterGelu" : "FasterGeluV2";
    touch(loc);
    if (tmp) tmp_check(*tmp, activation_sizes::gelu_min(sizeof(T)), api, "GetGeluMinTmpSize: 3 * 256", loc);
    constexpr bool up = highPrecision && std::is_same<T, half>::value;
    using C = typename std::conditional<up, float, T>::type;
    adv_map<T>(api, dst, src, nullptr, dataSize, loc,
               [&](float x, float) { return gelu_elem<C, highPerformance>(kind, x); });
    const char* dt = dtype_name<C>();
    const UbRange w = dst.range(dataSize), r = src.range(dataSize);
    const char* div1 = highPerformance ? "Reciprocal" : "Div";
    if (up) trace_steps({"Cast"}, "float16", 2, dataSize, loc, w, r);
    if (kind == GeluKind::Gelu) {
        trace_steps({"Mul", "Mul", "Muls", "Add", "Muls", "Mins", "Exp", "Abs", "Muls", "Exp", "Adds", div1}, dt,
                    sizeof(C), dataSize, loc, w, r);
    } else if (kind == GeluKind::Faster) {
        trace_steps({"Muls", "Exp", "Adds", div1}, dt, sizeof(C), dataSize, loc, w, r);
    } else {
        trace_steps({"Muls", "Abs", "Mins", "Adds", "Mul", "Muls", "Adds", "Adds", "Abs", div1, "Mul", "Adds"}, dt,
                    sizeof(C), dataSize, loc, w, r);
    }
    if (highPerformance || kind == GeluKind::Gelu) trace_steps({"Mul"}, dt, sizeof(C), dataSize, loc, w, r);
    if (up) trace_steps({"Cast"}, "float32", 4, dataSize, loc, w);
}

}  // namespace detail

#define SAGE_GELU_API(NAME, KIND)                                                                                \
    template <typename T, bool highPrecision = false, bool highPerformance = false>                              \
    __aicore__ inline void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,                  \
                                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t dataSize, SAGE_LOC) { \
        detail::gelu_run<T, highPrecision, highPerformance>(KIND, dstLocal, srcLocal, &sharedTmpBuffer, dataSize,  \
                                                            loc);                                                \
    }                                                                                                            \
    template <typename T, bool highPrecision = false, bool highPerformance = false>                              \
    __aicore__ inline void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,                  \
                                const uint32_t dataSize, SAGE_LOC) {                                             \
        detail::gelu_run<T, highPrecision, highPerformance>(KIND, dstLocal, srcLocal, nullptr, dataSize, loc);    \
    }
SAGE_GELU_API(Gelu, detail::GeluKind::Gelu)
SAGE_GELU_API(FasterGelu, detail::GeluKind::Faster)
SAGE_GELU_API(FasterGeluV2, detail::GeluKind::FasterV2)
#undef SAGE_GELU_API

}  // namespace AscendC
