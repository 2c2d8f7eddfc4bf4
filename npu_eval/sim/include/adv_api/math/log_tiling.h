// Host tiling for Log, Log2 and Log10 (asc-devkit include/adv_api/math/log_tiling.h), documented in
// asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/Log接口/GetLogMaxMinTmpSize.md. Log and Log10 work
// in place (no temporary space); Log2 on half keeps the float chunk: 4 bytes per element, at least 256.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {

inline void GetLogMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxValue, uint32_t& minValue)
{
    (void)srcShape, (void)typeSize, (void)isReuseSource;
    maxValue = 0;
    minValue = 0;
}

inline void GetLogTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    (void)typeSize;
    extraBuf = 0;
    maxLiveNodeCount = 0;
}

inline void GetLog10MaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue)
{
    GetLogMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}

inline void GetLog10TmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    GetLogTmpBufferFactorSize(typeSize, maxLiveNodeCount, extraBuf);
}

inline void GetLog2MaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const int64_t n = srcShape.GetShapeSize();
    if (n <= 0) return;  // the real function asserts: the shape must hold at least one element
    const bool half = typeSize != sizeof(float);
    minValue = half ? detail::kMathRepeatBytes : 0;
    maxValue = half ? std::max<uint32_t>(uint32_t(n) * uint32_t(sizeof(float)), detail::kMathRepeatBytes) : 0;
}

inline void GetLog2TmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf)
{
    extraBuf = 0;
    maxLiveNodeCount = typeSize == sizeof(float) ? 0 : 2;
}

}  // namespace AscendC
