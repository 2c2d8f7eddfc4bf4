// Host tiling for AscendQuant (asc-devkit include/adv_api/quantization/ascend_quant_tiling.h).
// Also included by ascend_quant.h: the kernel checks its temporary buffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/GetAscendQuantMaxMinTmpSize.md and
// GetAscendQuantTmpBufferFactorSize.md (the pages give no formula; the sizes are the ones CANN's
// tiling computes: the API keeps two half intermediates of a 256-byte repeat at least, and a half
// copy of every element at most).
#pragma once

#include <algorithm>
#include <cstdint>

#include "../utils/types.h"

namespace AscendC {

// The real function asserts a non-empty shape of 32-byte-aligned size and a half or float
// element, and leaves the outputs unset otherwise.
inline void GetAscendQuantMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                        uint32_t& minValue)
{
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0 || (typeSize != 2 && typeSize != 4) || uint64_t(n) * typeSize % 32 != 0) return;
    constexpr uint32_t kRepeat = 256, kLive = 2;
    minValue = kLive * kRepeat;
    maxValue = (std::max<uint32_t>(uint32_t(n) * 2, kLive * kRepeat) + 31) / 32 * 32;
}

inline void GetAscendQuantTmpBufferFactorSize(uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    maxLiveNodeCount = 2;
    extraBuf = 0;
}

}  // namespace AscendC
