// The shape and data-type names the advanced API's host tiling functions take
// (GetXxxMaxMinTmpSize(const TensorShape&, ...)): GE's, as in asc-devkit.
#pragma once

#include <cstdint>

#include "../../graph/types.h"
#include "../../graph/tensor.h"

namespace AscendC {
using TensorShape = ge::Shape;
using TensorDataType = ge::DataType;

// The reduction patterns (the reduce family's ReduceXxx<T, pattern> and Normalize's config), under
// the guard asc-devkit declares them with.
#ifndef ASCC_ENUM_REDUCEPATTERN
#define ASCC_ENUM_REDUCEPATTERN
enum class ReducePattern : uint32_t {
    AR = 0,
    RA = 1,
    R,
    ARA,
    ARAR,
    ARARA,
    ARARAR,
    ARARARA,
    ARARARAR,
    ARARARARA,
    RAR,
    RARA,
    RARAR,
    RARARA,
    RARARAR,
    RARARARA,
};
#endif  // ASCC_ENUM_REDUCEPATTERN
}  // namespace AscendC
