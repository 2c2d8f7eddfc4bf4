// The temporary-buffer sizes of the element-wise activations, shared by the kernel-side checks
// and the host tiling functions (gelu_tiling.h, sigmoid_tiling.h, ...) (Atlas A2; from asc-devkit's host tiling implementations,
// impl/adv_api/tiling/activation/*_tiling*.cpp). n: the element count, typeSize: sizeof(T).
//   Gelu / FasterGelu / FasterGeluV2:  min 3 * 256,   max max(3 * n * 4, min)
//   Sigmoid:                           min 256,       max max(n * typeSize, 256)
//   SwiGLU:   half min 6 * 256, max 6 * max(n * 2, 256);  float 0 (no buffer)
//   GeGLU:    half min 4 * 256, max 4 * max(n * 2, 256);  float 0
//   ReGlu:    half min 6 * 256, max max(6 * n * 2, min);  float 256
//   Silu, Swish: 0 (no buffer)
#pragma once

#include <algorithm>
#include <cstdint>

#include "../utils/types.h"

namespace AscendC {
namespace activation_sizes {

constexpr uint32_t kRepeat = 256;

inline uint32_t elems(const TensorShape& s) {
    const int64_t n = s.GetShapeSize();
    return n > 0 ? uint32_t(n) : 0;
}

inline uint32_t gelu_min(uint32_t) { return 3 * kRepeat; }
inline uint32_t gelu_max(uint32_t n, uint32_t typeSize) { return std::max(3 * n * 4, gelu_min(typeSize)); }
inline uint32_t sigmoid_min(uint32_t) { return kRepeat; }
inline uint32_t sigmoid_max(uint32_t n, uint32_t typeSize) { return std::max(n * typeSize, kRepeat); }
inline uint32_t swiglu_factor(uint32_t typeSize) { return typeSize == 4 ? 0 : 6; }
inline uint32_t swiglu_min(uint32_t typeSize) { return swiglu_factor(typeSize) * kRepeat; }
inline uint32_t swiglu_max(uint32_t n, uint32_t typeSize) {
    return swiglu_factor(typeSize) * std::max(n * typeSize, kRepeat);
}
inline uint32_t geglu_factor(uint32_t typeSize) { return typeSize == 4 ? 0 : 4; }
inline uint32_t geglu_min(uint32_t typeSize) { return geglu_factor(typeSize) * kRepeat; }
inline uint32_t geglu_max(uint32_t n, uint32_t typeSize) {
    return geglu_factor(typeSize) * std::max(n * typeSize, kRepeat);
}
inline uint32_t reglu_min(uint32_t typeSize) { return typeSize == 4 ? kRepeat : 6 * kRepeat; }
inline uint32_t reglu_max(uint32_t n, uint32_t typeSize) {
    return typeSize == 4 ? kRepeat : std::max(6 * n * typeSize, reglu_min(typeSize));
}

}  // namespace activation_sizes
}  // namespace AscendC
