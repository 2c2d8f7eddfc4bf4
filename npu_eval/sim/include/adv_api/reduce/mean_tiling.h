// Host tiling for Mean (asc-devkit include/adv_api/reduce/mean_tiling.h), from
// docs/zh/api/SIMD-API/高阶API/归约操作/Mean接口/GetMeanMaxMinTmpSize.md and
// GetMeanTmpBufferFactorSize.md (maximum = minimum; the sizes are CANN's). Also included by
// mean.h: the kernel checks its sharedTmpBuffer against the same function.
#pragma once

#include <cstdint>

namespace AscendC {

namespace mean_sizes {

// The partial sums of one row's repeats (256 bytes of the source type each), in 32 bytes; with
// half summed in float (accTypeSize 4), float repeats and the float copy of the row as well.
inline uint32_t tmp_bytes(uint32_t n, uint32_t srcTypeSize, uint32_t accTypeSize) {
    const uint32_t inner = (n * srcTypeSize + 31) / 32 * 32 / srcTypeSize;
    if (srcTypeSize == 2 && accTypeSize == 4) return ((n + 63) / 64 + 31) / 32 * 32 + inner * 4;
    const uint32_t perRep = 256 / srcTypeSize;
    return ((n + perRep - 1) / perRep + 31) / 32 * 32;
}

}  // namespace mean_sizes

// (srcTypeSize, accTypeSize) must be (2, 2), (4, 4) or (2, 4) and n at least 1; otherwise the
// real function asserts and writes nothing, as here. isReuseSource has no effect.
inline void GetMeanMaxMinTmpSize(const uint32_t n, const uint32_t srcTypeSize, const uint32_t accTypeSize,
                                 const bool isReuseSource, uint32_t& maxSize, uint32_t& minSize) {
    (void)isReuseSource;
    const bool ok = (srcTypeSize == 2 || srcTypeSize == 4) && (accTypeSize == srcTypeSize || accTypeSize == 4);
    if (!ok || n == 0) return;
    maxSize = minSize = mean_sizes::tmp_bytes(n, srcTypeSize, accTypeSize);
}

// One buffer the size of the input, no extra space.
inline void GetMeanTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer) {
    (void)typeSize;
    maxLiveNodeCount = 1;
    extraBuffer = 0;
}

}  // namespace AscendC
