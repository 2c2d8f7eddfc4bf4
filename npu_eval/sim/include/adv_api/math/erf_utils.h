// Erf's rational approximation (asc-devkit include/adv_api/math/erf_utils.h is where the real
// one keeps Erf's helpers): erf(x) = x P(x^2) / Q(x^2) on x clipped to [-3.92, 3.92], with the
// documented coefficients, evaluated by Horner's rule in float one vector op at a time.
//
// Erfc's: e^(-a^2) R(a) / S(a) with R of degree 8 and S of degree 5 (asc-devkit Erfc.md), on
// a = |x| after x is clipped to [-10, 10]; the sign s = x / (|x| + 2^-62) mirrors it:
// erfc(x) = s erfc(a) + (1 - s).
#pragma once

#include <algorithm>
#include <cmath>

namespace AscendC {
namespace detail {

inline float erf_rational(float x) {
    const float c = std::max(std::min(x, 3.92f), -3.92f);
    const float x2 = c * c;
    float p = x2 * 0.053443748819f + 7.5517016694f;
    p = x2 * p + 101.62808918f;
    p = x2 * p + 1393.8061484f;
    p = x2 * p + 5063.7915060f;
    p = x2 * p + 29639.384698f;
    p = c * p;
    float q = x2 + 31.212858877f;
    q = x2 * q + 398.56963806f;
    q = x2 * q + 3023.1248150f;
    q = x2 * q + 13243.365831f;
    q = x2 * q + 26267.224157f;
    return p / q;
}

inline float erfc_doc(float x) {
    const float c = std::max(std::min(x, 10.0f), -10.0f);
    const float a = std::fabs(c) + 2.168404344971009e-19f;
    const float s = c / a;
    static constexpr float kR[9] = {0.1735313680e-7f, -0.9856738394e-6f, 0.2517003236e-4f, -0.3848015171e-3f,
                                    0.5681528564e0f, 0.5245623129e1f, 0.2107740710e2f, 0.4212761755e2f,
                                    0.4380524149e2f};
    static constexpr float kS[5] = {0.9349684299e1f, 0.3756930664e2f, 0.8058268949e2f, 0.9155653738e2f,
                                    0.4380524152e2f};
    float r = a * kR[0] + kR[1];
    for (int i = 2; i < 9; ++i) r = a * r + kR[i];
    float q = a + kS[0];
    for (int i = 1; i < 5; ++i) q = a * q + kS[i];
    const float e = std::exp((a * a) * -1.0f);
    const float v = e * (r / q);
    return v * s + (s * -1.0f + 1.0f);
}

}  // namespace detail
}  // namespace AscendC
