// The advanced API's host tiling library, as asc-devkit's include/adv_api/tiling_api.h: one
// `<family>/<api>_tiling.h` per API (GetXxxMaxMinTmpSize, GetXxxTmpBufferFactorSize,
// XxxTilingFunc), plus the platform library. Host code includes it as "tiling/tiling_api.h"
// (../tiling/tiling_api.h forwards here). Each API's tiling header is also included by its kernel
// header, whose temporary-buffer check calls the same function: host and kernel cannot disagree.
// One include line per API, kept in family order.
#pragma once

#include "utils/types.h"
#include "../tiling/platform/platform_ascendc.h"

// activation

// math

// normalization
