// AscendC::Std::min and max (asc-devkit include/utils/std/algorithm.h): two operands of possibly
// different types, compared and returned in their common type.
#pragma once

#include <type_traits>

#include "../../sage_sim/qualifiers.h"

namespace AscendC {
namespace Std {

template <typename T, typename U>
__aicore__ inline constexpr auto min(const T& src0, const U& src1) {
    using C = std::common_type_t<T, U>;
    return C(src1) < C(src0) ? C(src1) : C(src0);
}
template <typename T, typename U>
__aicore__ inline constexpr auto max(const T& src0, const U& src1) {
    using C = std::common_type_t<T, U>;
    return C(src0) < C(src1) ? C(src1) : C(src0);
}

}  // namespace Std
}  // namespace AscendC
