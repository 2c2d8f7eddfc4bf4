// SetAtomicAdd/Max/Min/Type, SetAtomicNone and DisableDmaAtomic: UB -> GM copies that combine
// with what GM holds.
#pragma once

#include <type_traits>

#include "kernel_tensor.h"

namespace AscendC {

// Atomic UB->GM copies (add, max, min), per core until DisableDmaAtomic (SetAtomicNone is its
// older name): blocks combining into the same output do not race.
namespace detail {
using sage::sim::SrcLoc;

template <typename T>
inline void set_atomic(int op, const char* api, SrcLoc loc) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value ||
                      std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value ||
                      std::is_same<T, int8_t>::value || std::is_same<T, bfloat16_t>::value,
                  "[dtype-unsupported] SetAtomicAdd/Max/Min take float, half, bfloat16_t, int32_t, int16_t or "
                  "int8_t on this chip");
    sage::sim::touch(loc);
    sage::sim::blk().atomic_op = op;
    (void)api;
}
}  // namespace detail

template <typename T>
__aicore__ inline void SetAtomicAdd(SAGE_LOC) {
    detail::set_atomic<T>(sage::sim::AtomicAddOp, "SetAtomicAdd", loc);
}
template <typename T>
__aicore__ inline void SetAtomicMax(SAGE_LOC) {
    detail::set_atomic<T>(sage::sim::AtomicMaxOp, "SetAtomicMax", loc);
}
template <typename T>
__aicore__ inline void SetAtomicMin(SAGE_LOC) {
    detail::set_atomic<T>(sage::sim::AtomicMinOp, "SetAtomicMin", loc);
}
// Sets the element type of a following atomic operation: the emulator combines in the copy's own
// element type, so only the check remains.
template <typename T>
__aicore__ inline void SetAtomicType(SAGE_LOC) {
    sage::sim::touch(loc);
}
__aicore__ inline void DisableDmaAtomic(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::blk().atomic_op = sage::sim::AtomicNone;
}
__aicore__ inline void SetAtomicNone(SAGE_LOC) {
    DisableDmaAtomic(loc);
}

}  // namespace AscendC
