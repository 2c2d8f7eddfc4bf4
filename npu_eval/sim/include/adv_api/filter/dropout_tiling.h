// Host tiling for DropOut (asc-devkit include/adv_api/filter/dropout_tiling.h). Also included by
// dropout.h: the kernel checks its temporary buffer against the same function. Documented in
// asc-devkit docs/zh/api/SIMD-API/高阶API/数据过滤/GetDropOutMaxMinTmpSize.md (no formula on the page;
// the sizes are CANN's tiling's): two 256-byte repeats at least, two floats per element at most.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../utils/types.h"

namespace AscendC {

inline uint32_t GetDropOutMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource)
{
    (void)srcShape, (void)typeSize, (void)isReuseSource;  // the real function only warns on these
    return 2 * 256;
}

inline uint32_t GetDropOutMaxTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource)
{
    const int64_t n = srcShape.GetShapeSize();
    return std::max<uint32_t>(GetDropOutMinTmpSize(srcShape, typeSize, isReuseSource),
                              uint32_t(n > 0 ? n : 0) * 2 * uint32_t(sizeof(float)));
}

inline void GetDropOutMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue)
{
    maxValue = GetDropOutMaxTmpSize(srcShape, typeSize, isReuseSource);
    minValue = GetDropOutMinTmpSize(srcShape, typeSize, isReuseSource);
}

}  // namespace AscendC
