// Normalize host tiling (asc-devkit adv_api/normalization/normalize_tiling.h): GetNormalizeMaxMinTmpSize,
// shape [A, R], and the sizes the kernel-side check uses too.
//
// Sizes (Atlas A2, normalize_tiling_impl.cpp), rPad = R rounded up to 32 bytes of T, align32 in bytes:
//   min = max(align32(A * 4), c * align32(rPad * 4)), c = 2 for float gamma/beta (two float rows of a
//         pass), 4 for half (plus float copies of gamma and beta)
//   max = 2 * align32(rPad * 4) + 2 * align32(align8(A) * rPad * 4)
// isComputeRstd must be true and isOnlyOutput false (the host function asserts both).
#pragma once

#include <algorithm>
#include <cstdint>

#include "../utils/types.h"
#include "norm_sizes.h"

namespace AscendC {
namespace normalize_sizes {

using norm_sizes::align32;
inline uint32_t pad_r(uint32_t r, uint32_t typeSizeT) {
    const uint32_t unit = typeSizeT ? 32 / typeSizeT : 1;
    return (r + unit - 1) / unit * unit;
}
inline uint32_t min_bytes(uint32_t a, uint32_t rPad, uint32_t typeSizeU) {
    return std::max(align32(a * 4), (typeSizeU == 4 ? 2 : 4) * align32(rPad * 4));
}
inline uint32_t max_bytes(uint32_t a, uint32_t rPad) {
    return 2 * align32(rPad * 4) + 2 * align32((a + 7) / 8 * 8 * rPad * 4);
}

}  // namespace normalize_sizes

inline void GetNormalizeMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSizeU, const uint32_t typeSizeT,
                                      const bool isReuseSource, const bool isComputeRstd, const bool isOnlyOutput,
                                      uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    if (!isComputeRstd || isOnlyOutput || typeSizeU == 0 || typeSizeT == 0 || srcShape.GetDimNum() < 2) return;
    const uint32_t a = uint32_t(srcShape.GetDim(0)), rPad = normalize_sizes::pad_r(uint32_t(srcShape.GetDim(1)), typeSizeT);
    maxValue = normalize_sizes::max_bytes(a, rPad);
    minValue = normalize_sizes::min_bytes(a, rPad, typeSizeU);
}

}  // namespace AscendC
