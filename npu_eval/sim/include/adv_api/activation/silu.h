// Silu and Swish (adv_api/activation/silu.h, swish.h):
//   Silu<T, isReuseSource = false>(dst, src, dataSize)               dst = x / (1 + exp(-x))
//   Swish<T, isReuseSource = false>(dst, src, dataSize, beta)        dst = x / (1 + exp(-beta * x))
//
// As the device computes them (docs: Silu.md, Swish.md; silu/swish_common_impl.h): Muls, Exp, Adds,
// Div, each rounding to T (half computes in half; Swish's -beta is a T constant). No temporary
// buffer (GetSiluTmpSize and GetSwishTmpSize report 0).
#pragma once

#include "../../sage_sim/adv.h"
#include "silu_tiling.h"
#include "swish_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void swish_run(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t dataSize,
                      float beta, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Silu/Swish take half or float");
    auto R = [](float v) { return round_as<T>(v); };
    const float nb = R(-beta);
    adv_map<T>(api, dst, src, nullptr, dataSize, loc,
               [&](float x, float) { return R(x / R(R(std::exp(R(x * nb))) + 1.0f)); });
    trace_steps({"Muls", "Exp", "Adds", "Div"}, dtype_name<T>(), sizeof(T), dataSize, loc, dst.range(dataSize),
                src.range(dataSize));
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Silu(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize,
                            SAGE_LOC) {
    detail::swish_run<T>("Silu", dstLocal, srcLocal, dataSize, 1.0f, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Swish(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize,
                             const T scalarValue, SAGE_LOC) {
    detail::swish_run<T>("Swish", dstLocal, srcLocal, dataSize, float(scalarValue), loc);
}

}  // namespace AscendC
