// LogSoftMax's tiling struct and host tiling (asc-devkit adv_api/activation/logsoftmax_tiling.h,
// logsoftmax_tilingdata.h): LogSoftMaxTiling has SoftMaxTiling's fields, and
// GetLogSoftMaxMax/MinTmpSize and LogSoftMaxTilingFunc SoftMax's sizes (logsoftmax_tiling.cpp on
// Atlas A2), so both reuse softmax_sizes.
#pragma once

#include <cstring>

#include "softmax_tiling.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(LogSoftMaxTiling)
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
static_assert(sizeof(tiling::LogSoftMaxTiling) == sizeof(tiling::SoftMaxTiling), "the same fields");
inline tiling::SoftMaxTiling from_log(const tiling::LogSoftMaxTiling& t) {
    tiling::SoftMaxTiling s;
    memcpy(&s, &t, sizeof s);
    return s;
}
}  // namespace softmax_sizes

inline uint32_t GetLogSoftMaxMaxTmpSize(const TensorShape srcShape, const uint32_t dataTypeSize,
                                        const bool isReuseSource) {
    return GetSoftMaxMaxTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetLogSoftMaxMinTmpSize(const TensorShape srcShape, const uint32_t dataTypeSize,
                                        const bool isReuseSource) {
    return GetSoftMaxMinTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline void LogSoftMaxTilingFunc(const TensorShape srcShape, const uint32_t dataTypeSize,
                                 const uint32_t localWorkSpaceSize, tiling::LogSoftMaxTiling& softmaxTiling) {
    tiling::SoftMaxTiling t{};
    SoftMaxTilingFunc(srcShape, dataTypeSize, localWorkSpaceSize, t);
    memcpy(&softmaxTiling, &t, sizeof t);
}

}  // namespace AscendC

using AscendC::tiling::LogSoftMaxTiling;
namespace optiling {
using AscendC::tiling::LogSoftMaxTiling;
}  // namespace optiling
