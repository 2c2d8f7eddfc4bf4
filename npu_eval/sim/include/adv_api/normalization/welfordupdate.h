// WelfordUpdate (asc-devkit declares it in adv_api/normalization/layernorm.h): one online step of
// the Welford mean/variance over a chunk of the reduce axis, element by element:
//   WelfordUpdate<T, U, isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>(
//       outputMean, outputVariance, inputMean, inputVariance, inputX, [sharedTmpBuffer,] const WelfordUpdateParam& para)
//   for i < abComputeLength: delta = x - mean_in, mean_out = mean_in + delta * nRec,
//                            var_out = var_in + delta * (x - mean_out)           (docs: WelfordUpdate.md)
// T half or float, U float; rnLength must be 1 and abLength 32-byte aligned.
//
// As the device computes it (layernorm_common_impl.h, the A2 path): in float (half x cast up),
// Sub, Muls(nRec), Add, Sub, Mul, Add over 64 * (tmp bytes / (256 * k)) elements a pass. Past
// abComputeLength the outputs are left alone, unless config.isInplace: then the last
// align8(abLength - abComputeLength) of inputMean/inputVariance are first copied to the outputs.
// With isReuseSource (float) the API leaves x - mean_in in inputX.
#pragma once

#include "../../sage_sim/adv.h"
#include "layernorm_utils.h"
#include "welford_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void welfordupdate_check(const LocalTensor<T>& x, const WelfordUpdateParam& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (p.rnLength != 1 || p.abComputeLength == 0 || p.abComputeLength > p.abLength ||
        p.abLength % (32 / sizeof(T)) != 0 || p.abLength > x.GetSize()) {
        fail("api-misuse", loc,
             "WelfordUpdate with rnLength %u, abLength %u, abComputeLength %u on an inputX of %u: it takes rnLength "
             "1, a 32-byte aligned abLength no longer than inputX, and 0 < abComputeLength <= abLength",
             p.rnLength, p.abLength, p.abComputeLength, uint32_t(x.GetSize()));
    }
}

template <typename T, bool isReuseSource, bool isInplace>
inline void welfordupdate_run(const LocalTensor<float>& outMean, const LocalTensor<float>& outVar,
                              const LocalTensor<float>& inMean, const LocalTensor<float>& inVar,
                              const LocalTensor<T>& x, const LocalTensor<uint8_t>* tmp, const WelfordUpdateParam& p,
                              sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "[dtype-unsupported] WelfordUpdate takes half or float inputX (and float mean/variance)");
    touch(loc);
    welfordupdate_check(x, p, loc);
    const uint32_t need = welford_sizes::update_min_bytes(sizeof(T), isReuseSource);
    tmp_or_free_check(tmp, need, "WelfordUpdate",
                      "GetWelfordUpdateMaxMinTmpSize's minimum: k * 256, k = 3 half, 1 float reusing the source, else 2",
                      loc);
    const uint32_t n = p.abComputeLength, ab = p.abLength;
    const char* api = "WelfordUpdate";
    vec_src(x, api, n, loc), vec_src(inMean, api, n, loc), vec_src(inVar, api, n, loc);
    vec_dst(outMean, api, n, loc), vec_dst(outVar, api, n, loc);
    if (isInplace && n < ab) {
        const uint32_t keep = (ab - n + 7) / 8 * 8, at = ab - keep;
        vec_src(inMean, api, ab, loc), vec_src(inVar, api, ab, loc);
        vec_dst(outMean, api, ab, loc), vec_dst(outVar, api, ab, loc);
        for (uint32_t i = at; i < ab; ++i) outMean.data()[i] = inMean.data()[i], outVar.data()[i] = inVar.data()[i];
        ub_mark(outMean.range(ab)), ub_mark(outVar.range(ab));
        trace_steps({"DataCopy", "DataCopy"}, "float32", 4, keep, loc, outMean.range(ab), inMean.range(ab));
    }
    for (uint32_t i = 0; i < n; ++i) {
        const float xv = float(x.data()[i]), m = inMean.data()[i];
        const float delta = xv - m, mo = delta * p.nRec + m;
        outMean.data()[i] = mo;
        outVar.data()[i] = delta * (xv - mo) + inVar.data()[i];
        if (isReuseSource && std::is_same<T, float>::value) x.data()[i] = T(delta);
    }
    ub_mark(outMean.range(n)), ub_mark(outVar.range(n));
    const uint64_t bytes = tmp ? uint64_t(tmp->GetSize()) : uint64_t(rt().ub_bytes) - ub_free_base();
    const uint64_t chunk = 64 * std::max<uint64_t>(bytes / need, 1);
    if (std::is_same<T, half>::value) trace_chunks({"Cast"}, "float16", 2, n, chunk, loc, outMean.range(n), x.range(n));
    trace_chunks({"Sub", "Muls", "Add", "Sub", "Mul", "Add"}, "float32", 4, n, chunk, loc, outMean.range(n),
                 x.range(n), inMean.range(n));
}

}  // namespace detail

template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
__aicore__ inline void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                                     const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance,
                                     const LocalTensor<T>& inputX, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                     const WelfordUpdateParam& para, SAGE_LOC) {
    static_assert(std::is_same<U, float>::value, "[dtype-unsupported] WelfordUpdate's mean and variance are float");
    detail::welfordupdate_run<T, isReuseSource, config.isInplace>(outputMean, outputVariance, inputMean,
                                                                  inputVariance, inputX, &sharedTmpBuffer, para, loc);
}

template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
__aicore__ inline void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                                     const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance,
                                     const LocalTensor<T>& inputX, const WelfordUpdateParam& para, SAGE_LOC) {
    static_assert(std::is_same<U, float>::value, "[dtype-unsupported] WelfordUpdate's mean and variance are float");
    detail::welfordupdate_run<T, isReuseSource, config.isInplace>(outputMean, outputVariance, inputMean,
                                                                  inputVariance, inputX, nullptr, para, loc);
}

}  // namespace AscendC
