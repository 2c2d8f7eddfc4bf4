// RmsNorm host tiling (asc-devkit adv_api/normalization/rmsnorm_tiling.h): GetRmsNormMaxMinTmpSize
// and GetRmsNormTilingInfo, shapes [B, S, H]. The formulas are in rmsnorm_tilingdata.h, which the
// kernel-side check uses too.
#pragma once

#include "../utils/types.h"
#include "rmsnorm_tilingdata.h"

namespace AscendC {

inline bool GetRmsNormMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                    uint32_t& minValue, const bool isBasicBlock = false) {
    const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
    if (isBasicBlock && (h % 64 != 0 || b * s % 8 != 0 || h >= 2048)) return false;
    maxValue = rmsnorm_sizes::max_bytes(b, s, h, typeSize);
    minValue = rmsnorm_sizes::min_bytes(h, typeSize);
    return true;
}

inline bool GetRmsNormTilingInfo(const TensorShape& srcShape, const TensorShape& originSrcShape,
                                 const uint32_t stackBufferByteSize, const uint32_t typeSize,
                                 tiling::RmsNormTiling& tiling, const bool isBasicBlock = false) {
    if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
    if (srcShape.GetDim(0) != originSrcShape.GetDim(0) || srcShape.GetDim(1) != originSrcShape.GetDim(1)) return false;
    return rmsnorm_sizes::fill(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)),
                               uint32_t(srcShape.GetDim(2)), uint32_t(originSrcShape.GetDim(2)), stackBufferByteSize,
                               typeSize, isBasicBlock, tiling);
}

}  // namespace AscendC
