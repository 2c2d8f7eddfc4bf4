// BatchNorm host tiling (asc-devkit adv_api/normalization/batchnorm_tiling.h): BatchNormTiling,
// GetBatchNormMaxMinTmpSize and GetBatchNormNDTilingInfo, shapes [B, S, H] with the original
// batch length in originSrcShape; the sizes the kernel-side check uses too.
//
// Sizes (Atlas A2, batchnorm_tiling_impl.cpp), B the original batch length, SH = S * H:
//   min = 3 * B * u + 2 * align32(SH * 4), u = 32 bytes for float, 64 for half, 256 for a basic block
//   max = 3 * align32(B * SH * 4) + 2 * align32(SH * 4)
//   the tiling: (for half) a float mean and variance of SH (rounded up to 8), then 3 buffers of
//   oneTmpSize floats, whole columns of B rounded down to 8 (float) or 16 (half) columns, at most
//   B * SH; a pass covers shCurLength = oneTmpSize / B columns. false when SH * sizeof(T) is not
//   32-byte aligned, the area is below the minimum, or (basic block) SH % 64 or B % 8 is not 0.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"
#include "../utils/types.h"
#include "norm_sizes.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(BatchNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, originalBLength)
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize)
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, tmpBufSize)
TILING_DATA_FIELD_DEF(uint32_t, oneTmpSize)
TILING_DATA_FIELD_DEF(uint32_t, firstTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, secondTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, thirdTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, loopRound)
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailPos)
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength)
TILING_DATA_FIELD_DEF(uint32_t, shCurLength)
TILING_DATA_FIELD_DEF(float, firstDimValueBack)
TILING_DATA_FIELD_DEF(uint32_t, castHalfRepStride)
TILING_DATA_FIELD_DEF(uint32_t, shCurLengthBlockNum)
TILING_DATA_FIELD_DEF(uint32_t, castHalfOutRepStride)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace batchnorm_sizes {

using norm_sizes::align32;
inline bool basic_ok(uint32_t b, uint32_t sh) { return sh % 64 == 0 && b % 8 == 0; }
inline uint32_t min_bytes(uint32_t b, uint32_t sh, uint32_t typeSize, bool isBasicBlock) {
    const uint32_t unit = isBasicBlock ? 64 * 4 : (typeSize == 2 ? 64 : 32);
    return 3 * b * unit + 2 * align32(sh * 4);
}
inline uint32_t max_bytes(uint32_t b, uint32_t sh) { return 3 * align32(b * sh * 4) + 2 * align32(sh * 4); }
// The bytes of the work area a filled tiling uses.
inline uint64_t planned_bytes(const ::AscendC::tiling::BatchNormTiling& t) {
    return (uint64_t(t.thirdTmpStartPos) + t.oneTmpSize) * 4;
}

inline bool fill(uint32_t b, uint32_t sh, uint32_t stackBytes, uint32_t typeSize, bool isBasicBlock,
                 ::AscendC::tiling::BatchNormTiling& t) {
    if (b == 0 || sh == 0 || sh * typeSize % 32 != 0 || (isBasicBlock && !basic_ok(b, sh))) return false;
    if (stackBytes < min_bytes(b, sh, typeSize, isBasicBlock)) return false;
    const uint32_t mv = (sh + 7) / 8 * 8, mvTotal = typeSize == 4 ? 0 : 2 * mv, floats = stackBytes / 4;
    const uint32_t unit = b * (typeSize == 4 ? 8 : 16);
    uint32_t one = std::min((floats - mvTotal) / 3 / unit * unit, b * sh);
    if (one == 0) return false;
    uint32_t shCur = one / b;
    if (isBasicBlock && shCur % 64 != 0) shCur = shCur / 64 * 64, one = shCur * b;
    if (one == 0) return false;
    const uint32_t input = b * sh;
    t = {};
    t.originalBLength = b, t.meanVarSize = sh, t.meanTmpTensorPos = 0, t.varianceTmpTensorPos = mv;
    t.tmpBufSize = floats, t.oneTmpSize = one, t.firstTmpStartPos = mvTotal;
    t.secondTmpStartPos = mvTotal + one, t.thirdTmpStartPos = mvTotal + 2 * one;
    t.loopRound = input / one, t.inputTailSize = input % one, t.inputTailPos = (input - input % one) / b;
    t.meanVarTailSize = input % one / b, t.meanVarTailPos = sh - input % one / b;
    t.bshCurLength = one, t.shCurLength = shCur, t.firstDimValueBack = 1.0f / float(b);
    t.castHalfRepStride = 4, t.shCurLengthBlockNum = shCur / 8, t.castHalfOutRepStride = sh / 16;
    return true;
}

}  // namespace batchnorm_sizes

inline bool GetBatchNormMaxMinTmpSize(const TensorShape& srcShape, const TensorShape& originSrcShape,
                                      const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                      uint32_t& minValue, const bool isBasicBlock = false) {
    (void)isReuseSource;
    if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
    const uint32_t b = uint32_t(originSrcShape.GetDim(0)), sh = uint32_t(srcShape.GetDim(1) * srcShape.GetDim(2));
    if (isBasicBlock && !batchnorm_sizes::basic_ok(b, sh)) return false;
    maxValue = batchnorm_sizes::max_bytes(b, sh);
    minValue = batchnorm_sizes::min_bytes(b, sh, typeSize, isBasicBlock);
    return true;
}

inline bool GetBatchNormNDTilingInfo(const TensorShape& srcShape, const TensorShape& originSrcShape,
                                     const uint32_t stackBufferByteSize, const uint32_t typeSize,
                                     const bool isReuseSource, tiling::BatchNormTiling& tilling,
                                     const bool isBasicBlock = false) {
    (void)isReuseSource;
    if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
    const uint32_t b = uint32_t(originSrcShape.GetDim(0)), sh = uint32_t(srcShape.GetDim(1) * srcShape.GetDim(2));
    return batchnorm_sizes::fill(b, sh, stackBufferByteSize, typeSize, isBasicBlock, tilling);
}

}  // namespace AscendC

using AscendC::tiling::BatchNormTiling;
namespace optiling {
using AscendC::tiling::BatchNormTiling;
}  // namespace optiling
