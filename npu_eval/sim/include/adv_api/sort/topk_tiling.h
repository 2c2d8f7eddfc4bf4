// TopK's tiling struct and host functions (asc-devkit include/adv_api/sort/topk_tiling.h,
// topk_tilingdata.h, topk_utils.h, topk_utils_constants.h), from
// docs/zh/api/SIMD-API/高阶API/排序操作/TopK-Tiling.md and the host implementation's Atlas A2 sizes.
// Also included by topk.h: the kernel checks tmpLocal against the same GetTopKMaxMinTmpSize.
//
// TopkTiling is declared once in AscendC::tiling and exported as ::TopkTiling and
// optiling::TopkTiling (one type, as softmax_tilingdata.h does for SoftMaxTiling). TopKTilingFunc
// fills the offsets and sizes CANN's Atlas A2 tiling computes; the emulated TopK reads only k and
// TopKInfo, so the Small mode's GatherMask bit patterns (vreduce*Mask*) are left 0.
#pragma once

#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"
#include "../../tiling/platform/platform_ascendc.h"
#include "../utils/types.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(TopkTiling)
TILING_DATA_FIELD_DEF(int32_t, tmpLocalSize)
TILING_DATA_FIELD_DEF(int32_t, allDataSize)
TILING_DATA_FIELD_DEF(int32_t, innerDataSize)
TILING_DATA_FIELD_DEF(uint32_t, sortRepeat)
TILING_DATA_FIELD_DEF(int32_t, mrgSortRepeat)
TILING_DATA_FIELD_DEF(int32_t, kAlignFourBytes)
TILING_DATA_FIELD_DEF(int32_t, kAlignTwoBytes)
TILING_DATA_FIELD_DEF(int32_t, maskOffset)
TILING_DATA_FIELD_DEF(int32_t, maskVreducev2FourBytes)
TILING_DATA_FIELD_DEF(int32_t, maskVreducev2TwoBytes)
TILING_DATA_FIELD_DEF(int32_t, mrgSortSrc1offset)
TILING_DATA_FIELD_DEF(int32_t, mrgSortSrc2offset)
TILING_DATA_FIELD_DEF(int32_t, mrgSortSrc3offset)
TILING_DATA_FIELD_DEF(int32_t, mrgSortTwoQueueSrc1Offset)
TILING_DATA_FIELD_DEF(int32_t, mrgFourQueueTailPara1)
TILING_DATA_FIELD_DEF(int32_t, mrgFourQueueTailPara2)
TILING_DATA_FIELD_DEF(int32_t, srcIndexOffset)
TILING_DATA_FIELD_DEF(uint32_t, copyUbToUbBlockCount)
TILING_DATA_FIELD_DEF(int32_t, topkMrgSrc1MaskSizeOffset)
TILING_DATA_FIELD_DEF(int32_t, topkNSmallSrcIndexOffset)
TILING_DATA_FIELD_DEF(uint32_t, vreduceValMask0)
TILING_DATA_FIELD_DEF(uint32_t, vreduceValMask1)
TILING_DATA_FIELD_DEF(uint32_t, vreduceIdxMask0)
TILING_DATA_FIELD_DEF(uint32_t, vreduceIdxMask1)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask0)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask1)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask2)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask3)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask4)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask5)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask6)
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask7)
END_TILING_DATA_DEF;
}  // namespace tiling

enum class TopKMode {
    TOPK_NORMAL,
    TOPK_NSMALL,
};
enum class TopKAlgo { RADIX_SELECT, MERGE_SORT };
enum class TopKOrder { UNSET, LARGEST, SMALLEST };
struct TopKConfig {
    TopKAlgo algo = TopKAlgo::MERGE_SORT;
    TopKOrder order = TopKOrder::UNSET;
    bool sorted = true;
};
constexpr TopKConfig defaultTopKConfig = {};

struct TopKInfo {
    int32_t outter = 1;
    int32_t inner;  // n rounded up to a multiple of 32
    int32_t n;      // the row's real length
};

