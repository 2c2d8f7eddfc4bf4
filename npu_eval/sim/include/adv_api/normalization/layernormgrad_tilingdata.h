// LayerNormGradTiling and LayerNormGradBetaTiling, and the temporary-buffer sizes the kernel-side
// checks and the host tiling functions share (one type for the kernel, host and optiling names,
// as in softmax_tilingdata.h).
//
// Sizes (Atlas A2, asc-devkit's layernorm_grad_tiling_impl.cpp / layernorm_grad_beta_tiling_impl.cpp),
// shape [B, S, H, originalH]:
//   LayerNormGrad, k = 9 buffers for half (three float copies of the inputs), 4 for float with
//   isReuseSource (x - mean and dy * gamma live in the inputs), else 6:
//     GetLayerNormGradMaxMinTmpSize: min = k * min(B*S*H, H*H) * typeSize, max = k * max(B*S*H, H*H) * typeSize
//     GetLayerNormGradNDTilingInfo(shape, stackBufferSize bytes, ...): oneCalSize = stackBufferSize / 4 / k
//       rounded down to whole rows, then the row count rounded UP to a 32-byte block (8 rows for float,
//       16 for half); the buffers sit at multiples of oneCalSize.
//   LayerNormGradBeta (float gamma/beta sums over rows; for half two float staging rows of H and two
//   float copies of the chunk):
//     GetLayerNormGradBetaMaxMinTmpSize: min = c * H * 4, max = c * B*S*H * 4, c = 4 for half, 2 for float
//     GetLayerNormGradBetaNDTilingInfo: oneCalSize = stackBufferSize / 4 floats (half: minus 2H, halved),
//       rounded down to whole rows, at most B*S*H.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../../kernel_tiling/kernel_tiling.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(LayerNormGradTiling)
TILING_DATA_FIELD_DEF(uint32_t, stackBufferSize)
TILING_DATA_FIELD_DEF(uint32_t, bLength)
TILING_DATA_FIELD_DEF(uint32_t, sLength)
TILING_DATA_FIELD_DEF(uint32_t, hLength)
TILING_DATA_FIELD_DEF(uint32_t, originalHLength)
TILING_DATA_FIELD_DEF(uint32_t, oneCalSize)
TILING_DATA_FIELD_DEF(uint32_t, nohCalSize)
TILING_DATA_FIELD_DEF(uint32_t, loopNum)
TILING_DATA_FIELD_DEF(uint32_t, tailSize)
TILING_DATA_FIELD_DEF(uint32_t, nohTailSize)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorBSHPos)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorBSHSize)
TILING_DATA_FIELD_DEF(uint32_t, pdVarTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, pdVarTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, pdMeanTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, pdMeanTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, x1TensorPos)
TILING_DATA_FIELD_DEF(uint32_t, x1TensorSize)
TILING_DATA_FIELD_DEF(uint32_t, x2TensorPos)
TILING_DATA_FIELD_DEF(uint32_t, x2TensorSize)
TILING_DATA_FIELD_DEF(uint32_t, x3TensorPos)
TILING_DATA_FIELD_DEF(uint32_t, x3TensorSize)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor1Pos)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor1Size)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor2Pos)
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor2Size)
TILING_DATA_FIELD_DEF(uint32_t, lastDimValueBack)
TILING_DATA_FIELD_DEF(uint32_t, lastDimValueBackMulTwo)
END_TILING_DATA_DEF;

