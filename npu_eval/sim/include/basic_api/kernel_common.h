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
//
// The other members asc-devkit's basic API builds on (impl/basic_api/kernel_utils_base.h): the
// mask setters, which isSetMask = false turns into no-ops, and the C0/block constants.
struct AscendCUtils {
    __aicore__ static inline void SetOverflow(uint64_t ctrlValue, SAGE_LOC) {
        sage::sim::touch(loc);
        const bool saturate = ctrlValue != 1;
        sage::sim::vregs().other_overflow_mode_line = saturate == bool(SAGE_SAT_MODE) ? 0 : loc.line;
    }
    template <typename T, bool isSetMask = true>
    __aicore__ static inline void SetMask(const uint64_t& maskHigh, const uint64_t& maskLow, SAGE_LOC) {
        sage::sim::touch(loc);
        if constexpr (!isSetMask) return;
        auto& r = sage::sim::vregs();
        r.mask_hi = maskHigh;
        r.mask_lo = maskLow;
    }
    // The first len elements of a repeat, as the real helper builds it: 64 is the low word, and
    // len equal to one 32-byte block's element count (8 floats, 16 halves) or >= 128 sets the
    // whole mask, as the real helper does.
    template <typename T, bool isSetMask = true>
    __aicore__ static inline void SetMask(int32_t len, SAGE_LOC) {
        if constexpr (!isSetMask) return;
        constexpr int32_t kBlockElems = int32_t(32 / sizeof(T));
        constexpr uint64_t kFull = ~0ull;
        if (len == 64) return SetMask<T>(0, kFull, loc);
        if (len == kBlockElems || len >= 128) return SetMask<T>(kFull, kFull, loc);
        const uint64_t hi = len > 64 ? (1ull << uint32_t(len - 64)) - 1 : 0;
        const uint64_t lo = len > 64 ? kFull : (1ull << uint32_t(len)) - 1;
        SetMask<T>(hi, lo, loc);
    }
    __aicore__ static inline int32_t GetBitSize(int32_t byteSize) { return byteSize * 8; }
    __aicore__ static inline int32_t GetC0Size() { return 32; }
    __aicore__ static inline int32_t GetC0Count(const int32_t dtypeSize) { return GetC0Size() / dtypeSize; }
    __aicore__ static inline int32_t GetDefaultBlockNum() { return 8; }
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
