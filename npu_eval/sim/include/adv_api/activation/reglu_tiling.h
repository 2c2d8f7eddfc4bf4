// ReGlu: GetReGluMaxMinTmpSize
// (asc-devkit adv_api/activation/reglu_tiling.h). The sizes are in activation_sizes.h, which the
// kernel-side check uses too.
#pragma once

#include "activation_sizes.h"

namespace AscendC {

inline void GetReGluMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    minValue = activation_sizes::reglu_min(typeSize);
    maxValue = activation_sizes::reglu_max(activation_sizes::elems(srcShape), typeSize);
}

}  // namespace AscendC
