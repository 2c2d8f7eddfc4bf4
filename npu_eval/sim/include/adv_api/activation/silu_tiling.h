// Silu: GetSiluTmpSize (no buffer: 0)
// (asc-devkit adv_api/activation/silu_tiling.h). The sizes are in activation_sizes.h, which the
// kernel-side check uses too.
#pragma once

#include "activation_sizes.h"

namespace AscendC {

inline void GetSiluTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                           uint32_t& maxValue, uint32_t& minValue) {
    (void)srcShape, (void)typeSize, (void)isReuseSource;
    maxValue = minValue = 0;
}

}  // namespace AscendC
