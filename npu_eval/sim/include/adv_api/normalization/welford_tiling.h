// WelfordUpdate and WelfordFinalize host tiling (asc-devkit: GetWelfordUpdateMaxMinTmpSize in
// layernorm_tiling.h, GetWelfordFinalizeMaxMinTmpSize in welfordfinalize_tiling.h), and the sizes
// the kernel-side checks use too.
//
// Sizes (Atlas A2, layernorm_tiling_impl.cpp / welfordfinalize_tiling_impl.cpp):
//   GetWelfordUpdateMaxMinTmpSize(shape [rn, ab], typeSizeT, typeSizeU, isReuseSource, isInplace):
//     min = k * 256 bytes (k float repeats of 64 per element chunk: 3 for half input, 1 for float with
//     isReuseSource, else 2), max = ceil(rn * ab / 64) * min.
//   GetWelfordFinalizeMaxMinTmpSize(shape [ab], ...): min = 64 * 4 floats (two 64-float staging rows for the
//     partial sums, two 64-float work rows), max = min for ab <= 64, else (2 * 64 + 2 * ab) * 4.
#pragma once

#include "../utils/types.h"

namespace AscendC {
namespace welford_sizes {

inline uint32_t update_buffers(uint32_t typeSizeT, bool isReuseSource) {
    return typeSizeT == 2 ? 3 : (isReuseSource ? 1 : 2);
}
inline uint32_t update_min_bytes(uint32_t typeSizeT, bool isReuseSource) {
    return update_buffers(typeSizeT, isReuseSource) * 256;
}
inline uint32_t update_max_bytes(uint32_t rn, uint32_t ab, uint32_t typeSizeT, bool isReuseSource) {
    return (rn * ab + 63) / 64 * update_min_bytes(typeSizeT, isReuseSource);
}
constexpr uint32_t kFinalizeMinBytes = 64 * 4 * 4;
inline uint32_t finalize_max_bytes(uint32_t ab) { return ab <= 64 ? kFinalizeMinBytes : (2 * 64 + 2 * ab) * 4; }
// The floats one WelfordFinalize pass covers in a work area of `bytes`: 128 floats hold the partial
// sums, the rest two equal work rows, whole repeats of 64.
inline uint32_t finalize_chunk(uint64_t bytes) { return uint32_t((bytes / 4 - 128) / 128 * 64); }

}  // namespace welford_sizes

inline void GetWelfordUpdateMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSizeT,
                                          const uint32_t typeSizeU, const bool isReuseSource, const bool isInplace,
                                          uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSizeU, (void)isInplace;
    const uint32_t rn = srcShape.GetDimNum() > 0 ? uint32_t(srcShape.GetDim(0)) : 0;
    const uint32_t ab = srcShape.GetDimNum() > 1 ? uint32_t(srcShape.GetDim(1)) : 0;
    minValue = welford_sizes::update_min_bytes(typeSizeT, isReuseSource);
    maxValue = welford_sizes::update_max_bytes(rn, ab, typeSizeT, isReuseSource);
}

inline void GetWelfordFinalizeMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize,
                                            const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize, (void)isReuseSource;
    const uint32_t ab = srcShape.GetDimNum() == 1 ? uint32_t(srcShape.GetDim(0)) : 0;
    if (ab == 0 || ab % 8 != 0) return;  // the host function asserts: abLength 32-byte aligned
    minValue = welford_sizes::kFinalizeMinBytes;
    maxValue = welford_sizes::finalize_max_bytes(ab);
}

}  // namespace AscendC
