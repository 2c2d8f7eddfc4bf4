// Sin, Cos and Tan's documented algorithm (Atlas A2), one float vector op at a time: reduce x by
// k pi, with pi split into parts so that k * part stays exact, then a polynomial. The rounding of
// k differs: Sin rounds half away from zero (CAST_ROUND), Cos and Tan to even (CAST_RINT).
// (asc-devkit keeps each API's helpers in include/adv_api/math/<api>_utils.h; the three share
// these.)
#pragma once

#include <algorithm>
#include <cmath>

namespace AscendC {
namespace detail {

constexpr float kInvPi = 0.3183098733425140380859375f;
constexpr float kPi0 = 3.140625f;
constexpr float kPi1 = 0.0009670257568359375f;
constexpr float kPi2 = 6.2771141529083251953125e-7f;
constexpr float kPi3 = 1.21644916362129151821136474609375e-10f;
constexpr float kHalfPi = 1.57079637050628662109375f;
constexpr float kHalfPiLow = -0.00000004371139000189375f;

// (-1)^k as floor(k / 2) * 4 - 2k + 1, and x0 P(x0^2) with sin's coefficients.
inline float sin_poly(float x0, float k) {
    const float sign = std::floor(k * 0.5f) * 4.0f + k * -2.0f + 1.0f;
    const float x2 = x0 * x0;
    float p = x2 * 2.604926501e-6f + -0.0001980894471f;
    p = p * x2 + 0.008333049340f;
    p = p * x2 + -0.1666665792f;
    p = p * x2 + 1.0f;
    return p * x0 * sign;
}

inline float sin_doc(float x) {
    const float k = std::round(x * kInvPi);
    float x0 = x - k * kPi0;
    x0 = x0 - k * kPi1;
    x0 = x0 - k * kPi2;
    x0 = x0 - k * kPi3;
    return sin_poly(x0, k);
}

inline float cos_doc(float x) {
    const float k = std::nearbyint(x * kInvPi + 0.5f);
    float x0 = x - k * kPi0;
    x0 = x0 - k * kPi1;
    x0 = x0 + kHalfPi;
    x0 = x0 - k * kPi2;
    x0 = x0 - k * kPi3;
    x0 = x0 - k * -1.0290623200529979163359041220560e-13f;
    x0 = x0 + kHalfPiLow;
    return std::max(std::min(sin_poly(x0, k), 1.0f), -1.0f);
}

inline float tan_doc(float x) {
    const float k = std::nearbyint(x * kInvPi);
    constexpr float kPi4 = -1.0291767438275201129727065563201904296875e-13f;
    float x0 = x - k * kPi0;
    x0 = x0 - k * kPi1;
    float up = x0 + kHalfPi, down = x0 + -kHalfPi;
    const float t2 = k * kPi2;
    x0 = x0 - t2, up = up - t2, down = down - t2;
    up = up + kHalfPiLow, down = down + -kHalfPiLow;
    const float t3 = k * kPi3;
    x0 = x0 - t3, up = up - t3, down = down - t3;
    const float t4 = k * kPi4;
    x0 = x0 - t4, up = up - t4, down = down - t4;
    const float x2 = x0 * x0;
    float num = x2 * 0.0698520831551998762793f + -6.8711573651634203789f;
    num = num * x2 + 61.20362572811089435388f;
    num = num * x0;
    float den = x2 + -24.8048928861126769186219f;
    den = den * up;
    den = den * down;
    return num / den;
}

}  // namespace detail
}  // namespace AscendC

namespace AscendC {
namespace detail {

// Atan's Taylor form of the given level: x (1 - x^2/3 + x^4/5 - ...), by Horner's rule in x^2.
inline float atan_taylor(float x, int level) {
    static constexpr float kFactors[7] = {1.0f, -0.3333333333333333f, 0.2f, -0.14285714285714285f,
                                          0.1111111111111111f, -0.09090909090909091f, 0.07692307692307693f};
    const float sq = x * x;
    float d = x * x;
    d = d * kFactors[level];
    for (int i = level - 1; i > 0; --i) {
        d = d + kFactors[i];
        d = d * sq;
    }
    d = d + kFactors[0];
    return d * x;
}

// |(x - t) / (x t + 1)|: the argument shifted by atan(t).
inline float atan_shift(float x, float t) {
    const float den = x * t + 1.0f;
    return std::fabs((x + (0.0f - t)) / den);
}

inline float atan_doc(float x) {
    constexpr float kPiBy4 = 0.78539816339744830961566084581988f;
    constexpr float kPiBy8 = 0.39269908169872415480783042290994f;
    constexpr float kTanPiBy8 = 0.4142135623730950f;
    const float c = std::max(std::min(x, 10000.0f), -10000.0f);
    const float a = std::fabs(c);
    float r = atan_taylor(a, 4);
    r = std::min(r, atan_taylor(atan_shift(a, kTanPiBy8), 4) + kPiBy8);
    const float t = std::fabs((a + -1.0f) / (a + 1.0f));
    r = std::min(r, atan_taylor(t, 4) + kPiBy4);
    r = std::min(r, (atan_taylor(atan_shift(t, kTanPiBy8), 6) + kPiBy8) + kPiBy4);
    const float sx = c * 4611686018427387904.0f;  // the sign as x*2^62 / (|x*2^62| + 2^-62)
    return r * (sx / (std::fabs(sx) + 2.168404344971009e-19f));
}

}  // namespace detail
}  // namespace AscendC

namespace AscendC {
namespace detail {

constexpr float kAsinHalfPi = 1.5707963267948966192313216916398f;

// Asin's Taylor series x (1 + c1 x^2 + ... + c7 x^14), by Horner's rule in x^2; `sq` is x^2.
inline float asin_series(float sq) {
    static constexpr float kCoef[8] = {1.0f, 0.16666666666666666666666666666667f, 0.075f,
                                       0.04464285714285714285714285714286f, 0.03038194444444444444444444444444f,
                                       0.02237215909090909090909090909091f, 0.01735276442307692307692307692308f,
                                       0.01396484375f};
    float d = sq * kCoef[7];
    for (int i = 6; i > 0; --i) d = (d + kCoef[i]) * sq;
    return d + kCoef[0];
}

// Asin.md: below |x| = sqrt(1/2) the series at x; above, pi/2 minus the series at sqrt(1 - x^2);
// the branch is chosen by -floor(min(|x|, b) - b), and the sign is x*2^62 / (|x*2^62| + 2^-62).
inline float asin_doc(float x) {
    constexpr float kBoundary = 0.70710678118654752440084436210485f;
    const float root = std::sqrt((x * x) * -1.0f + 1.0f);
    const float large = (asin_series(root * root) * root) * -1.0f + kAsinHalfPi;
    const float sq = x * x;
    const float a = std::sqrt(sq);
    const float small = asin_series(sq) * a;
    const float pick = -std::floor(std::min(a, kBoundary) + -kBoundary);
    const float r = small * pick + large * (pick * -1.0f + 1.0f);
    const float sx = x * 4611686018427387904.0f;
    return r * (sx / (std::fabs(sx) + 2.168404344971009e-19f));
}

}  // namespace detail
}  // namespace AscendC
