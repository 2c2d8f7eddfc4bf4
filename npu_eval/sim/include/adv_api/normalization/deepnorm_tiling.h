// DeepNorm's tiling struct and host tiling (asc-devkit adv_api/normalization/deepnorm_tiling.h,
// deepnorm_tilingdata.h; deepnorm_tiling_impl.cpp on Atlas A2): DeepNormTiling has LayerNormTiling's
// fields, and the sizes are LayerNorm's (three float buffers of rows, two of B * S; two with
// isReuseSource on float). GetDeepNormTilingInfo takes the padded and the original shape [B, S, H]
// and fails (false) on a shape it cannot run or a buffer below the minimum; a basic block
// (isBasicBlock: H % 64 == 0, B * S % 8 == 0, H = original H) keeps rows a multiple of 8.
#pragma once

#include <cstring>

#include "layernorm_tiling.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(DeepNormTiling)
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
}  // namespace tiling

namespace layernorm_sizes {
static_assert(sizeof(tiling::DeepNormTiling) == sizeof(tiling::LayerNormTiling), "the same fields");
inline tiling::LayerNormTiling from_deep(const tiling::DeepNormTiling& t) {
    tiling::LayerNormTiling l;
    memcpy(&l, &t, sizeof l);
    return l;
}
inline bool deepnorm_basic_ok(uint32_t b, uint32_t s, uint32_t h) { return h % 64 == 0 && b * s % 8 == 0; }
}  // namespace layernorm_sizes

inline bool GetDeepNormMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                     const bool isBasicBlock, uint32_t& maxValue, uint32_t& minValue) {
    const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
    if (srcShape.GetDimNum() != 3 || (isBasicBlock && !layernorm_sizes::deepnorm_basic_ok(b, s, h))) return false;
    maxValue = layernorm_sizes::max_bytes(b, s, h, typeSize, isReuseSource);
    minValue = layernorm_sizes::min_bytes(b, s, h, typeSize, isReuseSource);
    return true;
}

inline bool GetDeepNormTilingInfo(const TensorShape& srcShape, const TensorShape& originSrcShape,
                                  const uint32_t stackBufferSize, const uint32_t typeSize, const bool isReuseSource,
                                  const bool isBasicBlock, tiling::DeepNormTiling& tiling) {
    uint32_t mx = 0, mn = 0;
    if (!GetDeepNormMaxMinTmpSize(srcShape, typeSize, isReuseSource, isBasicBlock, mx, mn) || stackBufferSize < mn) {
        return false;
    }
    const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
    const uint32_t oriH = uint32_t(originSrcShape.GetDim(2));
    const bool ok = originSrcShape.GetDimNum() == 3 && uint32_t(originSrcShape.GetDim(0)) == b &&
                    uint32_t(originSrcShape.GetDim(1)) == s && h * typeSize % 32 == 0 && oriH > 0 && oriH <= h &&
                    !(isBasicBlock && oriH != h) && h <= 255 * 8;
    if (!ok) return false;
    tiling::LayerNormTiling l{};
    layernorm_sizes::fill(b, s, h, oriH, stackBufferSize, typeSize, isReuseSource, l);
    if (l.oneTmpSize == 0) return false;
    if (isBasicBlock && l.oneTmpSize / (8 * h) > 0) {  // whole groups of 8 rows
        const uint32_t one = l.oneTmpSize / (8 * h) * (8 * h), input = b * s * h;
        l.oneTmpSize = l.inputRoundSize = l.bshCurLength = one;
        l.secondTmpStartPos = l.firstTmpStartPos + one;
        l.thirdTmpStartPos = l.secondTmpStartPos + one;
        l.loopRound = input / one;
        l.inputTailSize = input % one;
        l.inputTailPos = input - input % one;
        l.meanVarRoundSize = l.bsCurLength = one / h;
        l.meanVarTailSize = input % one / h;
        l.meanVarTailPos = b * s - input % one / h;
    }
    memcpy(&tiling, &l, sizeof l);
    return true;
}

}  // namespace AscendC

using AscendC::tiling::DeepNormTiling;
namespace optiling {
using AscendC::tiling::DeepNormTiling;
}  // namespace optiling
