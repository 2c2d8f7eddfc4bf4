// The Ascend C API, emulated on the CPU at the API level: a kernel written for CANN's
// kernel_operator.h compiles against this one unchanged. The headers below sit where
// asc-devkit's include/ declares each API (basic_api/, adv_api/<family>/, utils/); the
// emulator's own machinery is in sage_sim/. README.md in this folder maps them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "utils/common_types.h"
#include "basic_api/kernel_tensor.h"
#include "basic_api/kernel_tpipe.h"
#include "basic_api/kernel_operator_data_copy_intf.h"
#include "basic_api/kernel_operator_set_atomic_intf.h"
#include "basic_api/kernel_operator_block_sync_intf.h"
#include "basic_api/kernel_operator_dump_tensor_intf.h"
#include "kernel_tiling/kernel_tiling.h"
#include "basic_api/kernel_operator_vec_binary_intf.h"
#include "basic_api/kernel_operator_vec_unary_intf.h"
#include "basic_api/kernel_operator_vec_binary_scalar_intf.h"
#include "basic_api/kernel_operator_vec_vconv_intf.h"
#include "basic_api/kernel_operator_vec_cmpsel_intf.h"
#include "basic_api/kernel_operator_vec_reduce_intf.h"
#include "basic_api/kernel_common.h"
#include "basic_api/kernel_operator_vec_duplicate_intf.h"
#include "basic_api/kernel_operator_vec_brcb_intf.h"
#include "basic_api/kernel_operator_vec_createvecindex_intf.h"
#include "basic_api/kernel_operator_vec_ternary_scalar_intf.h"
#include "basic_api/kernel_operator_vec_gather_mask_intf.h"
#include "basic_api/kernel_operator_vec_gather_intf.h"
#include "basic_api/kernel_operator_proposal_intf.h"
#include "basic_api/kernel_operator_vec_transpose_intf.h"
#include "basic_api/kernel_operator_sys_var_intf.h"
#include "basic_api/kernel_operator_atomic_intf.h"
#include "utils/debug/asc_assert.h"
#include "adv_api/utils/init_global_memory.h"
#include "adv_api/reduce/sum.h"
#include "adv_api/pad/broadcast.h"
#include "c_api/asc_simd.h"
