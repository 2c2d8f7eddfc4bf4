// Layout, Shape, Stride and Coord (docs/zh/api/SIMD-API/基础API/辅助数据结构/Layout and .../Coordinate;
// asc-devkit impl/basic_api/kernel_operator_layout.h and kernel_operator_coord.h): a tensor's shape
// and strides as Std::tuple values, and Crd2Idx, which turns a coordinate into the element offset
// those describe. Atlas A2/A3 have them (the pages' product lines); TransData takes its layouts
// from here, and kernels compute GM offsets with them (layout(coord)).
//
// Crd2Idx follows its page: a coordinate of the shape's rank is the sum of c_i * s_i over the modes,
// mode by mode (a mode may itself be a tuple: hierarchical shapes); a single integer given for a
// tuple mode is first delinearized over that mode's extents, first extent fastest
// (c_0 = c % d_0, c_1 = (c / d_0) % d_1, ...). The page's worked example leaves the last mode's
// quotient unreduced (11 over (2, 4) gives (1, 5)), where its summary formula writes a final
// "mod d_n"; the emulator follows the example, which is also what a coordinate past the last
// extent needs to address the next block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "../sage_sim/qualifiers.h"
#include "../utils/std/tuple.h"

namespace AscendC {

template <typename... Shapes>
using Shape = Std::tuple<Shapes...>;
template <typename... Strides>
using Stride = Std::tuple<Strides...>;
template <typename... Coords>
using Coord = Std::tuple<Coords...>;

namespace layout_detail {

template <typename T>
struct is_tuple_like : std::false_type {};
template <typename... Ts>
struct is_tuple_like<std::tuple<Ts...>> : std::true_type {};
template <typename T>
inline constexpr bool is_tuple_v = is_tuple_like<std::remove_cv_t<std::remove_reference_t<T>>>::value;

// The number of elements a (possibly nested) shape spans: the product of its extents.
template <typename S>
__aicore__ constexpr int64_t size_of(const S& s) {
    if constexpr (is_tuple_v<S>) {
        return std::apply([](const auto&... e) { return (int64_t(1) * ... * size_of(e)); }, s);
    } else {
        return static_cast<int64_t>(s);
    }
}

template <typename C, typename S, typename D>
__aicore__ constexpr int64_t crd2idx(const C& c, const S& s, const D& d);

// One integer over a tuple mode: delinearized, first extent fastest, the last quotient kept whole.
template <size_t I, typename S, typename D>
__aicore__ constexpr int64_t delinearize(int64_t c, const S& s, const D& d) {
    constexpr size_t n = std::tuple_size_v<S>;
    if constexpr (I + 1 == n) {
        return crd2idx(c, std::get<I>(s), std::get<I>(d));
    } else {
        const int64_t extent = size_of(std::get<I>(s));
        return crd2idx(c % extent, std::get<I>(s), std::get<I>(d)) + delinearize<I + 1>(c / extent, s, d);
    }
}

template <typename C, typename S, typename D, size_t... I>
__aicore__ constexpr int64_t by_mode(const C& c, const S& s, const D& d, std::index_sequence<I...>) {
    return (int64_t(0) + ... + crd2idx(std::get<I>(c), std::get<I>(s), std::get<I>(d)));
}

template <typename C, typename S, typename D>
__aicore__ constexpr int64_t crd2idx(const C& c, const S& s, const D& d) {
    if constexpr (is_tuple_v<C>) {
        static_assert(is_tuple_v<S> && is_tuple_v<D>, "Crd2Idx: a tuple coordinate needs a tuple shape and stride");
        static_assert(std::tuple_size_v<C> == std::tuple_size_v<S> && std::tuple_size_v<S> == std::tuple_size_v<D>,
                      "Crd2Idx: the coordinate, the shape and the stride must have the same rank");
        return by_mode(c, s, d, std::make_index_sequence<std::tuple_size_v<C>>{});
    } else if constexpr (is_tuple_v<D>) {
        static_assert(std::tuple_size_v<S> == std::tuple_size_v<D>, "Crd2Idx: the shape and the stride must have the same rank");
        if constexpr (std::tuple_size_v<D> == 0) {
            return 0;
        } else {
            return delinearize<0>(static_cast<int64_t>(c), s, d);
        }
    } else {
        return static_cast<int64_t>(c) * static_cast<int64_t>(d);
    }
}

}  // namespace layout_detail

template <typename ShapeType, typename StrideType>
struct Layout : private Std::tuple<ShapeType, StrideType> {
    __aicore__ inline constexpr Layout(const ShapeType& shape = {}, const StrideType& stride = {})
        : Std::tuple<ShapeType, StrideType>(shape, stride) {}
    __aicore__ inline constexpr decltype(auto) layout() { return *this; }
    __aicore__ inline constexpr decltype(auto) layout() const { return *this; }
    __aicore__ inline constexpr decltype(auto) GetShape() { return std::get<0>(base()); }
    __aicore__ inline constexpr decltype(auto) GetShape() const { return std::get<0>(base()); }
    __aicore__ inline constexpr decltype(auto) GetStride() { return std::get<1>(base()); }
    __aicore__ inline constexpr decltype(auto) GetStride() const { return std::get<1>(base()); }
    // The element offset of a coordinate (Crd2Idx with this layout's shape and stride).
    template <typename CoordType>
    __aicore__ inline constexpr auto operator()(const CoordType& coord) const {
        return layout_detail::crd2idx(coord, GetShape(), GetStride());
    }

private:
    __aicore__ constexpr Std::tuple<ShapeType, StrideType>& base() { return *this; }
    __aicore__ constexpr const Std::tuple<ShapeType, StrideType>& base() const { return *this; }
};

namespace layout_detail {
template <typename T>
struct is_layout : std::false_type {};
template <typename S, typename D>
struct is_layout<Layout<S, D>> : std::true_type {};
}  // namespace layout_detail

// Whether T (const or a reference included) is a Layout.
template <typename T>
struct is_layout : layout_detail::is_layout<std::remove_cv_t<std::remove_reference_t<T>>> {};

template <typename... Ts>
__aicore__ inline constexpr Shape<Ts...> MakeShape(const Ts&... t) {
    return Shape<Ts...>(t...);
}

template <typename... Ts>
__aicore__ inline constexpr Stride<Ts...> MakeStride(const Ts&... t) {
    return Stride<Ts...>(t...);
}

template <typename... Ts>
__aicore__ inline constexpr Coord<Ts...> MakeCoord(const Ts&... t) {
    return Coord<Ts...>(t...);
}

template <typename ShapeType, typename StrideType>
__aicore__ inline constexpr auto MakeLayout(const ShapeType& shape, const StrideType& stride) {
    return Layout<ShapeType, StrideType>(shape, stride);
}

// A shape alone: TransData's layouts, whose strides no emulated API reads.
template <typename ShapeType>
__aicore__ inline constexpr auto MakeLayout(const ShapeType& shape) {
    return Layout<ShapeType, Stride<>>(shape, Stride<>{});
}

template <typename CoordType, typename ShapeType, typename StrideType>
__aicore__ inline constexpr auto Crd2Idx(const CoordType& coord, const Layout<ShapeType, StrideType>& layout) {
    return layout(coord);
}

template <typename CoordType, typename ShapeType, typename StrideType>
__aicore__ inline constexpr auto Crd2Idx(const CoordType& coord, const ShapeType& shape, const StrideType& stride) {
    return layout_detail::crd2idx(coord, shape, stride);
}

}  // namespace AscendC
