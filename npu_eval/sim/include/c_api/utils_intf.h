// The C API's shared types (asc-devkit include/c_api/utils_intf.h).
#pragma once

#include "utils/enum.h"
#include "utils/union.h"
