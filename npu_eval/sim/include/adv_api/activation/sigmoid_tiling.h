// Sigmoid: GetSigmoidMaxMinTmpSize
// (asc-devkit adv_api/activation/sigmoid_tiling.h). The sizes are in activation_sizes.h, which the
// kernel-side check uses too.
#pragma once

#include "activation_sizes.h"

namespace AscendC {

inline void GetSigmoidMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    maxValue = activation_sizes::sigmoid_max(activation_sizes::elems(srcShape), typeSize);
    minValue = activation_sizes::sigmoid_min(typeSize);
}

}  // namespace AscendC
