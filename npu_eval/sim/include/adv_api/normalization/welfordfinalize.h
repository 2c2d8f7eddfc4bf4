// WelfordFinalize (adv_api/normalization/welfordfinalize.h): the post-processing of WelfordUpdate,
// the mean and variance of the whole reduce axis from abLength per-position means and M2 sums:
//   WelfordFinalize<isReuseSource = false>(outputMean, outputVariance, inputMean, inputVariance,
//                                          [counts,] [sharedTmpBuffer,] WelfordFinalizePara& para)
//   without counts or tail:  mean = sum(mean_i * abRec),  var = sum((var_i + rn * (mean_i - mean)^2) * rRec)
//   with a tail (tailCount, tailCountLength != 0): the first headCountLength positions weigh headCount,
//     the rest tailCount: mean = sum(mean_i * w_i * rRec), var = sum((var_i + w_i * (mean_i - mean)^2) * rRec)
//   with counts (int32 per position): w_i = counts_i.                 (docs: WelfordFinalize.md, 功能说明)
// outputMean/outputVariance get the result in element 0 and zeros in elements 1..7.
//
// As the device computes it (welfordfinalize_common_impl.h, A2): in float, the positions in passes
// of finalize_chunk(tmp bytes) floats; each pass's terms summed as a row (64-lane partials, then
// WholeReduceSum), the pass sums collected 64 at a time and WholeReduceSum'd; the head weight is
// applied as tailCount * rRec then * (headCount / tailCount), in that order.
#pragma once

#include <vector>

#include "../../sage_sim/adv.h"
#include "welford_tiling.h"

