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
//   SoftmaxFlash with isUpdate: per row 4 * epb + 2 * srcK floats. SoftmaxFlashV2: see flashv2_*.
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

// SoftmaxGrad: per row 2 * epb + 3 * srcK + 64 floats for half; for float epb + srcK + 64 with
// isFront, else 2 * epb + srcK + 64 (GetSoftMaxGradMin/MaxTmpSize: one row / every row).
inline uint32_t grad_row_floats(uint32_t srcK, uint32_t dataTypeSize, bool isFront) {
    const uint32_t epb = kBlock / dataTypeSize;
    if (dataTypeSize == 2) return 2 * epb + 3 * srcK + kUnit;
    return isFront ? epb + srcK + kUnit : 2 * epb + srcK + kUnit;
}

// The split of [srcM, srcK] into tiles of rows (per_row floats each) a work area of `workBytes`
// holds, as SoftMaxTilingFunc and its Flash/Grad siblings make it.
inline void fill_rows(uint32_t srcM, uint32_t srcK, uint32_t dataTypeSize, uint32_t workBytes, uint32_t per_row,
                      ::AscendC::tiling::SoftMaxTiling& t) {
    const uint32_t epb = kBlock / dataTypeSize;
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

inline void split_rows(uint32_t srcM, uint32_t srcK, uint32_t dt2, uint32_t baseM,
                       ::AscendC::tiling::SoftMaxTiling& t);

// SoftmaxFlashV2 (Atlas A2 branch of softmax_tiling.cpp): floats per row with dt1 = sizeof(T) and
// dt2 = sizeof(sum/max type), epb = 32 / dt2. A basic block (isBasicBlock, srcK % 64 == 0) keeps
// no float copy of the input: epb + srcK + 64 for half, epb + 64 for float (64 becomes 128 when
// srcK is 1024); otherwise 2 * epb + srcK + 64 for half, epb + 64 for float.
inline bool flashv2_basic(uint32_t srcK, bool isBasicBlock) { return isBasicBlock && srcK % kUnit == 0; }
inline uint32_t flashv2_row_floats(uint32_t srcK, uint32_t dt1, uint32_t dt2, bool basic) {
    const uint32_t epb = kBlock / dt2, unit = basic && srcK == 256 * kFloat ? 2 * kUnit : kUnit;
    if (basic) return dt1 == 2 ? epb + srcK + unit : epb + unit;
    return dt1 == 2 ? 2 * epb + srcK + kUnit : epb + kUnit;
}
// GetSoftMaxFlashV2MinTmpSize: one row (8 rows for a basic block), times min(32 / dt1, srcM) when
// the outputs are broadcast (isFlashOutputBrc).
inline uint32_t flashv2_min_bytes(uint32_t srcM, uint32_t srcK, uint32_t dt1, uint32_t dt2, bool isBasicBlock,
                                  bool isFlashOutputBrc) {
    const bool basic = flashv2_basic(srcK, isBasicBlock);
    uint32_t n = flashv2_row_floats(srcK, dt1, dt2, basic) * (basic ? 8 : 1);
    if (isFlashOutputBrc) n = (basic ? n / 8 : n) * std::min(kBlock / dt1, srcM);
    return n * kFloat;
}
// GetSoftMaxFlashV2MaxTmpSize: every row (a basic block halves srcM while srcM * srcK >= 16384).
inline uint32_t flashv2_max_bytes(uint32_t srcM, uint32_t srcK, uint32_t dt1, uint32_t dt2, bool isBasicBlock) {
    const bool basic = flashv2_basic(srcK, isBasicBlock) && srcM % 8 == 0;
    if (basic) {
        while (srcM * srcK >= kUnit * 256) srcM /= 2;
    }
    return srcM * flashv2_row_floats(srcK, dt1, dt2, basic) * kFloat;
}
// SoftMaxFlashV2TilingFunc.
inline void fill_flashv2(uint32_t srcM, uint32_t srcK, uint32_t dt1, uint32_t dt2, uint32_t workBytes,
                         bool isBasicBlock, bool isFlashOutputBrc, ::AscendC::tiling::SoftMaxTiling& t) {
    const bool basic = flashv2_basic(srcK, isBasicBlock) && srcM % 8 == 0;
    uint32_t baseM = workBytes / kFloat / flashv2_row_floats(srcK, dt1, dt2, basic);
    if (basic) {
        baseM = std::min(baseM, srcM);
        if (baseM > 8) {
            baseM = baseM / 8 * 8;
            while (srcM % baseM != 0) baseM -= 8;
            while (baseM * srcK >= kUnit * 256) baseM /= 2;
        }
    }
    const uint32_t tile = isFlashOutputBrc && dt1 == 2 ? 16 : 8;
    baseM = std::min(baseM, srcM);
    if (baseM < srcM && baseM > tile) baseM = baseM / tile * tile;
    split_rows(srcM, srcK, dt2, baseM, t);
}

// The tiling of [srcM, srcK] in tiles of baseM rows, sums and maxes of dt2 bytes.
inline void split_rows(uint32_t srcM, uint32_t srcK, uint32_t dt2, uint32_t baseM,
                       ::AscendC::tiling::SoftMaxTiling& t) {
    fill_rows(srcM, srcK, dt2, 0, 1, t);
    const uint32_t epb = kBlock / dt2, tail = baseM ? srcM % baseM : 0;
    t.splitM = t.reduceM = baseM;
    t.splitSize = baseM * srcK;
    t.reduceSize = baseM * epb;
    t.rangeM = baseM ? srcM / baseM : 0;
    t.tailM = tail;
    t.tailSplitSize = tail * srcK;
    t.tailReduceSize = tail * epb;
}

// SoftmaxFlashV3 (Atlas A2 branch of softmax_tiling.cpp): per row 5 * epb + 2 * srcK + 64 floats
// (epb = 32 / dt2): the float copy of the row, its broadcast shift, the 64 column sums and five
// one-block values (mean, max, the two shifts, expMax). GetSoftMaxFlashV3MaxMinTmpSize: one row
// (min) and every row (max); SoftMaxFlashV3TilingFunc: the rows the work area holds, rounded
// down to a multiple of 8 when between 8 and srcM.
inline uint32_t flashv3_row_floats(uint32_t srcK, uint32_t dt2) { return kBlock / dt2 * 5 + 2 * srcK + kUnit; }
inline void fill_flashv3(uint32_t srcM, uint32_t srcK, uint32_t dt2, uint32_t workBytes,
                         ::AscendC::tiling::SoftMaxTiling& t) {
    uint32_t baseM = std::min(workBytes / kFloat / flashv3_row_floats(srcK, dt2), srcM);
    if (baseM < srcM && baseM > 8) baseM = baseM / 8 * 8;
    split_rows(srcM, srcK, dt2, baseM, t);
}

inline void fill(uint32_t srcM, uint32_t srcK, uint32_t dataTypeSize, uint32_t workBytes,
                 ::AscendC::tiling::SoftMaxTiling& t, bool update = false) {
    fill_rows(srcM, srcK, dataTypeSize, workBytes,
              update ? update_row_floats(srcK, dataTypeSize) : row_floats(srcK, dataTypeSize), t);
}

}  // namespace softmax_sizes
}  // namespace AscendC

using AscendC::tiling::SoftMaxTiling;
namespace optiling {
using AscendC::tiling::SoftMaxTiling;
}  // namespace optiling
