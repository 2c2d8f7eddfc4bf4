// What the math family's host tiling functions share (adv_api/math/<api>_tiling.h).
#pragma once

#include <cstdint>

#include "../utils/types.h"

namespace AscendC {
namespace detail {

// One vector repeat: the least temporary space an API that keeps intermediates needs.
constexpr uint32_t kMathRepeatBytes = 256;

}  // namespace detail
}  // namespace AscendC
