// The AI CPU API (asc-devkit include/aicpu_api/aicpu_api.h; docs/zh/api/AI-CPU-API): what an AI CPU
// kernel (`__global__ __aicpu__ uint32_t k(void* args)`, a `.aicpu` file) may call besides libc and
// the C++ standard library. The AI CPU is an ARM64 Linux core beside the AI Cores with the same
// access to device memory, so its kernels run here as ordinary host code on the CPU
// (sage_sim/aicpu.h launches them); a host program reaches this header as "aicpu_api.h", the
// include folder CANN's AICPU CMake language adds.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../sage_sim/launch.h"

// The real header replaces assert with one that prints and aborts the kernel: here a failed assert
// is reported at its line and stops the kernel (sage_sim/aicpu.h), its stream left with the error.
#ifdef assert
#undef assert
#endif
#define assert(condition)                                                           \
    do {                                                                            \
        if (!(condition)) ::sage::sim::aicpu_assert_failed(__FILE__, __LINE__, #condition); \
    } while (0)

namespace AscendC {

// The AI CPU's printf (to the device log on the NPU, standard output here). A C variadic function,
// so in a program whose kernels' printf template is also visible, calls pick one or the other
// without ambiguity and both print the same.
inline void printf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
}

// `dsb st`: the AI CPU's stores reach memory before any later one, so an AI Core kernel ordered after
// this kernel on the stream sees them. On the CPU a release fence is the same promise.
inline void DataStoreBarrier() { std::atomic_thread_fence(std::memory_order_release); }

}  // namespace AscendC
