// What the normalization family's size formulas share (the host tiling functions and the
// kernel-side checks both call them).
#pragma once

#include <cstdint>

namespace AscendC {
namespace norm_sizes {

// Bytes rounded up to whole 32-byte blocks, as the tiling implementations round each buffer.
inline uint32_t align32(uint32_t bytes) { return (bytes + 31) / 32 * 32; }

}  // namespace norm_sizes
}  // namespace AscendC
