// Host tiling for AscendDequant (asc-devkit include/adv_api/quantization/ascend_dequant_tiling.h).
// Also included by ascend_dequant.h: the kernel checks its temporary buffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/GetAscendDequantMaxMinTmpSize.md (no
// formula on the page; the sizes are CANN's tiling's): the API casts rows of int32 to float and
// keeps the float deqScale, so for srcShape [m, n] (or [n]) it needs
//   minimum = (64 + n + (n + 8)) * 4 bytes      one float row, the float scale, one repeat
//   maximum = (64 + m * n + (n + 8)) * 4 bytes  every row at once
#pragma once

#include <cstdint>
#include <vector>

#include "../utils/types.h"

namespace AscendC {

namespace detail {
// [outer, inner] of a 1- or 2-dimensional srcShape; false for any other rank.
inline bool dequant_dims(const TensorShape& srcShape, uint32_t& outer, uint32_t& inner)
{
    const std::vector<int64_t> d = srcShape.GetDims();
    if (d.size() == 2) {
        outer = uint32_t(d[0]), inner = uint32_t(d[1]);
        return true;
    }
    if (d.size() == 1) {
        outer = 1, inner = uint32_t(d[0]);
        return true;
    }
    return false;
}
}  // namespace detail

// The real function asserts int32 input (typeSize 4), a non-empty 1- or 2-dimensional shape.
inline void GetAscendDequantMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                          uint32_t& minValue)
{
    uint32_t outer = 1, inner = 0;
    if (typeSize != 4 || srcShape.GetShapeSize() <= 0 || !detail::dequant_dims(srcShape, outer, inner)) return;
    constexpr uint32_t kRepeatFloats = 64, kBlockFloats = 8;
    const uint32_t scaleFloats = inner + kBlockFloats;
    minValue = (kRepeatFloats + inner + scaleFloats) * 4;
    maxValue = (kRepeatFloats + outer * inner + scaleFloats) * 4;
}

inline void GetAscendDequantTmpBufferFactorSize(const TensorShape& srcShape, uint32_t& maxLiveNodeCount,
                                                uint32_t& extraBuf)
{
    const std::vector<int64_t> d = srcShape.GetDims();
    extraBuf = 8 + 64;
    if (d.size() == 2) {
        extraBuf += uint32_t(d[1]);
        maxLiveNodeCount = 1;
    } else if (d.size() == 1) {
        maxLiveNodeCount = 2;
    } else {
        extraBuf = 0;
        maxLiveNodeCount = 0;
    }
}

}  // namespace AscendC
