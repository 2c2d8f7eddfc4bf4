// AscendC::Std::tuple (asc-devkit include/utils/std/tuple.h, docs/zh/api/Utils-API/CPP标准库/
// 容器函数/tuple.md, make_tuple.md): the standard library's tuple, get, make_tuple, tie,
// tuple_size and tuple_element under the AscendC::Std names, and Ascend C's is_tuple.
#pragma once

#include <tuple>

#include "type_traits.h"

namespace AscendC {
namespace Std {

template <typename... Tps>
using tuple = std::tuple<Tps...>;
template <typename T>
using tuple_size = std::tuple_size<T>;
template <size_t N, typename T>
using tuple_element = std::tuple_element<N, T>;
using std::get;
using std::make_tuple;
using std::tie;

// Whether tuple_size<T> is defined.
template <typename T, typename = void>
struct is_tuple : false_type {};
template <typename T>
struct is_tuple<T, std::void_t<decltype(std::tuple_size<T>::value)>> : true_type {};
template <typename T>
inline constexpr bool is_tuple_v = is_tuple<T>::value;

}  // namespace Std
}  // namespace AscendC
