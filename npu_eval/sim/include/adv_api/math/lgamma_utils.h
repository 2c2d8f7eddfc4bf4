// Lgamma's documented algorithm on Atlas A2 (asc-devkit keeps its helpers in
// impl/adv_api/detail/math/lgamma/), one float vector op at a time. Each branch is computed for
// every element and picked by a compare mask: Select(mask, v, 0) added onto an accumulator that
// starts at 0, so a picked value v comes out as v + 0 (a -0 turns +0), an unpicked one adds 0.
//
// float: on a = |x|, lgamma(a) is a polynomial or rational form on [0, 0.7), [0.7, 1.5),
// [1.5, 3), [3, 5.8), Stirling's series with two correction terms from 5.8 on, inf at inf; for
// x < 0 the reflection ln(pi) - ln(|sin(pi a)| a) - lgamma(a), sin(pi a) from a sine or cosine
// polynomial after reducing 2a to the nearest integer, -ln(a) below 1e-19, and inf at negative
// integers (and where |sin(pi a)| a overflows). NaN gives |x|.
// half (computed in float): lgamma(x) = lgamma1(x + 4) - ln(x (x+1) (x+2) (x+3)) for x >= 0 with
// lgamma1(y) = 0.5 ln(2 pi / y) + y (ln(y + 1 / (12 y - 0.1 / y)) - 1), and for x < 0 the
// reflection -lgamma(1 - x) + ln(pi / |sin(pi (x - floor(x)))|) with Sin's own algorithm; NaN
// stays NaN and |x| >= 65504 gives 655040 (inf once cast to half).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include "trig_utils.h"

