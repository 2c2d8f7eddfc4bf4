// Qualifiers and address types. On the device these place code and data; on the CPU they
// vanish, as in CANN's own CPU-debug build (ASCENDC_CPU_DEBUG).
#pragma once

#include <cstdint>

#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif
#define __aicore__
#define __global__
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

// The device compiler's scalar min and max built-ins, which kernels call unqualified
// (`baseM = min(baseM, rowNum);` in asc-devkit's samples). Two type parameters, so a kernel's own
// min/max, or std::min under `using namespace std`, is the better match wherever it applies.
#include <type_traits>
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
__aicore__ inline std::common_type_t<A, B> min(A a, B b) {
    return b < a ? b : a;
}
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
__aicore__ inline std::common_type_t<A, B> max(A a, B b) {
    return a < b ? b : a;
}