namespace AscendC {

struct WelfordFinalizeConfig {
    constexpr WelfordFinalizeConfig(const bool isCorrectionIn) : isCorrection(isCorrectionIn) {}
    bool isCorrection = false;
};
constexpr WelfordFinalizeConfig WFFINALIZE_DEFAULT_CFG = {false};

struct WelfordFinalizePara {
    uint32_t rnLength;
    uint32_t abLength;
    uint32_t headCount;
    uint32_t headCountLength;
    uint32_t tailCount;
    uint32_t tailCountLength;
    float abRec;
    float rRec;
};

namespace detail {

// Pass sums folded as the device folds them: 64 staged, reduced into the first slot.
struct PassSums {
    std::vector<float> parts;
    void add(float s) {
        parts.push_back(s);
        if (parts.size() == 64) parts = {sage::sim::row_sum(parts.data(), 64)};
    }
    float total() const { return sage::sim::row_sum(parts.data(), parts.size()); }
};

// The weight a position's term gets, as the device applies it (see above); counts wins.
inline float welford_term(float v, uint32_t i, const int32_t* counts, const WelfordFinalizePara& p, bool mean) {
    if (counts) return mean ? (v * float(counts[i])) * p.rRec : v * float(counts[i]);
    if (p.tailCountLength == 0 || p.tailCount == 0) return mean ? v * p.abRec : v * float(p.rnLength);
    float t = v * float(p.tailCount);
    if (mean) t = t * p.rRec;
    if (i < p.headCountLength) t = t * (float(p.headCount) / float(p.tailCount));
    return t;
}

inline void welfordfinalize_check(const LocalTensor<float>& outMean, const LocalTensor<float>& outVar,
                                  const LocalTensor<float>& inMean, const LocalTensor<float>& inVar,
                                  const LocalTensor<int32_t>* counts, const WelfordFinalizePara& p,
                                  sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (p.abLength == 0 || p.abLength % 8 != 0 || p.headCountLength + p.tailCountLength != p.abLength ||
        inMean.GetSize() < p.abLength || inVar.GetSize() < p.abLength || outMean.GetSize() < 8 ||
        outVar.GetSize() < 8 || (counts && counts->GetSize() < p.abLength)) {
        fail("api-misuse", loc,
             "WelfordFinalize with abLength %u, headCountLength %u, tailCountLength %u: abLength must be a non-zero "
             "multiple of 8 equal to headCountLength + tailCountLength, the inputs (and counts) at least abLength "
             "long and the outputs at least 8", p.abLength, p.headCountLength, p.tailCountLength);
    }
}

inline void welfordfinalize_run(const LocalTensor<float>& outMean, const LocalTensor<float>& outVar,
                                const LocalTensor<float>& inMean, const LocalTensor<float>& inVar,
                                const LocalTensor<int32_t>* counts, const LocalTensor<uint8_t>* tmp,
                                const WelfordFinalizePara& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    welfordfinalize_check(outMean, outVar, inMean, inVar, counts, p, loc);
    tmp_or_free_check(tmp, welford_sizes::kFinalizeMinBytes, "WelfordFinalize",
                      "GetWelfordFinalizeMaxMinTmpSize's minimum: 4 rows of 64 floats", loc);
    const uint32_t ab = p.abLength;
    const char* api = "WelfordFinalize";
    vec_src(inMean, api, ab, loc), vec_src(inVar, api, ab, loc);
    if (counts) vec_src(*counts, api, ab, loc);
    vec_dst(outMean, api, 8, loc), vec_dst(outVar, api, 8, loc);
    const uint64_t bytes = tmp ? uint64_t(tmp->GetSize()) : uint64_t(rt().ub_bytes) - ub_free_base();
    const uint32_t chunk = welford_sizes::finalize_chunk(bytes);
    const int32_t* c = counts ? counts->data() : nullptr;
    std::vector<float> t(ab);
    PassSums ms, vs;
    for (uint32_t i = 0; i < ab; ++i) t[i] = welford_term(inMean.data()[i], i, c, p, true);
    for (uint32_t at = 0; at < ab; at += chunk) ms.add(row_sum(t.data() + at, std::min(chunk, ab - at)));
    const float mean = ms.total();
    for (uint32_t i = 0; i < ab; ++i) {
        const float d = inMean.data()[i] - mean;
        const float w = welford_term(d * d, i, c, p, false);
        t[i] = (counts ? w + inVar.data()[i] : inVar.data()[i] + w) * p.rRec;
    }
    for (uint32_t at = 0; at < ab; at += chunk) vs.add(row_sum(t.data() + at, std::min(chunk, ab - at)));
    const float var = vs.total();
    for (uint32_t i = 0; i < 8; ++i) outMean.data()[i] = i ? 0.0f : mean, outVar.data()[i] = i ? 0.0f : var;
    ub_mark(outMean.range(8)), ub_mark(outVar.range(8));
    trace_chunks({counts ? "Cast" : "Muls", "Muls", "WholeReduceSum"}, "float32", 4, ab, chunk, loc,
                 outMean.range(8), inMean.range(ab));
    trace_chunks({"Brcb", "Sub", "Mul", "Muls", "Add", "Muls", "WholeReduceSum"}, "float32", 4, ab, chunk, loc,
                 outVar.range(8), inMean.range(ab), inVar.range(ab));
    trace_steps({"WholeReduceSum", "WholeReduceSum", "Duplicate", "Duplicate"}, "float32", 4, 8, loc, outMean.range(8));
}

}  // namespace detail

template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
__aicore__ inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                                       const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                                       const LocalTensor<uint8_t>& sharedTmpBuffer, WelfordFinalizePara& para,
                                       SAGE_LOC) {
    detail::welfordfinalize_run(outputMean, outputVariance, inputMean, inputVariance, nullptr, &sharedTmpBuffer, para,
                                loc);
}

template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
__aicore__ inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                                       const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                                       const LocalTensor<int32_t>& counts, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                       WelfordFinalizePara& para, SAGE_LOC) {
    detail::welfordfinalize_run(outputMean, outputVariance, inputMean, inputVariance, &counts, &sharedTmpBuffer, para,
                                loc);
}

template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
__aicore__ inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                                       const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                                       WelfordFinalizePara& para, SAGE_LOC) {
    detail::welfordfinalize_run(outputMean, outputVariance, inputMean, inputVariance, nullptr, nullptr, para, loc);
}

template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
__aicore__ inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                                       const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                                       const LocalTensor<int32_t>& counts, WelfordFinalizePara& para, SAGE_LOC) {
    detail::welfordfinalize_run(outputMean, outputVariance, inputMean, inputVariance, &counts, nullptr, para, loc);
}

}  // namespace AscendC
