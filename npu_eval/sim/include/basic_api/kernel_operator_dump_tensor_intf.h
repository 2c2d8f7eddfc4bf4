// printf and DumpTensor (also laid out by a ShapeInfo): the kernel's own output, captured by the
// harness into the report's `stdout` (bounded there).
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

// The elements laid out by `shape` (DumpTensor with a ShapeInfo): nested brackets, one row of the
// last dimension a line; past the dumped elements "-", and dumped elements past the shape not shown.
template <typename T, class Get>
inline void print_shaped(const ShapeInfo& shape, uint32_t dumpSize, Get get) {
    const uint64_t total = GetShapeSize(shape);
    if (total > dumpSize) {
        std::printf("shape is [");
        for (int d = 0; d < shape.shapeDim; ++d) std::printf(d ? ", %u" : "%u", shape.shape[d]);
        std::printf("], dumpSize is %u, data is not enough.\n", dumpSize);
    } else if (total < dumpSize) {
        std::printf("shape is [");
        for (int d = 0; d < shape.shapeDim; ++d) std::printf(d ? ", %u" : "%u", shape.shape[d]);
        std::printf("], dumpSize is %u, dumpSize is greater than shapeSize.\n", dumpSize);
    }
    const int dims = shape.shapeDim;
    for (uint64_t i = 0; i < total; ++i) {
        uint64_t span = 1;
        int opens = 0;  // dimensions whose block starts at element i
        for (int d = dims - 1; d >= 0; --d) {
            span *= shape.shape[d];
            if (i % span == 0) ++opens;
        }
        if (i) std::printf(opens ? ",\n" : ",");
        for (int k = 0; k < opens; ++k) std::printf("[");
        if (i < dumpSize) print_value(get(i));
        else std::printf("-");
        span = 1;
        for (int d = dims - 1; d >= 0; --d) {
            span *= shape.shape[d];
            if ((i + 1) % span == 0) std::printf("]");
        }
    }
    std::printf("\n");
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

// The forms with a ShapeInfo: the same dump, laid out by the shape (DumpTensor's doc page).
template <typename T>
__aicore__ inline void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize,
                                  const ShapeInfo& shapeInfo, SAGE_LOC) {
    sage::sim::touch(loc);
    tensor.check("DumpTensor", dumpSize, loc, false);
    std::printf("DumpTensor: desc=%u, addr=%u, data_type=%s, position=UB, block=%d\n", desc, tensor.addr_,
                sage::sim::dtype_name<T>(), sage::sim::blk().idx);
    detail::print_shaped<T>(shapeInfo, dumpSize, [&](uint64_t i) { return tensor.data()[i]; });
}
template <typename T>
__aicore__ inline void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize,
                                  const ShapeInfo& shapeInfo, SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::gm_check(tensor.addr_, uint64_t(dumpSize) * sizeof(T), loc, false);
    std::printf("DumpTensor: desc=%u, data_type=%s, position=GM, block=%d\n", desc, sage::sim::dtype_name<T>(),
                sage::sim::blk().idx);
    detail::print_shaped<T>(shapeInfo, dumpSize, [&](uint64_t i) { return tensor.addr_[i]; });
}

// DumpTensor from element countOff on, labelled `index` (a line number, say). The offset view must
// start where the tensor's memory requires (32 bytes in UB), as for any UB operand.
template <typename T>
__aicore__ inline void DumpAccChkPoint(const LocalTensor<T>& tensor, uint32_t index, uint32_t countOff,
                                       uint32_t dumpSize, SAGE_LOC) {
    sage::sim::touch(loc);
    const LocalTensor<T> at = tensor[countOff];
    at.check("DumpAccChkPoint", dumpSize, loc, true);
    DumpTensor(at, index, dumpSize, loc);
}
template <typename T>
__aicore__ inline void DumpAccChkPoint(const GlobalTensor<T>& tensor, uint32_t index, uint32_t countOff,
                                       uint32_t dumpSize, SAGE_LOC) {
    DumpTensor(tensor[countOff], index, dumpSize, loc);
}

}  // namespace AscendC
