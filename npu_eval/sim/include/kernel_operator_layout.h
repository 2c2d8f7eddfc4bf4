// The header the Layout and Coordinate pages tell kernels to include (the definitions live in
// basic_api/kernel_operator_layout.h, which kernel_operator.h includes too).
#pragma once

#include "basic_api/kernel_operator_layout.h"
