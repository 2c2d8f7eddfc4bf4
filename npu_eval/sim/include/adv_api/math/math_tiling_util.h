// What the math family's host tiling functions share (adv_api/math/<api>_tiling.h).
#pragma once

#include <cstdint>

#include "../utils/types.h"

namespace AscendC {
namespace detail {

// One vector repeat: the least temporary space an API that keeps intermediates needs.
constexpr uint32_t kMathRepeatBytes = 256;

// The usual range of a math API's temporary buffer: calcPro bytes per byte of the source, for
// the whole source at most and for one repeat at least (`calcPro` counts the API's live tensors).
inline void math_tmp_range(int64_t n, uint32_t typeSize, uint32_t calcPro, uint32_t& maxValue, uint32_t& minValue) {
    minValue = calcPro * kMathRepeatBytes;
    maxValue = calcPro * (uint32_t(n) * typeSize > kMathRepeatBytes ? uint32_t(n) * typeSize : kMathRepeatBytes);
}

}  // namespace detail
}  // namespace AscendC
