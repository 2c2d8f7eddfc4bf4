// Host tiling for AscendAntiQuant (asc-devkit include/adv_api/quantization/ascend_antiquant_tiling.h).
// Also included by ascend_antiquant.h: the kernel checks its temporary buffer against the same
// function. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/GetAscendAntiQuantMaxMinTmpSize.md
// and GetAscendAntiQuantTmpBufferFactorSize.md (no formula on the pages; the sizes are CANN's
// tiling's). A half output computes in place and needs none; a bfloat16 output works in float:
//   per-tensor (scale of one element): minimum 1024 bytes, maximum srcSize * 4
//   per-channel, not transposed (src [K, N], scale [groups, N]): scaleSize * 2 * 4 + 64 * K * 4
//   per-channel, transposed (src [N, K]): 80 * scaleSize * 4 (8 float rows of scale and offset, 64 of input)
#pragma once

#include <cstdint>
#include <vector>

#include "../utils/types.h"

namespace AscendC {

namespace detail {
inline uint32_t antiquant_elems(const TensorShape& s)
{
    uint32_t n = 1;
    for (int64_t d : s.GetDims()) n *= uint32_t(d);
    return n;
}

inline uint32_t antiquant_tmp(const TensorShape& srcShape, const TensorShape& scaleShape, bool isTranspose,
                              TensorDataType outputDataType, bool forMin)
{
    if (outputDataType == ge::DT_FLOAT16) return 0;
    const uint32_t scaleSize = antiquant_elems(scaleShape);
    const uint32_t srcSize = antiquant_elems(srcShape);
    if (scaleSize == 1) return forMin ? 1024u : srcSize * 4;
    if (isTranspose) return (8 + 8 + 64) * scaleSize * 4;
    return scaleSize * 2 * 4 + 64 * uint32_t(srcShape.GetDim(0)) * 4;
}
}  // namespace detail

// float4 inputs (not on Atlas A2) are not modelled; the real function asserts a non-empty srcShape.
inline uint32_t GetAscendAntiQuantMaxTmpSize(const TensorShape& srcShape, const TensorShape& scaleShape,
                                             bool isTranspose, TensorDataType inputDataType,
                                             TensorDataType outputDataType)
{
    (void)inputDataType;
    return srcShape.GetShapeSize() > 0 ? detail::antiquant_tmp(srcShape, scaleShape, isTranspose, outputDataType, false)
                                       : 0;
}

inline uint32_t GetAscendAntiQuantMinTmpSize(const TensorShape& srcShape, const TensorShape& scaleShape,
                                             bool isTranspose, TensorDataType inputDataType,
                                             TensorDataType outputDataType)
{
    (void)inputDataType;
    return srcShape.GetShapeSize() > 0 ? detail::antiquant_tmp(srcShape, scaleShape, isTranspose, outputDataType, true)
                                       : 0;
}

inline void GetAscendAntiQuantMaxMinTmpSize(const TensorShape& srcShape, const TensorShape& scaleShape,
                                            bool isTranspose, TensorDataType inputDataType,
                                            TensorDataType outputDataType, uint32_t& maxValue, uint32_t& minValue)
{
    maxValue = GetAscendAntiQuantMaxTmpSize(srcShape, scaleShape, isTranspose, inputDataType, outputDataType);
    minValue = GetAscendAntiQuantMinTmpSize(srcShape, scaleShape, isTranspose, inputDataType, outputDataType);
}

inline void GetAscendAntiQuantTmpBufferFactorSize(const TensorShape& srcShape, const TensorShape& scaleShape,
                                                  bool isTranspose, TensorDataType inputDataType,
                                                  TensorDataType outputDataType, uint32_t& maxLiveNodeCount,
                                                  uint32_t& extraBuf)
{
    (void)inputDataType;
    extraBuf = 0;
    maxLiveNodeCount = 0;
    const uint32_t scaleSize = detail::antiquant_elems(scaleShape);
    if (outputDataType == ge::DT_FLOAT16) return;
    if (scaleSize == 1) {
        maxLiveNodeCount = 1;
    } else if (isTranspose) {
        extraBuf = 80 * scaleSize * 4;
    } else {
        extraBuf = scaleSize * 2 * 4 + 64 * uint32_t(srcShape.GetDim(0)) * 4;
    }
}

}  // namespace AscendC
