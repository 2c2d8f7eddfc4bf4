// Digamma's documented algorithm on Atlas A2 (asc-devkit keeps its helpers in
// impl/adv_api/detail/math/digamma/), one float vector op at a time. Branches are picked as in
// Lgamma (lgamma_utils.h): each picked value is added onto an accumulator that starts at 0, so a
// NaN picked for a special input stays NaN whatever else is added.
//
// float: psi(x) = ln(w) - 1/(2w) - z (B2/2 - z (B4/4 - ...)) - sum_{i<10} 1/(x+i), w = x + 10,
// z = 1/w^2, seven Bernoulli terms, for x >= 0; psi(1 - x) + pi cot-term for x < 0, the cot-term
// from a tangent polynomial after reducing 2x to the nearest integer (ties away from zero); NaN
// for x <= -2^23 and for negative integers; NaN stays NaN.
// half (computed in float): the same asymptotic form at w = x + 3 with three Bernoulli terms and
// 1/x + 1/(x+1) + 1/(x+2); psi(1 - x) - pi / tan(pi (x - floor(x))) below -0.0001 (Tan's own
// algorithm), psi(1 - x) - pi cos(pi (x - floor(x))) / sin(-pi x) on [-0.0001, 0) (Cos's and
// Sin's).
#pragma once

#include <cmath>
#include <limits>

#include "trig_utils.h"

namespace AscendC {
namespace detail {

constexpr float kDigammaPi = 3.141592653589793238f;
constexpr float kDigammaMinNeg = -8388608.0f;

inline float digamma_pos_f(float x) {
    static constexpr float kBernoulli[6] = {2.10927960927960927961e-2f, 7.57575757575757575758e-3f,
                                            4.16666666666666666667e-3f, 3.96825396825396825397e-3f,
                                            8.33333333333333333333e-3f, 8.33333333333333333333e-2f};
    const float w = x + 10.0f;
    const float inv = 1.0f / w;
    float lead = std::log(w) - inv * 0.5f;
    const float z = inv * inv;
    float c = 8.33333333333333333333e-2f;
    for (float k : kBernoulli) c = k - z * c;
    lead = lead - z * c;
    float sum = 1.0f / x;
    for (int i = 1; i <= 9; ++i) sum = sum + 1.0f / (x + float(i));
    return lead - sum;
}

// pi cot(pi x)'s negation for the reflection: with n = round(2x) and f = (2x - n) pi/2, a
// tangent polynomial t(f); pi t for odd n, -pi / t for even n.
inline float digamma_picot_f(float x) {
    static constexpr float kTan[5] = {0.00326538085938f, 0.0242919921875f, 0.053466796875f, 0.133377909660f,
                                      0.333332300186f};
    const float twice = x + x;
    const float n = std::round(twice);
    const float f = (twice - n) * 1.5707963267948966f;
    const bool odd = std::fmod(n, 2.0f) != 0.0f;  // Cast to int32, And 1 (NaN or huge: the result is NaN anyway)
    const float f2 = f * f;
    float d = 0.0093383789065f;
    for (float k : kTan) d = d * f2 + k;
    const float t = (d * f2) * f + f;
    float r = (odd ? t : 0.0f) + 0.0f;
    r = (odd ? 0.0f : -1.0f / t) + r;
    return r * kDigammaPi;
}

inline bool digamma_neg_int(float x) { return x < 0.0f && x > kDigammaMinNeg && std::round(x) == x; }

inline float digamma_f(float x) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    float r = 0.0f;
    if (x <= kDigammaMinNeg || digamma_neg_int(x)) r = nan + r;
    if (std::isnan(x)) r = x + r;
    if (x >= 0.0f) r = digamma_pos_f(x) + r;
    if (x < 0.0f) r = (digamma_pos_f(x * -1.0f + 1.0f) + digamma_picot_f(x)) + r;
    return r;
}

inline float digamma_pos_h(float x) {
    const float w = x + 3.0f;
    const float inv = 1.0f / w;
    float r = std::log(w) - inv * 0.5f;
    const float inv2 = inv * inv;
    r = r - inv2 * 0.0833333333333333f;
    const float inv4 = inv2 * inv2;
    r = r - inv4 * 0.0083333333333333f;
    r = r - (inv4 * inv2) * 0.003968253968254f;
    float sum = 1.0f / x;
    sum = sum + 1.0f / (x + 1.0f);
    sum = sum + 1.0f / (x + 2.0f);
    return r - sum;
}

inline float digamma_h(float x) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float frac_pi = (x - std::floor(x)) * kDigammaPi;
    const float reflected = digamma_pos_h(1.0f - x);
    float r = 0.0f;
    if (x <= kDigammaMinNeg || digamma_neg_int(x)) r = nan + r;
    if (std::isnan(x)) r = x + r;
    if (x >= 0.0f) r = digamma_pos_h(x) + r;
    if (x < -0.0001f) r = (reflected - kDigammaPi / tan_doc(frac_pi)) + r;
    if (x >= -0.0001f && x < 0.0f) r = (reflected - (cos_doc(frac_pi) * kDigammaPi) / sin_doc(x * -kDigammaPi)) + r;
    return r;
}

}  // namespace detail
}  // namespace AscendC
