// AscendC::Std type traits (asc-devkit include/utils/std/type_traits.h): the standard library's
// traits under the AscendC::Std names kernels use, with the device's own definitions where they
// differ: is_floating_point counts half (not bfloat16_t), is_integral counts an
// integral_constant; is_constant, is_one_of(_value) and is_tuple are Ascend C's additions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../sage_sim/dtypes.h"

namespace AscendC {
namespace Std {

template <typename Tp, Tp v>
using integral_constant = std::integral_constant<Tp, v>;
template <bool B>
using bool_constant = std::integral_constant<bool, B>;
// Std::Int: the integral_constant page's shorthand, its value a size_t.
template <size_t v>
using Int = std::integral_constant<size_t, v>;
using true_type = std::true_type;
using false_type = std::false_type;

// One trait and its _v (a value trait) or _t (a type trait), taken from std.
#define SAGE_STD_VALUE_TRAIT(NAME)                     \
    template <typename T>                              \
    struct NAME : std::NAME<T> {};                     \
    template <typename T>                              \
    inline constexpr bool NAME##_v = NAME<T>::value;
#define SAGE_STD_TYPE_TRAIT(NAME)                      \
    template <typename T>                              \
    struct NAME : std::NAME<T> {};                     \
    template <typename T>                              \
    using NAME##_t = typename NAME<T>::type;

SAGE_STD_VALUE_TRAIT(is_array)
SAGE_STD_VALUE_TRAIT(is_class)
SAGE_STD_VALUE_TRAIT(is_const)
SAGE_STD_VALUE_TRAIT(is_function)
SAGE_STD_VALUE_TRAIT(is_pointer)
SAGE_STD_VALUE_TRAIT(is_reference)
SAGE_STD_VALUE_TRAIT(is_union)
SAGE_STD_VALUE_TRAIT(is_void)
SAGE_STD_TYPE_TRAIT(add_const)
SAGE_STD_TYPE_TRAIT(add_cv)
SAGE_STD_TYPE_TRAIT(add_lvalue_reference)
SAGE_STD_TYPE_TRAIT(add_pointer)
SAGE_STD_TYPE_TRAIT(add_rvalue_reference)
SAGE_STD_TYPE_TRAIT(add_volatile)
SAGE_STD_TYPE_TRAIT(decay)
SAGE_STD_TYPE_TRAIT(remove_const)
SAGE_STD_TYPE_TRAIT(remove_cv)
SAGE_STD_TYPE_TRAIT(remove_extent)
SAGE_STD_TYPE_TRAIT(remove_pointer)
SAGE_STD_TYPE_TRAIT(remove_reference)
SAGE_STD_TYPE_TRAIT(remove_volatile)
#undef SAGE_STD_VALUE_TRAIT
#undef SAGE_STD_TYPE_TRAIT

template <typename T>
struct remove_cvref : std::remove_cv<std::remove_reference_t<T>> {};
template <typename T>
using remove_cvref_t = typename remove_cvref<T>::type;

template <bool B, typename T = void>
struct enable_if : std::enable_if<B, T> {};
template <bool B, typename T = void>
using enable_if_t = typename enable_if<B, T>::type;
template <bool B, typename If, typename Then>
struct conditional : std::conditional<B, If, Then> {};
template <bool B, typename If, typename Then>
using conditional_t = typename conditional<B, If, Then>::type;

template <typename Tp, typename Up>
struct is_same : std::is_same<Tp, Up> {};
template <typename Tp, typename Up>
inline constexpr bool is_same_v = is_same<Tp, Up>::value;
template <typename From, typename To>
struct is_convertible : std::is_convertible<From, To> {};
template <typename From, typename To>
inline constexpr bool is_convertible_v = is_convertible<From, To>::value;
template <typename Base, typename Derived>
struct is_base_of : std::is_base_of<Base, Derived> {};
template <typename Base, typename Derived>
inline constexpr bool is_base_of_v = is_base_of<Base, Derived>::value;

template <typename T>
struct is_floating_point
    : bool_constant<std::is_floating_point<T>::value || std::is_same<std::remove_cv_t<T>, half>::value> {};
template <typename T>
inline constexpr bool is_floating_point_v = is_floating_point<T>::value;

template <typename T>
struct is_integral : std::is_integral<T> {};
template <typename T, T v>
struct is_integral<std::integral_constant<T, v>> : true_type {};
template <typename T>
inline constexpr bool is_integral_v = is_integral<T>::value;

// Whether T (cv/ref-qualified or not) is integral_constant<_, n>.
template <auto n, typename T>
struct is_constant : false_type {};
template <auto n, typename T>
struct is_constant<n, const T> : is_constant<n, T> {};
template <auto n, typename T>
struct is_constant<n, T&> : is_constant<n, T> {};
template <auto n, typename T>
struct is_constant<n, const T&> : is_constant<n, T> {};
template <auto n, typename T>
struct is_constant<n, T&&> : is_constant<n, T> {};
template <auto n, typename T, T v>
struct is_constant<n, std::integral_constant<T, v>> : bool_constant<v == n> {};

template <typename T, typename... Args>
struct is_one_of : bool_constant<(std::is_same<T, Args>::value || ...)> {};
template <typename T, typename... Args>
inline constexpr bool is_one_of_v = is_one_of<T, Args...>::value;
template <typename T, T Value, T... List>
struct is_one_of_value : bool_constant<((Value == List) || ...)> {};
template <typename T, T... Value>
inline constexpr bool is_one_of_value_v = is_one_of_value<T, Value...>::value;

}  // namespace Std
}  // namespace AscendC
