// LayerNormTiling (LayerNorm's [B, S, H] form) and the temporary-buffer sizes the kernel-side
// check and the host tiling functions share (see softmax_tilingdata.h for how the kernel, host
// and optiling names are one type here).
//
// Sizes (Atlas A2, from asc-devkit's layernorm_tiling_impl.cpp), shape [B, S, H, originalH],
// align32(x) = x rounded up to 32 bytes, k = 2 when isReuseSource with float, else 3:
//   GetLayerNormMaxMinTmpSize: min = k * align32(H * 4) + 2 * align32(B * S * 4)
//                              max = k * align32(B * S * H * 4) + 2 * align32(B * S * 4)
//   GetLayerNormNDTilingInfo(shape, stackBufferSize, typeSize, isReuseSource): the work area holds
//   (for half) a float mean and variance of B * S (each rounded up to 8), then k buffers of
//   oneTmpSize floats, a whole number of rows: oneTmpSize = (stackBufferSize / 4 - meanVar) / k,
//   rounded down to a multiple of H, at most B * S * H; the rows come oneTmpSize / H at a time.
#pragma once

#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"
#include "normalize_tiling.h"
#include "norm_sizes.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(LayerNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, bLength)
TILING_DATA_FIELD_DEF(uint32_t, sLength)
TILING_DATA_FIELD_DEF(uint32_t, hLength)
TILING_DATA_FIELD_DEF(uint32_t, originalHLength)
TILING_DATA_FIELD_DEF(uint32_t, inputXSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize)
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf)
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, tmpBufSize)
TILING_DATA_FIELD_DEF(uint32_t, oneTmpSize)
TILING_DATA_FIELD_DEF(uint32_t, firstTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, secondTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, thirdTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, loopRound)
TILING_DATA_FIELD_DEF(uint32_t, inputRoundSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos)
TILING_DATA_FIELD_DEF(uint32_t, meanVarRoundSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailPos)
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength)
TILING_DATA_FIELD_DEF(uint32_t, bsCurLength)
TILING_DATA_FIELD_DEF(float, lastDimValueBack)
END_TILING_DATA_DEF;

// The [A, R] form's tiling (GetLayerNormNDTilingInfo with isComputeRstd). The fields only
// Ascend 950 fills (halfAddRepeatTimes, rHeadLength, k2Rec, k2RRec) stay 0 on Atlas A2.
BEGIN_TILING_DATA_DEF(LayerNormSeparateTiling)
TILING_DATA_FIELD_DEF(uint32_t, aLength)
TILING_DATA_FIELD_DEF(uint32_t, rLength)
TILING_DATA_FIELD_DEF(uint32_t, halfAddRepeatTimes)
TILING_DATA_FIELD_DEF(uint32_t, rHeadLength)
TILING_DATA_FIELD_DEF(float, k2Rec)
TILING_DATA_FIELD_DEF(float, k2RRec)
TILING_DATA_FIELD_DEF(uint32_t, inputXSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize)
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, tmpBufSize)
TILING_DATA_FIELD_DEF(uint32_t, oneTmpSize)
TILING_DATA_FIELD_DEF(uint32_t, firstTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, secondTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, thirdTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, loopRound)
TILING_DATA_FIELD_DEF(uint32_t, inputRoundSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos)
TILING_DATA_FIELD_DEF(uint32_t, meanVarRoundSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailPos)
TILING_DATA_FIELD_DEF(uint32_t, arCurLength)
TILING_DATA_FIELD_DEF(uint32_t, aCurLength)
TILING_DATA_FIELD_DEF(float, rValueBack)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace layernorm_sizes {

using norm_sizes::align32;
inline uint32_t buffers(uint32_t typeSize, bool isReuseSource) { return isReuseSource && typeSize == 4 ? 2 : 3; }

inline uint32_t min_bytes(uint32_t b, uint32_t s, uint32_t h, uint32_t typeSize, bool isReuseSource) {
    return buffers(typeSize, isReuseSource) * align32(h * 4) + 2 * align32(b * s * 4);
}
inline uint32_t max_bytes(uint32_t b, uint32_t s, uint32_t h, uint32_t typeSize, bool isReuseSource) {
    return buffers(typeSize, isReuseSource) * align32(b * s * h * 4) + 2 * align32(b * s * 4);
}

// The bytes of the work area a filled tiling uses.
inline uint64_t planned_bytes(const ::AscendC::tiling::LayerNormTiling& t) {
    return (uint64_t(t.firstTmpStartPos) + uint64_t(t.numberOfTmpBuf) * t.oneTmpSize) * 4;
}

// GetLayerNormNDTilingInfo; leaves `t` untouched when the work area holds not one row.
inline void fill(uint32_t b, uint32_t s, uint32_t h, uint32_t oriH, uint32_t stackBytes, uint32_t typeSize,
                 bool isReuseSource, ::AscendC::tiling::LayerNormTiling& t) {
    const uint32_t input = b * s * h, mv = b * s, k = buffers(typeSize, isReuseSource);
    const uint32_t mvAligned = (mv + 7) / 8 * 8;
    const uint32_t mvTotal = typeSize == 4 ? 0 : 2 * mvAligned;
    const uint32_t floats = stackBytes / 4;
    uint32_t one = floats > mvTotal ? (floats - mvTotal) / k / h * h : 0;
    if (one > input) one = input;
    if (one == 0) return;
    t.bLength = b;
    t.sLength = s;
    t.hLength = h;
    t.originalHLength = oriH;
    t.inputXSize = input;
    t.meanVarSize = mv;
    t.numberOfTmpBuf = k;
    t.meanTmpTensorPos = 0;
    t.meanTmpTensorSize = mvAligned;
    t.varianceTmpTensorPos = mvAligned;
    t.varianceTmpTensorSize = mvAligned;
    t.tmpBufSize = floats;
    t.oneTmpSize = one;
    t.firstTmpStartPos = mvTotal;
    t.secondTmpStartPos = mvTotal + one;
    t.thirdTmpStartPos = mvTotal + 2 * one;
    t.loopRound = input / one;
    t.inputRoundSize = one;
    t.inputTailSize = input % one;
    t.inputTailPos = input - input % one;
    t.meanVarRoundSize = one / h;
    t.meanVarTailSize = input % one / h;
    t.meanVarTailPos = mv - input % one / h;
    t.bshCurLength = one;
    t.bsCurLength = one / h;
    t.lastDimValueBack = 1.0f / float(oriH);
}

}  // namespace layernorm_sizes

