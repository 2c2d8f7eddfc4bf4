// The Ascend C API, emulated on the CPU at the API level: a kernel written for CANN's
// kernel_operator.h compiles against this one unchanged. One header per API family.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernel_macros.h"
#include "kernel_dtypes.h"
#include "kernel_common.h"
#include "kernel_tensor.h"
#include "kernel_tpipe.h"
#include "kernel_data_copy.h"
#include "kernel_sync.h"
#include "kernel_print.h"
#include "kernel_tiling.h"
#include "kernel_vec_binary.h"
#include "kernel_vec_unary.h"
#include "kernel_vec_scalar.h"
#include "kernel_vec_cast.h"
#include "kernel_vec_compare.h"
#include "kernel_vec_reduce.h"
#include "kernel_vec_misc.h"
#include "kernel_vec_gather.h"
#include "kernel_vec_sort.h"
#include "kernel_vec_transpose.h"
#include "kernel_cann9.h"
#include "kernel_sys.h"
#include "kernel_vec_shift.h"
#include "kernel_gm_scalar.h"
#include "kernel_adv_simple.h"