namespace AscendC {
namespace detail {

constexpr float kLgammaPi = 3.1415927410125732421875f;

// LGammaCalcMulAdd: t (c0 t^(n-1) + c1 t^(n-2) + ... + c(n-1)), by Horner's rule.
inline float lgamma_muladd(float t, const float* c, size_t n) {
    float r = t * c[0] + c[1];
    for (size_t i = 2; i < n; ++i) r = r * t + c[i];
    return r * t;
}

// The picked value v of a select-and-accumulate chain: v + 0.
inline float lgamma_picked(float v) { return v + 0.0f; }

// lgamma(a) for a >= 0 (0 for NaN: no range mask picks it).
inline float lgamma_pos_f(float a) {
    static constexpr float k007[7] = {0.00358751555905f, -0.00547128543258f, -0.0446271263063f, 0.167317703366f,
                                      -0.0421359799802f, -0.655867278576f, 0.577215373516f};
    static constexpr float k0715[11] = {0.0458826646209f, 0.103739671409f, 0.122803635895f, 0.127524212003f,
                                        0.143216684461f, 0.169343575835f, 0.207407936454f, 0.27058750391f,
                                        0.400685429573f, 0.82246696949f, 0.577215671539f};
    static constexpr float k153[10] = {4.95984932058e-05f, -0.000220894842641f, 0.000541314249858f,
                                       -0.00120451697148f, 0.00288425176404f, -0.00738275796175f,
                                       0.0205813199282f, -0.067352488637f, 0.322467029095f, 0.422784328461f};
    static constexpr float k358p[4] = {-748.890319824f, -12349.7421875f, -41061.375f, -48310.6640625f};
    static constexpr float k358q[3] = {-259.250976562f, -10777.1796875f, -92685.046875f};
    static constexpr float k58[2] = {0.000777830660809f, -0.00277765537612f};
    const float inf = std::numeric_limits<float>::infinity();
    if (a < 0.7f) return lgamma_picked(std::log(lgamma_muladd(a, k007, 7) * a + a) * -1.0f);
    if (a >= 0.7f && a < 1.5f) return lgamma_picked(lgamma_muladd(a * -1.0f + 1.0f, k0715, 11));
    if (a >= 1.5f && a < 3.0f) return lgamma_picked(lgamma_muladd(a + -2.0f, k153, 10));
    if (a >= 3.0f && a < 5.8f) {
        const float t = a + -3.0f;
        const float p = lgamma_muladd(t, k358p, 4) + -143033.40625f;
        const float q = lgamma_muladd(t, k358q, 3) + -206353.578125f;
        return lgamma_picked(p / q + t);
    }
    if (a >= 5.8f && a < inf) {
        const float half_ln = std::log(a) * 0.5f;
        const float h = (a + -0.5f) * half_ln;
        const float r = 1.0f / a;
        float s = lgamma_muladd(r * r, k58, 2) + 0.0833332762122f;
        s = s * r + 0.91893851757f;
        return lgamma_picked(((s + h) + h) - a);
    }
    return a >= inf ? lgamma_picked(a) : 0.0f;
}

// |sin(pi a)|'s factor before the abs: with n = floor(2a + 0.5) and y = (a - n / 2) pi, sin(y)
// for even n and cos(y) for odd n, each a polynomial in y^2.
inline float lgamma_sin_pi(float a) {
    static constexpr float kOdd[4] = {0.00002427957952022552490234375f, -0.001388786011375486850738525390625f,
                                      0.0416667275130748748779296875f, -0.4999999701976776123046875f};
    static constexpr float kEven[3] = {-0.000195746586541645228862762451171875f, 0.0083327032625675201416015625f,
                                       -0.16666662693023681640625f};
    const float n = std::floor((a + a) + 0.5f);
    const float parity = n - std::floor(n * 0.5f) * 2.0f;
    const float y = (n * -0.5f + a) * kLgammaPi;
    const float y2 = y * y;
    if (parity >= 0.5f) return lgamma_picked(lgamma_muladd(y2, kOdd, 4) + 1.0f);
    return lgamma_picked(lgamma_muladd(y2, kEven, 3) * y + y);
}

// lgamma(-a) for a > 0 (0 for NaN).
inline float lgamma_neg_f(float a) {
    constexpr float kMin = 9.99999968266e-20f;
    const float inf = std::numeric_limits<float>::infinity();
    if (a < kMin) return lgamma_picked(std::log(a) * -1.0f);
    if (!(a >= kMin)) return 0.0f;
    const float prod = std::fabs(lgamma_sin_pi(a)) * a;
    const float r = (std::log(prod) * -1.0f + 1.1447298526763916015625f) + lgamma_pos_f(a) * -1.0f;
    const bool ok = std::floor(a) != a && prod < inf;
    return lgamma_picked(ok ? r : inf);
}

inline float lgamma_f(float x) {
    const float a = std::fabs(x);
    if (x >= 0.0f) return lgamma_picked(lgamma_pos_f(a));
    if (x < 0.0f) return lgamma_picked(lgamma_neg_f(a));
    return lgamma_picked(a);
}

// The half path's lgamma for x >= 0, through lgamma1(x + 4).
inline float lgamma_pos_h(float x) {
    const float y = x + 4.0f;
    const float inv = 1.0f / y;
    const float lead = std::log((inv * kLgammaPi) * 2.0f) * 0.5f;
    float t = y * 12.0f + inv * -0.1f;
    t = 1.0f / t + y;
    t = (std::log(t) + -1.0f) * y;
    const float lg = t + lead;
    float logs = std::log(x) + std::log(x + 1.0f);
    logs = logs + std::log(x + 2.0f);
    logs = logs + std::log(x + 3.0f);
    return lg - logs;
}

inline float lgamma_neg_h(float x) {
    const float reflected = lgamma_pos_h(x * -1.0f + 1.0f) * -1.0f;
    const float s = std::fabs(sin_doc((x - std::floor(x)) * kLgammaPi));
    return reflected + std::log(kLgammaPi / s);
}

inline float lgamma_h(float x) {
    float r = 0.0f;
    if (x >= 0.0f) r = lgamma_pos_h(x) + r;
    if (x < 0.0f) r = lgamma_neg_h(x) + r;
    if (std::isnan(x)) r = x + r;
    return std::fabs(x) >= 65504.0f ? 655040.0f : r;
}

}  // namespace detail
}  // namespace AscendC
