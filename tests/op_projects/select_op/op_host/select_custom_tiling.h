#pragma once
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(SelectCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, mode);       // 1 for "sum", 2 for "mean", 0 otherwise
  TILING_DATA_FIELD_DEF(uint32_t, dimCount);
  TILING_DATA_FIELD_DEF(int32_t, lastDim);
  TILING_DATA_FIELD_DEF(float, weightSum);
  TILING_DATA_FIELD_DEF(int32_t, rowsFirst);   // the ValueDepend input's values
  TILING_DATA_FIELD_DEF(int32_t, rowsLast);
  TILING_DATA_FIELD_DEF(uint32_t, xHasData);   // 1 when the plain input's GetData is not null
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(SelectCustom, SelectCustomTilingData)
}  // namespace optiling