namespace topk_sizes {

// Atlas A2's temporary bytes (GetTopKMaxMinTmpSize220): Normal mode works one row at a time in
// 16 bytes per element (Sort32's sorted pairs and the merge's second buffer), plus the generated
// indices; Small mode sorts every row at once (8 bytes per element), plus the negated copy for
// the smallest k, the generated indices and one 64-byte GatherMask pattern.
inline uint32_t tmp_bytes(int32_t inner, int32_t outter, bool isInitIndex, TopKMode mode, bool isLargest) {
    const uint32_t in = uint32_t(inner), all = uint32_t(inner) * uint32_t(outter);
    if (mode == TopKMode::TOPK_NORMAL) return (isInitIndex ? 16u : 20u) * in;
    return all * 8u + 64u + (isLargest ? 0u : all * 4u) + (isInitIndex ? 0u : all * 4u);
}

inline void normal_fields(int32_t inner, int32_t outter, int32_t k, uint32_t ts, bool isInitIndex,
                          tiling::TopkTiling& t) {
    const int32_t k16 = (k + 15) / 16 * 16, half = ts == 2;
    t.kAlignTwoBytes = k16;
    t.tmpLocalSize = (half ? 8 : 4) * inner;
    t.innerDataSize = inner * (half ? 4 : 2);
    t.copyUbToUbBlockCount = uint32_t(inner * 2 * 4 / 32);
    t.sortRepeat = uint32_t(inner / 32);
    t.mrgSortRepeat = inner / 4;
    t.maskOffset = outter * (half ? k16 : t.kAlignFourBytes);
    t.maskVreducev2FourBytes = 2 * k;
    t.maskVreducev2TwoBytes = 4 * k;
    t.mrgSortSrc1offset = half ? 4 : 2;
    t.mrgSortSrc2offset = half ? 8 : 4;
    t.mrgSortSrc3offset = half ? 12 : 6;
    t.mrgSortTwoQueueSrc1Offset = half ? 4 : 2;
    t.mrgFourQueueTailPara1 = inner * 2;
    t.mrgFourQueueTailPara2 = int32_t(4 / ts);
    if (!isInitIndex) {  // room for the generated indices after the sort buffers
        t.srcIndexOffset = (half ? 8 : 4) * inner;
        t.tmpLocalSize = half ? 8 * inner + 2 * inner : 4 * inner + inner;
    }
}

inline void small_fields(int32_t inner, int32_t outter, int32_t k, uint32_t ts, bool isInitIndex, bool isLargest,
                         tiling::TopkTiling& t) {
    const int32_t data = inner * outter * int32_t(8 / ts);
    t.innerDataSize = data;
    t.maskOffset = outter * k;
    t.topkMrgSrc1MaskSizeOffset = data + (isLargest ? 0 : inner * outter);
    t.tmpLocalSize = t.topkMrgSrc1MaskSizeOffset + int32_t(64 / ts);
    if (!isInitIndex) {
        t.topkNSmallSrcIndexOffset = t.tmpLocalSize;
        t.tmpLocalSize += inner * outter * int32_t(4 / ts);
    }
}

}  // namespace topk_sizes

inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                                 const int32_t outter, const bool isReuseSource, const bool isInitIndex,
                                 enum TopKMode mode, const bool isLargest, const uint32_t dataTypeSize,
                                 uint32_t& maxValue, uint32_t& minValue) {
    (void)ascendcPlatform, (void)isReuseSource;
    if (inner <= 0 || inner % 32 || outter <= 0 || (dataTypeSize != 2 && dataTypeSize != 4)) return false;
    maxValue = minValue = topk_sizes::tmp_bytes(inner, outter, isInitIndex, mode, isLargest);
    return true;
}

inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                           const int32_t outter, const int32_t k, const uint32_t dataTypeSize, const bool isInitIndex,
                           enum TopKMode mode, const bool isLargest, tiling::TopkTiling& topKTiling) {
    (void)ascendcPlatform;
    if (dataTypeSize != 2 && dataTypeSize != 4) return false;
    topKTiling = tiling::TopkTiling{};
    topKTiling.allDataSize = inner * outter;
    topKTiling.kAlignFourBytes = (k + 7) / 8 * 8;
    if (mode == TopKMode::TOPK_NORMAL) {
        topk_sizes::normal_fields(inner, outter, k, dataTypeSize, isInitIndex, topKTiling);
    } else {
        topk_sizes::small_fields(inner, outter, k, dataTypeSize, isInitIndex, isLargest, topKTiling);
    }
    return true;
}

}  // namespace AscendC

using AscendC::tiling::TopkTiling;
namespace optiling {
using AscendC::tiling::TopkTiling;
}  // namespace optiling
