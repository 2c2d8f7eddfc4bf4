// The vector mask registers: SetMaskCount/SetMaskNorm, SetVectorMask and ResetMask, and the
// MASK_PLACEHOLDER an op called with isSetMask = false takes.
#pragma once

#include "../sage_sim/vec.h"

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

// The mask argument of an op called with isSetMask = false: the op then uses the mask
// registers as SetVectorMask left them.
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

// Counter mode: SetVectorMask<T>(0, n) then makes the next isSetMask=false op process n
// elements in total, whatever its repeat argument says.
__aicore__ inline void SetMaskCount(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().counter = true;
}
__aicore__ inline void SetMaskNorm(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().counter = false;
}
__aicore__ inline void ResetMask(SAGE_LOC) {
    sage::sim::touch(loc);
    auto& r = sage::sim::vregs();
    r.mask_hi = r.mask_lo = ~0ull;
}

// The control register's float overflow mode (CTRL[48] on Atlas A2): SetOverflow(1) selects
// Inf/NaN results, 0 saturation. The emulator computes in the chip's default mode (SAGE_SAT_MODE:
// Inf/NaN on 910B); asking for the other one is recorded, and vector work under it faults.
struct AscendCUtils {
    __aicore__ static inline void SetOverflow(uint64_t ctrlValue, SAGE_LOC) {
        sage::sim::touch(loc);
        const bool saturate = ctrlValue != 1;
        sage::sim::vregs().other_overflow_mode_line = saturate == bool(SAGE_SAT_MODE) ? 0 : loc.line;
    }
};

// Normal mode: maskLow selects elements 0..63 of each repeat, maskHigh 64..127. Counter
// mode: maskLow is the element count.
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ static inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow, SAGE_LOC) {
    sage::sim::touch(loc);
    auto& r = sage::sim::vregs();
    r.mask_hi = maskHigh;
    r.mask_lo = maskLow;
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ static inline void SetVectorMask(int32_t len, SAGE_LOC) {
    sage::sim::touch(loc);
    auto& r = sage::sim::vregs();
    if (mode == MaskMode::COUNTER || r.counter) {
        r.mask_hi = 0;
        r.mask_lo = uint64_t(len < 0 ? 0 : len);
    } else {
        sage::sim::continuous_bits(uint64_t(len < 0 ? 0 : len), sage::sim::elems_per_repeat<T>(), &r.mask_hi,
                                   &r.mask_lo);
    }
}

}  // namespace AscendC
