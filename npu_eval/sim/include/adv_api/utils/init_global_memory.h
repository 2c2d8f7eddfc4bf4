// InitGlobalMemory (adv_api/utils): fill a GM workspace with one value.
#pragma once

#include "../../sage_sim/vec.h"

namespace AscendC {

// Fills `size` elements of GM with `value` (the device stages them through UB and writes them
// with DataCopyPad on MTE3).
template <typename T>
__aicore__ inline void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value,
                                        SAGE_LOC) {
    constexpr bool ok = sage::sim::one_of<T, uint16_t, int16_t, half, float, uint32_t, int32_t>();
    SAGE_DTYPE_GATE("InitGlobalMemory", T, ok, "uint16_t, int16_t, half, float, uint32_t, int32_t")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        T* p = gmWorkspaceAddr.addr_;
        GmBuffer* b = gm_check(p, size * sizeof(T), loc, true, "InitGlobalMemory", sizeof(T), gmWorkspaceAddr.gm_);
        for (uint64_t i = 0; i < size; ++i) p[i] = value;
        gm_wrote(b, p, size * sizeof(T), loc, "InitGlobalMemory", sizeof(T));
        trace_instr(Pipe::MTE3, "InitGlobalMemory", dtype_name<T>(), uint32_t(size), size * sizeof(T), loc);
        trace_gm_shape(p, 1);
    }
}

}  // namespace AscendC
