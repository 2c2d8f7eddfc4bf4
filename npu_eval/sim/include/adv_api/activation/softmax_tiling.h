// SoftMax / SimpleSoftMax / SoftmaxFlash host tiling (asc-devkit adv_api/activation/softmax_tiling.h):
// GetSoftMaxMax/MinTmpSize, SoftMaxTilingFunc, GetSoftMaxFlashMax/MinTmpSize, SoftMaxFlashTilingFunc,
// GetSoftMaxFlashV2Max/MinTmpSize, SoftMaxFlashV2TilingFunc, GetSoftMaxFlashV3MaxMinTmpSize,
// SoftMaxFlashV3TilingFunc, GetSoftMaxGradMax/MinTmpSize, SoftMaxGradTilingFunc, IsBasicBlockInSoftMax. The formulas are in softmax_tilingdata.h, which the kernel-side check
// uses too. The shape is read as [m, k]: k the last axis, m the product of the others.
#pragma once

#include "../utils/types.h"
#include "softmax_tilingdata.h"

namespace AscendC {
namespace softmax_sizes {
inline void last_axis(const TensorShape& shape, uint32_t* m, uint32_t* k) {
    const int64_t n = shape.GetShapeSize();
    *k = shape.GetDimNum() ? uint32_t(shape.GetDim(shape.GetDimNum() - 1)) : 0;
    *m = *k && n > 0 ? uint32_t(n / *k) : 0;
}
}  // namespace softmax_sizes

inline uint32_t GetSoftMaxMaxTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                     const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize ? softmax_sizes::max_bytes(m, k, dataTypeSize) : 0;
}

inline uint32_t GetSoftMaxMinTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                     const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize ? softmax_sizes::min_bytes(k, dataTypeSize) : 0;
}

inline void SoftMaxTilingFunc(const TensorShape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, tiling::SoftMaxTiling& softmaxTiling) {
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    if (m && dataTypeSize) softmax_sizes::fill(m, k, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}

inline uint32_t GetSoftMaxFlashMaxTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                          const bool isUpdate, const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize ? softmax_sizes::max_bytes(m, k, dataTypeSize, isUpdate) : 0;
}

inline uint32_t GetSoftMaxFlashMinTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                          const bool isUpdate, const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize ? softmax_sizes::min_bytes(k, dataTypeSize, isUpdate) : 0;
}

inline void SoftMaxFlashTilingFunc(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                   const uint32_t localWorkSpaceSize, tiling::SoftMaxTiling& softmaxFlashTiling,
                                   const bool isUpdate = false) {
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    if (m && dataTypeSize) softmax_sizes::fill(m, k, dataTypeSize, localWorkSpaceSize, softmaxFlashTiling, isUpdate);
}

inline uint32_t GetSoftMaxFlashV2MinTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate,
                                            const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)isUpdate;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize1 && dataTypeSize2
               ? softmax_sizes::flashv2_min_bytes(m, k, dataTypeSize1, dataTypeSize2, isBasicBlock, isFlashOutputBrc)
               : 0;
}

inline uint32_t GetSoftMaxFlashV2MaxTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate,
                                            const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)isUpdate, (void)isFlashOutputBrc;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize1 && dataTypeSize2
               ? softmax_sizes::flashv2_max_bytes(m, k, dataTypeSize1, dataTypeSize2, isBasicBlock)
               : 0;
}

inline void SoftMaxFlashV2TilingFunc(const TensorShape& srcShape, const uint32_t dataTypeSize1,
                                     const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                     tiling::SoftMaxTiling& softmaxFlashTiling, const bool isUpdate,
                                     const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)isUpdate;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    if (m && dataTypeSize1 && dataTypeSize2) {
        softmax_sizes::fill_flashv2(m, k, dataTypeSize1, dataTypeSize2, localWorkSpaceSize, isBasicBlock,
                                    isFlashOutputBrc, softmaxFlashTiling);
    }
}

// SoftmaxFlashV3: T half (dataTypeSize1 2), U float (dataTypeSize2 4); other sizes leave the outputs.
inline void GetSoftMaxFlashV3MaxMinTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize1,
                                           const uint32_t dataTypeSize2, uint32_t& maxValue, uint32_t& minValue,
                                           const bool isUpdate, const bool isBasicBlock = false) {
    (void)isUpdate, (void)isBasicBlock;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    if (!m || dataTypeSize1 != 2 || dataTypeSize2 != 4) return;
    minValue = softmax_sizes::flashv3_row_floats(k, dataTypeSize2) * softmax_sizes::kFloat;
    maxValue = m * minValue;
}

inline void SoftMaxFlashV3TilingFunc(const TensorShape& srcShape, const uint32_t dataTypeSize1,
                                     const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                     tiling::SoftMaxTiling& softmaxFlashV3Tiling, const bool isUpdate,
                                     const bool isBasicBlock = false) {
    (void)isUpdate, (void)isBasicBlock;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    if (m && dataTypeSize1 == 2 && dataTypeSize2 == 4) {
        softmax_sizes::fill_flashv3(m, k, dataTypeSize2, localWorkSpaceSize, softmaxFlashV3Tiling);
    }
}

inline uint32_t GetSoftMaxGradMaxTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                         const bool isFront, const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize ? m * softmax_sizes::grad_row_floats(k, dataTypeSize, isFront) * 4 : 0;
}

inline uint32_t GetSoftMaxGradMinTmpSize(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                         const bool isFront, const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    return m && dataTypeSize ? softmax_sizes::grad_row_floats(k, dataTypeSize, isFront) * 4 : 0;
}

inline void SoftMaxGradTilingFunc(const TensorShape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize, tiling::SoftMaxTiling& softmaxGradTiling,
                                  const bool isFront = false) {
    uint32_t m, k;
    softmax_sizes::last_axis(srcShape, &m, &k);
    if (m && dataTypeSize) {
        softmax_sizes::fill_rows(m, k, dataTypeSize, localWorkSpaceSize,
                                 softmax_sizes::grad_row_floats(k, dataTypeSize, isFront), softmaxGradTiling);
    }
}

// A basic block: no tail tile, and a last axis of 64-multiples in [256 bytes, 2048 elements).
inline bool IsBasicBlockInSoftMax(tiling::SoftMaxTiling& tiling, const uint32_t dataTypeSize = 2) {
    if (dataTypeSize == 0) return false;
    return tiling.tailM == 0 && tiling.srcK >= 256 / dataTypeSize && tiling.srcK < 2048 && tiling.srcK % 64 == 0;
}

}  // namespace AscendC
