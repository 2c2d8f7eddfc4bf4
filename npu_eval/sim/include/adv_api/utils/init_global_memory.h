// InitGlobalMemory and Fill, its current name (adv_api/utils, asc-devkit
// include/adv_api/utils/init_global_memory.h; docs/zh/api/SIMD-API/高阶API/张量变换/Fill-97.md): fill a GM
// workspace with one value.
#pragma once

#include <cstring>

#include "../../sage_sim/vec.h"

namespace AscendC {

namespace detail {

// Fills `size` elements of GM with `value` (the device stages them through UB and writes them
// with DataCopyPad on MTE3).
template <typename T>
inline void init_gm(const char* api, GlobalTensor<T>& gm, const uint64_t size, const T value, sage::sim::SrcLoc loc) {
    constexpr bool ok = sage::sim::one_of<T, uint16_t, int16_t, half, float, uint32_t, int32_t>();
    SAGE_DTYPE_GATE("InitGlobalMemory/Fill", T, ok, "uint16_t, int16_t, half, float, uint32_t, int32_t")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        T* p = gm.addr_;
        GmBuffer* b = gm_check(p, size * sizeof(T), loc, true, api, sizeof(T), gm.gm_);
        // Several cores clearing the same GM (the split-K samples) leave it as it was: the race
        // check then reports duplicated work, not a race (the order cannot change the bytes).
        bool identical = b && b->tracked;
        for (uint64_t i = 0; i < size && identical; ++i) identical = memcmp(&p[i], &value, sizeof(T)) == 0;
        for (uint64_t i = 0; i < size; ++i) p[i] = value;
        gm_wrote(b, p, size * sizeof(T), loc, api, sizeof(T), identical);
        trace_instr(Pipe::MTE3, api, dtype_name<T>(), uint32_t(size), size * sizeof(T), loc);
        trace_gm_shape(p, 1);
    }
}

}  // namespace detail

template <typename T>
__aicore__ inline void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value,
                                        SAGE_LOC) {
    detail::init_gm("InitGlobalMemory", gmWorkspaceAddr, size, value, loc);
}

template <typename T>
__aicore__ inline void Fill(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value, SAGE_LOC) {
    detail::init_gm("Fill", gmWorkspaceAddr, size, value, loc);
}

}  // namespace AscendC
