// AI CPU kernels in program mode. `k<<<numBlocks, nullptr, stream>>>(&args, sizeof(args))` on a
// `__global__ __aicpu__` function runs it on the AI CPU, an ARM64 core with the AI Cores' access to
// device memory (docs/zh/guide/.../AI-CPU编程.md): here it runs as host code on the CPU, in launch
// order with the stream's other work. What tells the two kinds of kernel apart is the one the device
// compiler enforces: an AI Core kernel returns void, an AI CPU kernel may not (its uint32_t is a
// status for the runtime only).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "launch.h"

namespace sage {
namespace sim {

// A failed assert stops the AI CPU kernel (not the program): the runtime reports
// ACL_ERROR_RT_AICPU_EXCEPTION on its stream, as a faulted AI Core kernel sticks its own code.
struct AicpuAbort {};

[[noreturn]] inline void aicpu_assert_failed(const char* file, int line, const char* text) {
    std::printf("[ASSERT] `%s' at %s:%d\n", text, file, line);
    std::fflush(stdout);
    host_report("assert-failed", Severity::Error, SrcLoc{file, line},
                "assertion failed on the AI CPU: assert(%s); the kernel stops and its stream reports "
                "ACL_ERROR_RT_AICPU_EXCEPTION (507018)", text);
    throw AicpuAbort{};
}

template <class F>
struct AicpuKernel : std::false_type {};
template <class R, class... P>
struct AicpuKernel<R (*)(P...)> : std::bool_constant<!std::is_void_v<R>> {};

template <class F>
inline constexpr bool is_aicpu_kernel = AicpuKernel<F>::value;

// The documented form passes a pointer and the size to copy from it: the runtime copies that many
// bytes to device memory and gives the kernel the copy, so the kernel never sees host memory and
// the host may reuse its struct as soon as the launch returns. The experimental by-value form
// (`--cce-aicpu-launch-with-interface`: `k<<<...>>>(args)` on `k(KernelArgs)`) is a plain call.
template <class F, class P, class N>
inline void call_aicpu(F f, P* args, N size, std::true_type /*pointer and size*/) {
    std::vector<unsigned char> copy(size_t(size) + 1);  // + 1: a zero-size copy still has an address
    if (size > 0) std::memcpy(copy.data(), args, size_t(size));
    f(static_cast<void*>(copy.data()));
}

template <class F, class... A>
inline void call_aicpu(F f, A&... args) {
    f(args...);
}

template <class F, class... A>
inline void run_aicpu_instance(F f, A&... args) {
    if constexpr (sizeof...(A) == 2) {
        auto pick = [&](auto& first, auto& second) {
            using First = std::decay_t<decltype(first)>;
            using Second = std::decay_t<decltype(second)>;
            if constexpr (std::is_pointer_v<First> && std::is_integral_v<Second>)
                call_aicpu(f, first, second, std::true_type{});
            else
                call_aicpu(f, first, second);
        };
        pick(args...);
    } else {
        call_aicpu(f, args...);
    }
}

template <class F, class... A>
inline void run_aicpu_launch(F f, int64_t block_dim, A&... args) {
    // The AI CPU has no block split: each of numBlocks instances runs the whole kernel (the guide
    // advises 1), one after another.
    for (int64_t b = 0; b < (block_dim > 0 ? block_dim : 1); ++b) {
        try {
            run_aicpu_instance(f, args...);
        } catch (const AicpuAbort&) {
            program().sticky_error = kAclAicpuException;
            program().last_error = "an AI CPU kernel failed an assert (see the sage-npu report)";
            return;
        }
    }
}

}  // namespace sim
}  // namespace sage
