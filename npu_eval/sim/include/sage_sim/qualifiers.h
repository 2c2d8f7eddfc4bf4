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

// The kernel types of KERNEL_TASK_TYPE_DEFAULT, in CANN's order (impl/basic_api/utils). The build
// reads the kernel file's KERNEL_TASK_TYPE_DEFAULT (npu_eval/build.py, runner_defines) and passes
// the type as SAGE_SIM_KERNEL_TYPE, since the launch must know its cores before the body runs;
// the macro itself checks, in each core, that the running kernel declares that type
// (sage_sim/mix.h). KERNEL_TASK_TYPE (per tiling key) changes nothing here.
enum KernelMetaType : uint8_t {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX,
};
#define KERNEL_TASK_TYPE_DEFAULT(value) ::sage::sim::declare_kernel_type(value)
#define KERNEL_TASK_TYPE(key, value)

// The core a kernel body runs on: g_coreType (basic_api/kernel_operator_sys_var_intf.h) is the
// running core's type, AIV for a vector kernel, AIC or AIV in a mixed one (sage_sim/mix.h).
// `if ASCEND_IS_AIV { ... }` is written without parentheses.
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

// The device compiler's convert_from_bytes<T>(bytes): a constant struct from the bytes of a
// constexpr array (CANN's generated GET_TILING_DATA and the AOT compilation guide use it to make a
// tiling a compile-time constant). T must be trivially copyable; the bytes are read at compile
// time when they are constant, else at run time.
#include <cstddef>
template <typename T>
constexpr T convert_from_bytes(const uint8_t* bytes) {
    static_assert(std::is_trivially_copyable<T>::value, "convert_from_bytes: T must be trivially copyable");
    struct Raw {
        uint8_t b[sizeof(T)];
    } raw{};
    for (size_t i = 0; i < sizeof(T); ++i) raw.b[i] = bytes[i];
    return __builtin_bit_cast(T, raw);
}
