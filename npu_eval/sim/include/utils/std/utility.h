// AscendC::Std utilities (asc-devkit include/utils/std/utility.h): forward, move, declval and
// the index sequences, as the standard library's.
#pragma once

#include <cstddef>
#include <utility>

namespace AscendC {
namespace Std {

using std::declval;
using std::forward;
using std::move;
template <typename T, T... Idx>
using integer_sequence = std::integer_sequence<T, Idx...>;
template <size_t... Idx>
using index_sequence = std::index_sequence<Idx...>;
template <size_t N>
using make_index_sequence = std::make_index_sequence<N>;
template <typename... T>
using index_sequence_for = std::index_sequence_for<T...>;

}  // namespace Std
}  // namespace AscendC
