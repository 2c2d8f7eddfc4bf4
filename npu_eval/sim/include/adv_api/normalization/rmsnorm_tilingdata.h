// RmsNormTiling and the temporary-buffer sizes the kernel-side check and the host tiling
// functions share (see softmax_tilingdata.h for how the kernel, host and optiling names are one
// type here).
//
// Sizes (Atlas A2, from asc-devkit's rmsnorm_tiling_impl.cpp), shape [B, S, H], c = 2 for half
// (a float copy of the input beside the work rows), 1 for float:
//   GetRmsNormMaxMinTmpSize: min = (c * H + 8) * 4,  max = (c * B * S * H + align8(B * S)) * 4
//     (align8 for float; for half the row count is aligned to 16)
//   GetRmsNormTilingInfo(shape, oriShape, stackBufferByteSize, typeSize, tiling, isBasicBlock):
//     rows per pass bs = the most with c * bs * H + align8(bs) floats in the work area, at most
//     B * S and 255 (a multiple of 8 for a basic block); false when the area is below the minimum.
#pragma once

#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(RmsNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, bLength)
TILING_DATA_FIELD_DEF(uint32_t, sLength)
TILING_DATA_FIELD_DEF(uint32_t, hLength)
TILING_DATA_FIELD_DEF(uint32_t, originalHLength)
TILING_DATA_FIELD_DEF(float, reciprocalOfHLength)
TILING_DATA_FIELD_DEF(uint32_t, mainBshLength)
TILING_DATA_FIELD_DEF(uint32_t, mainBsLength)
TILING_DATA_FIELD_DEF(uint32_t, mainBsLengthAlign)
TILING_DATA_FIELD_DEF(uint32_t, loopRound)
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos)
TILING_DATA_FIELD_DEF(uint32_t, tailBshLength)
TILING_DATA_FIELD_DEF(uint32_t, tailBsLength)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace rmsnorm_sizes {

inline uint32_t coeff(uint32_t typeSize) { return typeSize == 4 ? 1 : 2; }
inline uint32_t align_elems(uint32_t n, uint32_t typeSize) {
    const uint32_t unit = 32 / typeSize;
    return (n + unit - 1) / unit * unit;
}

inline uint32_t min_bytes(uint32_t h, uint32_t typeSize) { return (coeff(typeSize) * h + 8) * 4; }
inline uint32_t max_bytes(uint32_t b, uint32_t s, uint32_t h, uint32_t typeSize) {
    return (coeff(typeSize) * b * s * h + align_elems(b * s, typeSize)) * 4;
}

// The bytes of the work area a filled tiling uses.
inline uint64_t planned_bytes(const ::AscendC::tiling::RmsNormTiling& t, uint32_t typeSize) {
    return (uint64_t(coeff(typeSize)) * t.mainBshLength + t.mainBsLengthAlign) * 4;
}

inline bool fill(uint32_t b, uint32_t s, uint32_t h, uint32_t oriH, uint32_t stackBytes, uint32_t typeSize,
                 bool isBasicBlock, ::AscendC::tiling::RmsNormTiling& t) {
    if (h == 0 || oriH == 0 || oriH > h || h * typeSize % 32 != 0) return false;
    if (isBasicBlock && (h % 64 != 0 || b * s % 8 != 0 || h >= 2048)) return false;
    if (stackBytes < min_bytes(h, typeSize)) return false;
    const uint32_t total = stackBytes / 4, c = coeff(typeSize);
    uint32_t bs = 1;
    while (total >= (bs + 1) * h * c + (bs + 1 + 7) / 8 * 8) ++bs;
    const uint32_t input = b * s * h;
    uint32_t one = bs * h > input ? input : bs * h;
    bs = one / h;
    if (isBasicBlock) {
        bs = bs < 8 ? bs : bs / 8 * 8;
    } else if (bs > 255) {
        bs = 255;
    }
    one = bs * h;
    t.bLength = b;
    t.sLength = s;
    t.hLength = h;
    t.originalHLength = oriH;
    t.reciprocalOfHLength = float(1.0 / double(oriH));
    t.mainBshLength = one;
    t.mainBsLength = bs;
    t.mainBsLengthAlign = align_elems(bs, 4);
    t.loopRound = input / one;
    t.tailBshLength = input % one;
    t.inputTailPos = input - input % one;
    t.tailBsLength = input % one / h;
    return true;
}

}  // namespace rmsnorm_sizes
}  // namespace AscendC

// CANN's generated kernel_tiling.h exports the struct at global scope too (the official rmsnorm
// sample names it bare), so a kernel's own struct of that name clashes here as it does there.
using AscendC::tiling::RmsNormTiling;
namespace optiling {
using AscendC::tiling::RmsNormTiling;
}  // namespace optiling
