// CANN's op-project tiling registration (register/tilingdata_base.h): BEGIN_TILING_DATA_DEF and
// friends, which here declare the plain tiling struct (see kernel_tiling/kernel_tiling.h).
#pragma once

#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"
