// Host tiling for Arange (asc-devkit include/adv_api/index/arithprogression_tiling.h). Documented
// in asc-devkit docs/zh/api/SIMD-API/高阶API/索引计算/GetArangeMaxMinTmpSize.md: Arange needs no
// temporary space, so both sizes are 0. GetArithProgressionMaxMinTmpSize is the deprecated name.
#pragma once

#include <cstdint>

namespace AscendC {

inline void GetArangeMaxMinTmpSize(uint32_t& maxValue, uint32_t& minValue)
{
    maxValue = 0;
    minValue = 0;
}

inline void GetArithProgressionMaxMinTmpSize(uint32_t& maxValue, uint32_t& minValue)
{
    GetArangeMaxMinTmpSize(maxValue, minValue);
}

}  // namespace AscendC