// The [A, R] form (Atlas A2): rPad = R rounded up to 32 bytes of T, mv = align32(A * 4):
//   GetLayerNormMaxMinTmpSize(shape [A, R], typeSize, isReuseSource, isComputeRstd, isOnlyOutput):
//     min = mv + max(2 * align32(rPad * 4), GetNormalizeMaxMinTmpSize's minimum for T = U),
//     max = mv + max(2 * align32(A * rPad * 4), GetNormalizeMaxMinTmpSize's maximum)
//   GetLayerNormNDTilingInfo(shape, stackBufferSize, typeSize, isReuseSource, isComputeRstd): the
//   variance (A floats, rounded up to 8) then two buffers of oneTmpSize floats, whole rows of rPad.
namespace layernorm_ar_sizes {

using norm_sizes::align32;
inline uint32_t min_bytes(uint32_t a, uint32_t r, uint32_t typeSize) {
    const uint32_t rp = normalize_sizes::pad_r(r, typeSize), mv = align32(a * 4);
    const uint32_t own = 2 * align32(rp * 4), norm = normalize_sizes::min_bytes(a, rp, typeSize);
    return mv + (own <= norm ? norm : own);
}
inline uint32_t max_bytes(uint32_t a, uint32_t r, uint32_t typeSize) {
    const uint32_t rp = normalize_sizes::pad_r(r, typeSize), mv = align32(a * 4);
    const uint32_t own = 2 * align32(a * rp * 4), norm = normalize_sizes::max_bytes(a, rp);
    return mv + (own <= norm ? norm : own);
}
// The bytes of the work area a filled tiling uses.
inline uint64_t planned_bytes(const ::AscendC::tiling::LayerNormSeparateTiling& t) {
    return (uint64_t(t.varianceTmpTensorSize) + 2ull * t.oneTmpSize) * 4;
}

// GetLayerNormNDTilingInfo, [A, R]; leaves `t` untouched when the area holds not one row.
inline void fill(uint32_t a, uint32_t r, uint32_t stackBytes, uint32_t typeSize,
                 ::AscendC::tiling::LayerNormSeparateTiling& t) {
    const uint32_t rp = normalize_sizes::pad_r(r, typeSize), input = a * rp;
    const uint32_t var = (a + 7) / 8 * 8, floats = stackBytes / 4;
    uint32_t one = floats > var ? (floats - var) / 2 / rp * rp : 0;
    one = std::min(one, input);
    if (one == 0) return;
    t = {};
    t.aLength = a, t.rLength = r, t.inputXSize = input, t.meanVarSize = a, t.numberOfTmpBuf = 2;
    t.varianceTmpTensorPos = 0, t.varianceTmpTensorSize = var, t.tmpBufSize = floats, t.oneTmpSize = one;
    t.firstTmpStartPos = var, t.secondTmpStartPos = var + one;
    t.loopRound = input / one, t.inputRoundSize = one, t.inputTailSize = input % one;
    t.inputTailPos = input - input % one, t.meanVarRoundSize = one / rp, t.meanVarTailSize = input % one / rp;
    t.meanVarTailPos = a - input % one / rp, t.arCurLength = one, t.aCurLength = one / rp;
    t.rValueBack = 1.0f / float(r);
}

}  // namespace layernorm_ar_sizes
}  // namespace AscendC

using AscendC::tiling::LayerNormSeparateTiling;
using AscendC::tiling::LayerNormTiling;
namespace optiling {
using AscendC::tiling::LayerNormSeparateTiling;
using AscendC::tiling::LayerNormTiling;
}  // namespace optiling
