// The Matmul API's integer helpers kernels call as AscendC:: names (asc-devkit impl's
// matmul_utils.h, visible through lib/matmul_intf.h): Ceil(a, b), the number of b-sized pieces of a.
#pragma once

#include <type_traits>

#include "../../sage_sim/qualifiers.h"

namespace AscendC {

// Integers only: the vector API's Ceil(dst, src, ...) on tensors is another overload.
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
__aicore__ inline constexpr T Ceil(T num1, T num2) {
    return num2 > 0 ? (num1 + num2 - 1) / num2 : 0;
}

}  // namespace AscendC
