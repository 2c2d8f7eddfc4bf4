// Sigmoid (adv_api/activation/sigmoid.h):
//   Sigmoid<T, isReuseSource = false>(dst, src, [tmp,] [calCount])     dst = 1 / (1 + exp(-x))
//
// As the device computes it (docs: Sigmoid.md; sigmoid_impl.h): Muls(-1), Exp, Adds(1), then
// Duplicate(1) into the sharedTmpBuffer and Div, each rounding to T. The buffer holds at least
// GetSigmoidMaxMinTmpSize's minimum, 256 bytes. Without calCount the whole src is used.
#pragma once

#include "../../sage_sim/adv.h"
#include "sigmoid_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void sigmoid_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                        uint32_t calCount, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] Sigmoid takes half or float");
    touch(loc);
    if (tmp) tmp_check(*tmp, activation_sizes::sigmoid_min(sizeof(T)), "Sigmoid", "GetSigmoidMaxMinTmpSize: 256", loc);
    auto R = [](float v) { return round_as<T>(v); };
    adv_map<T>("Sigmoid", dst, src, nullptr, calCount, loc,
               [&](float x, float) { return R(1.0f / R(R(std::exp(R(-x))) + 1.0f)); });
    trace_steps({"Muls", "Exp", "Adds", "Duplicate", "Div"}, dtype_name<T>(), sizeof(T), calCount, loc,
                dst.range(calCount), src.range(calCount));
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Sigmoid(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, SAGE_LOC) {
    detail::sigmoid_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Sigmoid(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               const uint32_t calCount, SAGE_LOC) {
    detail::sigmoid_run<T>(dstTensor, srcTensor, nullptr, calCount, loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Sigmoid(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                               const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC) {
    detail::sigmoid_run<T>(dstTensor, srcTensor, &sharedTmpBuffer, srcTensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Sigmoid(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, SAGE_LOC) {
    detail::sigmoid_run<T>(dstTensor, srcTensor, nullptr, srcTensor.GetSize(), loc);
}

}  // namespace AscendC
