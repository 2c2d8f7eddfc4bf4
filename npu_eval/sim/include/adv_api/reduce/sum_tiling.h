// Host tiling for Sum (asc-devkit include/adv_api/reduce/sum_tiling.h). Also included by sum.h:
// the kernel checks its sharedTmpBuffer against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/归约操作/Sum接口/GetSumMaxMinTmpSize.md
// (maximum = minimum; the page gives no formula, the size is the one CANN's tiling computes).
#pragma once

#include <cstdint>

namespace AscendC {

// The temporary space Sum needs for rows of n elements of typeSize bytes: the first pass leaves
// one partial sum per 256-byte repeat of the row, kept in whole 32-byte blocks.
inline void GetSumMaxMinTmpSize(const uint32_t n, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxSize, uint32_t& minSize)
{
    (void)isReuseSource;  // "reserved" on the doc page
    if (n == 0 || typeSize == 0 || typeSize > 32) return;  // the real function asserts and returns
    const uint32_t perBlock = 32 / typeSize, perRepeat = 256 / typeSize;
    const uint32_t repeats = (n + perRepeat - 1) / perRepeat;
    maxSize = minSize = (repeats + perBlock - 1) / perBlock * perBlock * typeSize;
}

}  // namespace AscendC
