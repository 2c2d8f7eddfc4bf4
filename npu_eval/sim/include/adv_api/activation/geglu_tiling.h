// GeGLU: GetGeGLUMaxMinTmpSize, GetGeGLUTmpBufferFactorSize
// (asc-devkit adv_api/activation/geglu_tiling.h). The sizes are in activation_sizes.h, which the
// kernel-side check uses too.
#pragma once

#include "activation_sizes.h"

namespace AscendC {

inline void GetGeGLUMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    minValue = activation_sizes::geglu_min(typeSize);
    maxValue = activation_sizes::geglu_max(activation_sizes::elems(srcShape), typeSize);
}
inline void GetGeGLUTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
    extraBuf = 0;
    maxLiveNodeCount = activation_sizes::geglu_factor(typeSize);
}

}  // namespace AscendC
