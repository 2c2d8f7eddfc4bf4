// The SIMD C API (asc-devkit include/c_api/asc_simd.h): the `asc_*` functions a kernel calls on
// `__ubuf__` arrays and `__gm__` pointers instead of LocalTensor/GlobalTensor. Emulated for the
// 910B vector core: set-up (misc), system variables, synchronisation inside a core, vector data
// movement, vector compute (element-wise, conversions, reductions) and scalar bit operations.
// The `__ubuf__` storage model is in sage_sim/ubuf.h. The cube, atomic, cache-control and
// register (Ascend 950) families are not emulated.
#pragma once

#include "../kernel_operator.h"
#include "utils_intf.h"
#include "misc/misc.h"
#include "scalar_compute/scalar_compute.h"
#include "sys_var/sys_var.h"
#include "sync/sync.h"
#include "vector_datamove/vector_datamove.h"
#include "vector_compute/vector_compute.h"
