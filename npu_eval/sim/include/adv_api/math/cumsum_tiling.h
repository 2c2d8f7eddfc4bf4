// Host tiling for CumSum (asc-devkit include/adv_api/math/cumsum_tiling.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/CumSum接口/GetCumSumMaxMinTmpSize.md. srcShape is {outter,
// inner}, inner a whole number of 32-byte blocks. First axis: half accumulates the whole tensor in
// float (outter * inner floats), float needs nothing. Last axis: two transposes through 16-row
// groups (16 rows at least, all rows rounded up to 16 at most), plus half's float cast buffer.
#pragma once

#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

inline void GetCumSumMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isLastAxis,
                                   const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    // The real function asserts these: two dims, half or float, inner a whole number of 32-byte blocks.
    if (srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) return;
    const int64_t outter = srcShape.GetDim(0), inner = srcShape.GetDim(1);
    if (outter <= 0 || inner <= 0 || (inner * typeSize) % 32 != 0) return;
    if (!isLastAxis) {
        maxValue = minValue = typeSize == 2 ? uint32_t(outter * inner * 4) : 0;
        return;
    }
    constexpr uint32_t kRows = 16;  // TransDataTo5HD's address list
    constexpr uint32_t kTransposes = 2;
    const uint32_t alignOutter = uint32_t((outter + kRows - 1) / kRows * kRows);
    const uint32_t minCast = typeSize == 2 ? uint32_t(inner) * kRows * 2 : 0;
    const uint32_t maxCast = typeSize == 2 ? uint32_t(inner) * alignOutter * 2 : 0;
    minValue = minCast + kRows * uint32_t(inner) * typeSize * kTransposes;
    maxValue = maxCast + alignOutter * uint32_t(inner) * typeSize * kTransposes;
}

}  // namespace AscendC
