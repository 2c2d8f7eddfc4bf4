// The shape and data-type names the advanced API's host tiling functions take
// (GetXxxMaxMinTmpSize(const TensorShape&, ...)): GE's, as in asc-devkit.
#pragma once

#include "../../graph/types.h"
#include "../../graph/tensor.h"

namespace AscendC {
using TensorShape = ge::Shape;
using TensorDataType = ge::DataType;
}  // namespace AscendC
