// Gelu, FasterGelu, FasterGeluV2: GetGeluMaxMinTmpSize (GetGeluMax/MinTmpSize)
// (asc-devkit adv_api/activation/gelu_tiling.h). The sizes are in activation_sizes.h, which the
// kernel-side check uses too.
#pragma once

#include "activation_sizes.h"

namespace AscendC {

inline uint32_t GetGeluMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize) {
    (void)srcShape;
    return activation_sizes::gelu_min(typeSize);
}
inline uint32_t GetGeluMaxTmpSize(const TensorShape& srcShape, const uint32_t typeSize) {
    return activation_sizes::gelu_max(activation_sizes::elems(srcShape), typeSize);
}
inline void GetGeluMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                 uint32_t& minValue) {
    maxValue = GetGeluMaxTmpSize(srcShape, typeSize);
    minValue = GetGeluMinTmpSize(srcShape, typeSize);
}

}  // namespace AscendC
