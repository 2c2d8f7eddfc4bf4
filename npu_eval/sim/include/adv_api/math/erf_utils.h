// Erf's rational approximation (asc-devkit include/adv_api/math/erf_utils.h is where the real
// one keeps Erf's helpers): erf(x) = x P(x^2) / Q(x^2) on x clipped to [-3.92, 3.92], with the
// documented coefficients, evaluated by Horner's rule in float one vector op at a time.
#pragma once

#include <algorithm>

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

}  // namespace detail
}  // namespace AscendC
