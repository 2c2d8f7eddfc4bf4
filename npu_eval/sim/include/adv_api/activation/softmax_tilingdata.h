// SoftMaxTiling (the tiling struct of SoftMax, SimpleSoftMax, SoftmaxFlash/FlashV2 and
// LogSoftMax's LogSoftMaxTiling) and the temporary-buffer sizes both halves compute.
//
// asc-devkit declares the struct once with BEGIN_TILING_DATA_DEF (softmax_tilingdata.h) and
// generates AscendC::tiling::SoftMaxTiling for kernels from it, exported as ::SoftMaxTiling; host
// code fills optiling::SoftMaxTiling. Here the three names are one type, so a host TilingData
// field (TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, ...)) and the kernel's argument agree by
// construction.
//
// Sizes (Atlas A2, from the host tiling implementation, softmax_tiling.cpp): with
// epb = 32 / dataTypeSize (elements of the max/sum type per 32-byte block), the API works in
// float and needs per row epb + srcK + 64 floats:
//   GetSoftMaxMinTmpSize = (epb + srcK + 64) * 4                 one row at a time
//   GetSoftMaxMaxTmpSize = srcM * (epb + srcK + 64) * 4          every row at once
//   SoftMaxTilingFunc:  splitM = min(localWorkSpaceSize / 4 / (epb + srcK + 64), srcM), rounded
//   down to a multiple of 8 when it is between 8 and srcM; for a basic block (srcM % 8 == 0 and
//   srcK % 64 == 0) it is lowered to a divisor of srcM and halved while splitM * srcK >= 16384.
//   Flash update (SoftmaxFlash/FlashV2 with isUpdate): per row 4 * epb + 2 * srcK floats.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(SoftMaxTiling)
TILING_DATA_FIELD_DEF(uint32_t, srcM)
TILING_DATA_FIELD_DEF(uint32_t, srcK)
TILING_DATA_FIELD_DEF(uint32_t, srcSize)
TILING_DATA_FIELD_DEF(uint32_t, outMaxM)
TILING_DATA_FIELD_DEF(uint32_t, outMaxK)
TILING_DATA_FIELD_DEF(uint32_t, outMaxSize)
TILING_DATA_FIELD_DEF(uint32_t, splitM)
TILING_DATA_FIELD_DEF(uint32_t, splitK)
TILING_DATA_FIELD_DEF(uint32_t, splitSize)
TILING_DATA_FIELD_DEF(uint32_t, reduceM)
TILING_DATA_FIELD_DEF(uint32_t, reduceK)
TILING_DATA_FIELD_DEF(uint32_t, reduceSize)
TILING_DATA_FIELD_DEF(uint32_t, rangeM)
TILING_DATA_FIELD_DEF(uint32_t, tailM)
TILING_DATA_FIELD_DEF(uint32_t, tailSplitSize)
TILING_DATA_FIELD_DEF(uint32_t, tailReduceSize)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace softmax_sizes {

constexpr uint32_t kBlock = 32;
constexpr uint32_t kFloat = 4;
constexpr uint32_t kUnit = 64;  // floats of the reduction's work area per row

// Floats per row: the normal path, and SoftmaxFlash's update path.
inline uint32_t row_floats(uint32_t srcK, uint32_t dataTypeSize) { return kBlock / dataTypeSize + srcK + kUnit; }
inline uint32_t update_row_floats(uint32_t srcK, uint32_t dataTypeSize) {
    return kBlock / dataTypeSize * 4 + srcK * 2;
}

inline uint32_t min_bytes(uint32_t srcK, uint32_t dataTypeSize, bool update = false) {
    return (update ? update_row_floats(srcK, dataTypeSize) : row_floats(srcK, dataTypeSize)) * kFloat;
}
inline uint32_t max_bytes(uint32_t srcM, uint32_t srcK, uint32_t dataTypeSize, bool update = false) {
    return srcM * min_bytes(srcK, dataTypeSize, update);
}

// SoftMaxTilingFunc's split of [srcM, srcK] into tiles of rows a work area of `workBytes` holds.
inline void fill(uint32_t srcM, uint32_t srcK, uint32_t dataTypeSize, uint32_t workBytes,
                 ::AscendC::tiling::SoftMaxTiling& t, bool update = false) {
    const uint32_t epb = kBlock / dataTypeSize;
    const uint32_t per_row = update ? update_row_floats(srcK, dataTypeSize) : row_floats(srcK, dataTypeSize);
    uint32_t baseM = std::min(workBytes / kFloat / per_row, srcM);
    if (baseM < srcM && baseM > 8) baseM = baseM / 8 * 8;
    if (baseM > 8 && srcM % 8 == 0 && srcK % kUnit == 0) {  // a basic block: whole tiles, <= 255 repeats
        baseM = baseM / 8 * 8;
        while (srcM % baseM != 0) baseM -= 8;
        while (baseM * srcK >= kUnit * 256) baseM /= 2;
    }
    t = ::AscendC::tiling::SoftMaxTiling{};
    t.srcM = srcM;
    t.srcK = srcK;
    t.srcSize = srcM * srcK;
    t.outMaxM = srcM;
    t.outMaxK = epb;
    t.outMaxSize = srcM * epb;
    t.splitM = baseM;
    t.splitK = srcK;
    t.splitSize = baseM * srcK;
    t.reduceM = baseM;
    t.reduceK = epb;
    t.reduceSize = baseM * epb;
    const uint32_t tail = baseM ? srcM % baseM : 0;
    t.rangeM = baseM ? srcM / baseM : 0;
    t.tailM = tail;
    t.tailSplitSize = tail * srcK;
    t.tailReduceSize = tail * epb;
}

}  // namespace softmax_sizes
}  // namespace AscendC

using AscendC::tiling::SoftMaxTiling;
namespace optiling {
using AscendC::tiling::SoftMaxTiling;
}  // namespace optiling
