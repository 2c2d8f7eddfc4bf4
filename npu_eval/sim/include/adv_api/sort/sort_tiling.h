// Host tiling for Sort (asc-devkit include/adv_api/sort/sort_tiling_intf.h and
// sort_utils_constants.h), from docs/zh/api/SIMD-API/高阶API/排序操作/GetSortTmpSize.md,
// GetSortMaxMinTmpSize.md and the host implementation's sizes.
//
// On Atlas A2, Sort is the Concat / Sort<T, isFullSort> / Extract sequence
// (basic_api/kernel_operator_proposal_intf.h): Concat needs no temporary space and Sort's tmp holds
// one sorted element (8 bytes: 2 floats or 4 halves) per input. GetSortMaxMinTmpSize sizes the
// SortConfig form (radix or merge sort) that only Ascend 950 has: on Atlas A2 the real function
// logs "Unsupported NpuArch" and returns without writing its outputs; this one logs the same
// line and writes 0, so a host program that goes on (as asc-devkit's sort sample does, falling
// back to its own tmp buffer when the size is 0) reads a defined value.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../../tiling/platform/platform_ascendc.h"
#include "../utils/types.h"

namespace AscendC {

enum class SortType { RADIX_SORT, MERGE_SORT };

struct SortConfig {
    SortType type = SortType::RADIX_SORT;
    bool isDescend = false;
    bool hasSrcIndex = false;
    bool hasDstIndex = false;
};

constexpr uint32_t REGION_PROPOSAL_DATA_SIZE_V200 = 8;
constexpr uint32_t REGION_PROPOSAL_DATA_SIZE_HALF_V220 = 4;
constexpr uint32_t REGION_PROPOSAL_DATA_SIZE_FLOAT_V220 = 2;

namespace sort_sizes {

// Sort's tmp on Atlas A2: the sorted elements of one merge round, 8 bytes per input element.
inline uint32_t sort_tmp_bytes(uint32_t elemCount, uint32_t dataTypeSize) {
    const uint32_t per = dataTypeSize == 4 ? REGION_PROPOSAL_DATA_SIZE_FLOAT_V220 : REGION_PROPOSAL_DATA_SIZE_HALF_V220;
    return elemCount * per * dataTypeSize;
}

inline bool host_ok(const char* fn, uint32_t elemCount, uint32_t dataTypeSize) {
    if (elemCount == 0 || (dataTypeSize != 2 && dataTypeSize != 4)) {
        std::fprintf(stderr, "[Sort][%s] elemCount must be > 0 and the type 2 or 4 bytes (got %u, %u)\n", fn, elemCount,
                     dataTypeSize);
        return false;
    }
    return true;
}

}  // namespace sort_sizes

inline uint32_t GetConcatTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const uint32_t elemCount,
                                 const uint32_t dataTypeSize) {
    (void)ascendcPlatform;
    sort_sizes::host_ok("GetConcatTmpSize", elemCount, dataTypeSize);
    return 0;  // Atlas A2's Concat copies in place
}

inline uint32_t GetSortTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const uint32_t elemCount,
                               const uint32_t dataTypeSize) {
    (void)ascendcPlatform;
    if (!sort_sizes::host_ok("GetSortTmpSize", elemCount, dataTypeSize)) return 0;
    return sort_sizes::sort_tmp_bytes(elemCount, dataTypeSize);
}

inline void GetSortMaxMinTmpSize(const TensorShape& srcShape, TensorDataType valueType, TensorDataType indexType,
                                 bool isReuseSource, const SortConfig& config, uint32_t& maxValue,
                                 uint32_t& minValue) {
    (void)srcShape, (void)valueType, (void)indexType, (void)isReuseSource, (void)config;
    std::fprintf(stderr, "[Sort][GetSortMaxMinTmpSize] Unsupported NpuArch for Sort API: the SortConfig form is "
                         "Ascend 950's; on Atlas A2 size Sort's tmp with GetSortTmpSize\n");
    maxValue = minValue = 0;
}

}  // namespace AscendC
