// SwiGLU: GetSwiGLUMaxMinTmpSize, GetSwiGLUTmpBufferFactorSize
// (asc-devkit adv_api/activation/swiglu_tiling.h). The sizes are in activation_sizes.h, which the
// kernel-side check uses too.
#pragma once

#include "activation_sizes.h"

namespace AscendC {

inline void GetSwiGLUMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                   uint32_t& minValue, const bool isReuseSource) {
    (void)isReuseSource;
    minValue = activation_sizes::swiglu_min(typeSize);
    maxValue = activation_sizes::swiglu_max(activation_sizes::elems(srcShape), typeSize);
}
inline void GetSwiGLUTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer) {
    extraBuffer = 0;
    maxLiveNodeCount = activation_sizes::swiglu_factor(typeSize);
}

}  // namespace AscendC
