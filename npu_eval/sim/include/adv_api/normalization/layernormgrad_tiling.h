// LayerNormGrad and LayerNormGradBeta host tiling (asc-devkit adv_api/normalization/
// layernorm_grad_tiling.h, layernorm_grad_beta_tiling.h), shape [B, S, H, originalH]. The formulas
// are in layernormgrad_tilingdata.h, which the kernel-side checks use too.
#pragma once

#include "../utils/types.h"
#include "layernormgrad_tilingdata.h"

namespace AscendC {
namespace detail {
inline uint32_t shape_dim(const TensorShape& s, size_t i, uint32_t fallback) {
    return s.GetDimNum() > i ? uint32_t(s.GetDim(i)) : fallback;
}
}  // namespace detail

inline void GetLayerNormGradMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize,
                                          const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    const uint32_t b = detail::shape_dim(srcShape, 0, 0), s = detail::shape_dim(srcShape, 1, 0),
                   h = detail::shape_dim(srcShape, 2, 0);
    maxValue = layernormgrad_sizes::max_bytes(b, s, h, typeSize, isReuseSource);
    minValue = layernormgrad_sizes::min_bytes(b, s, h, typeSize, isReuseSource);
}

inline void GetLayerNormGradNDTilingInfo(const TensorShape srcShape, const uint32_t stackBufferSize,
                                         const uint32_t typeSize, const bool isReuseSource,
                                         tiling::LayerNormGradTiling& tiling) {
    const uint32_t b = detail::shape_dim(srcShape, 0, 0), s = detail::shape_dim(srcShape, 1, 0),
                   h = detail::shape_dim(srcShape, 2, 0), oriH = detail::shape_dim(srcShape, 3, h);
    if (b && s && h && oriH) layernormgrad_sizes::fill(b, s, h, oriH, stackBufferSize, typeSize, isReuseSource, tiling);
}

inline void GetLayerNormGradBetaMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize,
                                              const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    const uint32_t b = detail::shape_dim(srcShape, 0, 0), s = detail::shape_dim(srcShape, 1, 0),
                   h = detail::shape_dim(srcShape, 2, 0);
    maxValue = layernormgradbeta_sizes::max_bytes(b, s, h, typeSize);
    minValue = layernormgradbeta_sizes::min_bytes(h, typeSize);
}

inline void GetLayerNormGradBetaNDTilingInfo(const TensorShape srcShape, const uint32_t stackBufferSize,
                                             const uint32_t typeSize, const bool isReuseSource,
                                             tiling::LayerNormGradBetaTiling& tiling) {
    (void)isReuseSource;
    const uint32_t b = detail::shape_dim(srcShape, 0, 0), s = detail::shape_dim(srcShape, 1, 0),
                   h = detail::shape_dim(srcShape, 2, 0), oriH = detail::shape_dim(srcShape, 3, h);
    if (b && s) layernormgradbeta_sizes::fill(b, s, h, oriH, stackBufferSize, typeSize, tiling);
}

}  // namespace AscendC