BEGIN_TILING_DATA_DEF(LayerNormGradBetaTiling)
TILING_DATA_FIELD_DEF(uint32_t, stackBufferSize)
TILING_DATA_FIELD_DEF(uint32_t, bLength)
TILING_DATA_FIELD_DEF(uint32_t, sLength)
TILING_DATA_FIELD_DEF(uint32_t, hLength)
TILING_DATA_FIELD_DEF(uint32_t, originalHLength)
TILING_DATA_FIELD_DEF(uint32_t, bshLength)
TILING_DATA_FIELD_DEF(uint32_t, bsLength)
TILING_DATA_FIELD_DEF(uint32_t, oneCalSize)
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf)
TILING_DATA_FIELD_DEF(uint32_t, loopRound)
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos)
TILING_DATA_FIELD_DEF(uint32_t, bsTailSize)
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength)
TILING_DATA_FIELD_DEF(uint32_t, bsCurLength)
TILING_DATA_FIELD_DEF(uint32_t, gammaTempTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, betaTempTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, inputDyTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, resForGammaTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, reserved)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace layernormgrad_sizes {

inline uint32_t buffers(uint32_t typeSize, bool isReuseSource) {
    return typeSize == 2 ? 9 : (isReuseSource ? 4 : 6);
}
inline uint32_t min_bytes(uint32_t b, uint32_t s, uint32_t h, uint32_t typeSize, bool isReuseSource) {
    return buffers(typeSize, isReuseSource) * std::min(b * s * h, h * h) * typeSize;
}
inline uint32_t max_bytes(uint32_t b, uint32_t s, uint32_t h, uint32_t typeSize, bool isReuseSource) {
    return buffers(typeSize, isReuseSource) * std::max(b * s * h, h * h) * typeSize;
}
inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// The bytes of the work area a filled tiling touches: k - 1 whole buffers and, in the last, one
// pass's elements (the row count is rounded up to a block, so this can exceed stackBufferSize).
inline uint64_t planned_bytes(const ::AscendC::tiling::LayerNormGradTiling& t, uint32_t typeSize, bool isReuseSource) {
    const uint64_t bsh = uint64_t(t.bLength) * t.sLength * t.hLength;
    return (uint64_t(buffers(typeSize, isReuseSource) - 1) * t.oneCalSize + std::min<uint64_t>(t.oneCalSize, bsh)) * 4;
}

// GetLayerNormGradNDTilingInfo; leaves `t` untouched when the area holds not one row.
inline void fill(uint32_t b, uint32_t s, uint32_t h, uint32_t oriH, uint32_t stackBytes, uint32_t typeSize,
                 bool isReuseSource, ::AscendC::tiling::LayerNormGradTiling& t) {
    const uint32_t k = buffers(typeSize, isReuseSource), input = b * s * h;
    uint32_t one = stackBytes / 4 / k / h * h;
    if (one == 0) return;
    const uint32_t perBlock = typeSize == 4 ? 8 : 16;
    const uint32_t noh = (one / h + perBlock - 1) / perBlock * perBlock;
    one = noh * h;
    t = {};
    t.stackBufferSize = stackBytes;
    t.bLength = b, t.sLength = s, t.hLength = h, t.originalHLength = oriH;
    t.oneCalSize = one, t.nohCalSize = noh;
    t.loopNum = input / one, t.tailSize = input % one, t.nohTailSize = input % one / h;
    const bool reuse = isReuseSource && typeSize == 4;
    t.tmpTensorBSHPos = 0, t.pdVarTensorPos = one, t.pdMeanTensorPos = 2 * one;
    t.x1TensorPos = reuse ? 0 : 3 * one;
    t.x2TensorPos = reuse ? 0 : 4 * one;
    t.x3TensorPos = reuse ? 3 * one : 5 * one;
    if (typeSize == 2) t.tmpTensorPos = 6 * one, t.tmpTensor1Pos = 7 * one, t.tmpTensor2Pos = 8 * one;
    t.tmpTensorBSHSize = t.pdVarTensorSize = t.pdMeanTensorSize = t.x1TensorSize = t.x2TensorSize = one;
    t.x3TensorSize = t.tmpTensorSize = t.tmpTensor1Size = t.tmpTensor2Size = one;
    t.lastDimValueBack = float_bits(1.0f / float(oriH));
    t.lastDimValueBackMulTwo = float_bits(2.0f / float(oriH));
}

}  // namespace layernormgrad_sizes

namespace layernormgradbeta_sizes {

inline uint32_t buffers(uint32_t typeSize) { return typeSize == 2 ? 4 : 2; }
inline uint32_t min_bytes(uint32_t h, uint32_t typeSize) { return buffers(typeSize) * h * 4; }
inline uint32_t max_bytes(uint32_t b, uint32_t s, uint32_t h, uint32_t typeSize) {
    return buffers(typeSize) * b * s * h * 4;
}

// GetLayerNormGradBetaNDTilingInfo; false (and `t` untouched) when the area holds not 2 * H floats.
inline bool fill(uint32_t b, uint32_t s, uint32_t h, uint32_t oriH, uint32_t stackBytes, uint32_t typeSize,
                 ::AscendC::tiling::LayerNormGradBetaTiling& t) {
    const uint32_t floats = stackBytes / 4, bsh = b * s * h;
    if (h == 0 || floats < 2 * h) return false;
    uint32_t one = typeSize == 2 ? (floats - 2 * h) / 2 : floats;
    one = one / h * h;
    if (one == 0) return false;
    one = std::min(one, bsh);
    t = {};
    t.stackBufferSize = floats;
    t.bLength = b, t.sLength = s, t.hLength = h, t.originalHLength = oriH;
    t.bshLength = bsh, t.bsLength = b * s;
    t.oneCalSize = one, t.numberOfTmpBuf = typeSize == 2 ? 2 : 1;
    t.loopRound = bsh / one, t.inputTailSize = bsh % one, t.inputTailPos = bsh - bsh % one;
    t.bsTailSize = bsh % one / h, t.bshCurLength = one, t.bsCurLength = one / h;
    if (typeSize == 2) t.betaTempTensorPos = h, t.inputDyTmpTensorPos = 2 * h, t.resForGammaTmpTensorPos = 2 * h + one;
    return true;
}

}  // namespace layernormgradbeta_sizes
}  // namespace AscendC

using AscendC::tiling::LayerNormGradBetaTiling;
using AscendC::tiling::LayerNormGradTiling;
namespace optiling {
using AscendC::tiling::LayerNormGradBetaTiling;
using AscendC::tiling::LayerNormGradTiling;
}  // namespace optiling
