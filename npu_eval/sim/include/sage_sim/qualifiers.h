// Qualifiers and address types. On the device these place code and data; on the CPU they
// vanish, as in CANN's own CPU-debug build (ASCENDC_CPU_DEBUG).
#pragma once

#include <cstdint>

#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif
#define __aicore__
#define __global__
#define __aicpu__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __vector__
#define __cube__
#define __mix__(...)
#define __schedmode__(...)
#define __simd_vf__
#define __simd_callee__
#define __host_aicore__
#define __sync_alias__
#define __sync_noalias__
#define __check_sync_alias__
#define __inout_pipe__(...)
#define __in_pipe__(...)
#define __out_pipe__(...)
#ifndef __BLOCK_LOCAL__
#define __BLOCK_LOCAL__
#endif
#ifndef __WORKGROUP_LOCAL__
#define __WORKGROUP_LOCAL__
#endif
#ifndef __inline__
#define __inline__ inline
#endif

using GM_ADDR = __gm__ uint8_t*;

#define KERNEL_TASK_TYPE_DEFAULT(...)
#define KERNEL_TASK_TYPE(...)

// The core a kernel body runs on. The emulator runs vector kernels only, so every block is an
// AIV core: `if ASCEND_IS_AIV { ... }` (written without parentheses) runs, ASCEND_IS_AIC code
// does not. g_coreType itself is declared in basic_api/kernel_operator_sys_var_intf.h.
#define ASCEND_IS_AIV (g_coreType == ::AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == ::AscendC::AIC)
#define ASCEND_IS_AICORE constexpr(false)
