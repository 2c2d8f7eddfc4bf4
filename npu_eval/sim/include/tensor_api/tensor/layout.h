// Layout, Shape and Stride (asc-devkit include/tensor_api/tensor/layout.h; docs/zh/api/SIMD-API/基础API/
// 辅助数据结构/Layout): the shape information the advanced API's TransData takes
// (TransDataParams<Layout, Layout>). The emulator keeps the extents in order; a stride given to
// MakeStride is recorded but no emulated API reads it (TransData's layouts are packed).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../sage_sim/qualifiers.h"

namespace AscendC {

// The extents of a shape (or the steps of a stride), in the order given.
template <typename... Ts>
struct Shape {
    static constexpr size_t rank = sizeof...(Ts);
    int64_t dims[sizeof...(Ts) ? sizeof...(Ts) : 1] = {};
    __aicore__ constexpr int64_t operator[](size_t i) const { return i < rank ? dims[i] : 0; }
};

template <typename... Ts>
struct Stride {
    static constexpr size_t rank = sizeof...(Ts);
    int64_t dims[sizeof...(Ts) ? sizeof...(Ts) : 1] = {};
};

template <typename S, typename D>
struct Layout {
    S shape;
    D stride;
    __aicore__ constexpr Layout(const S& s, const D& d) : shape(s), stride(d) {}
    __aicore__ constexpr const S& GetShape() const { return shape; }
    __aicore__ constexpr const D& GetStride() const { return stride; }
    // The element count: the product of the extents.
    __aicore__ constexpr int64_t Size() const {
        int64_t n = 1;
        for (size_t i = 0; i < S::rank; ++i) n *= shape.dims[i];
        return n;
    }
};

template <typename... Ts>
__aicore__ inline constexpr Shape<Ts...> MakeShape(const Ts&... t) {
    return Shape<Ts...>{{int64_t(t)...}};
}

template <typename... Ts>
__aicore__ inline constexpr Stride<Ts...> MakeStride(const Ts&... t) {
    return Stride<Ts...>{{int64_t(t)...}};
}

template <typename T, typename U>
__aicore__ inline constexpr auto MakeLayout(const T& shape, const U& stride) {
    return Layout<T, U>(shape, stride);
}

template <typename T>
__aicore__ inline constexpr auto MakeLayout(const T& shape) {
    return Layout<T, Stride<>>(shape, Stride<>{});
}

}  // namespace AscendC
