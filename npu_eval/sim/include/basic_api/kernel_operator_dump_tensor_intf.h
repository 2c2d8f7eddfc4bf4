// printf and DumpTensor: the kernel's own output, captured by the harness into the report's
// `stdout` (bounded there).
#pragma once

#include <cstdio>

#include "kernel_tensor.h"

namespace AscendC {

template <typename... Args>
__aicore__ inline void printf(const char* fmt, Args... args) {
    std::printf(fmt, args...);
}
template <typename... Args>
__aicore__ inline void PRINTF(const char* fmt, Args... args) {
    std::printf(fmt, args...);
}

namespace detail {
template <typename T>
inline void print_value(T v) {
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value || std::is_floating_point<T>::value) {
        std::printf("%g", double(float(v)));
    } else if constexpr (std::is_signed<T>::value) {
        std::printf("%lld", (long long)v);
    } else {
        std::printf("%llu", (unsigned long long)v);
    }
}
}  // namespace detail

template <typename T>
__aicore__ inline void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, SAGE_LOC) {
    sage::sim::touch(loc);
    tensor.check("DumpTensor", dumpSize, loc, false);
    std::printf("DumpTensor: desc=%u, addr=%u, data_type=%s, position=UB, block=%d\n[", desc, tensor.addr_,
                sage::sim::dtype_name<T>(), sage::sim::blk().idx);
    for (uint32_t i = 0; i < dumpSize; ++i) {
        if (i) std::printf(", ");
        detail::print_value(tensor.data()[i]);
    }
    std::printf("]\n");
}

template <typename T>
__aicore__ inline void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::gm_check(tensor.addr_, uint64_t(dumpSize) * sizeof(T), loc, false);
    std::printf("DumpTensor: desc=%u, data_type=%s, position=GM, block=%d\n[", desc, sage::sim::dtype_name<T>(),
                sage::sim::blk().idx);
    for (uint32_t i = 0; i < dumpSize; ++i) {
        if (i) std::printf(", ");
        detail::print_value(tensor.addr_[i]);
    }
    std::printf("]\n");
}

}  // namespace AscendC
