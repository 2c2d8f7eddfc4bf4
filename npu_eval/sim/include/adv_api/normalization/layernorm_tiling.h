// LayerNorm host tiling, the [B, S, H] form (asc-devkit adv_api/normalization/layernorm_tiling.h):
// GetLayerNormMaxMinTmpSize(shape [B, S, H, originalH], ...) and GetLayerNormNDTilingInfo (and its
// old spelling GetLayerNormNDTillingInfo). The formulas are in layernorm_tilingdata.h, which the
// kernel-side check uses too.
#pragma once

#include "../utils/types.h"
#include "layernorm_tilingdata.h"

namespace AscendC {

inline void GetLayerNormMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue) {
    const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
    maxValue = layernorm_sizes::max_bytes(b, s, h, typeSize, isReuseSource);
    minValue = layernorm_sizes::min_bytes(b, s, h, typeSize, isReuseSource);
}

inline void GetLayerNormNDTilingInfo(const TensorShape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource,
                                     tiling::LayerNormTiling& tiling) {
    const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
    const uint32_t oriH = srcShape.GetDimNum() > 3 ? uint32_t(srcShape.GetDim(3)) : h;
    if (b && s && h && oriH) layernorm_sizes::fill(b, s, h, oriH, stackBufferSize, typeSize, isReuseSource, tiling);
}

// The [A, R] form's sizes (shape [A, R]); isComputeRstd and isOnlyOutput as Normalize takes them.
inline void GetLayerNormMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const bool isComputeRstd, const bool isOnlyOutput, uint32_t& maxValue,
                                      uint32_t& minValue) {
    (void)isReuseSource;
    if (!isComputeRstd || isOnlyOutput || srcShape.GetDimNum() < 2 || typeSize == 0) return;
    const uint32_t a = uint32_t(srcShape.GetDim(0)), r = uint32_t(srcShape.GetDim(1));
    maxValue = layernorm_ar_sizes::max_bytes(a, r, typeSize);
    minValue = layernorm_ar_sizes::min_bytes(a, r, typeSize);
}

inline void GetLayerNormNDTilingInfo(const TensorShape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, const bool isComputeRstd,
                                     tiling::LayerNormSeparateTiling& tiling) {
    (void)isReuseSource, (void)isComputeRstd;
    if (srcShape.GetDimNum() < 2 || typeSize == 0) return;
    const uint32_t a = uint32_t(srcShape.GetDim(0)), r = uint32_t(srcShape.GetDim(1));
    if (a && r) layernorm_ar_sizes::fill(a, r, stackBufferSize, typeSize, tiling);
}

inline void GetLayerNormNDTillingInfo(const TensorShape& srcShape, const uint32_t stackBufferSize,
                                      const uint32_t typeSize, const bool isReuseSource,
                                      tiling::LayerNormTiling& tilling) {
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, tilling);
}

}  // namespace AscendC
