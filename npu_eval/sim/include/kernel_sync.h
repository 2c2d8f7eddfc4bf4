// SetFlag/WaitFlag and PipeBarrier. The emulator runs a block in program order, so a
// WaitFlag whose SetFlag has not been issued before it can never be satisfied: on the device
// the waiting pipe hangs. That is reported here as a flag deadlock at the WaitFlag's line.
#pragma once

#include "kernel_common.h"

namespace AscendC {

namespace detail {
inline sage::sim::Pipe pipe_of(pipe_t p) {
    switch (p) {
        case PIPE_S: return sage::sim::Pipe::S;
        case PIPE_V: return sage::sim::Pipe::V;
        case PIPE_M: return sage::sim::Pipe::M;
        case PIPE_MTE1: return sage::sim::Pipe::MTE1;
        case PIPE_MTE2: return sage::sim::Pipe::MTE2;
        case PIPE_MTE3: return sage::sim::Pipe::MTE3;
        case PIPE_FIX: return sage::sim::Pipe::FIX;
        default: return sage::sim::Pipe::ALL;
    }
}
inline const char* event_name(HardEvent e) {
    static const char* names[] = {"MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE2_V", "V_MTE2", "MTE3_V",
                                  "V_MTE3", "M_V", "V_M", "V_V", "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",
                                  "MTE2_M", "M_MTE2", "V_MTE1", "M_FIX", "FIX_M", "MTE3_MTE2", "MTE2_MTE3",
                                  "S_V", "V_S", "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S", "MTE2_FIX",
                                  "FIX_MTE2", "FIX_S", "M_S", "FIX_MTE3"};
    auto i = static_cast<unsigned>(e);
    return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}
// The pipes an event connects, from its name ("MTE2_V": set on MTE2, waited on V).
inline sage::sim::Pipe event_pipe(HardEvent e, bool waiter) {
    std::string n = event_name(e);
    auto us = n.find('_');
    std::string p = waiter ? n.substr(us + 1) : n.substr(0, us);
    if (p == "MTE2") return sage::sim::Pipe::MTE2;
    if (p == "MTE3") return sage::sim::Pipe::MTE3;
    if (p == "MTE1") return sage::sim::Pipe::MTE1;
    if (p == "V") return sage::sim::Pipe::V;
    if (p == "S") return sage::sim::Pipe::S;
    if (p == "M") return sage::sim::Pipe::M;
    return sage::sim::Pipe::FIX;
}
}  // namespace detail

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    unsigned e = static_cast<unsigned>(event), id = unsigned(eventID) & 7u;
    ++blk().flags_set[e % 64][id];
    trace_event(TraceKind::SetFlag, detail::event_pipe(event, false), "SetFlag", loc, int32_t(e), int32_t(id));
}

template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    unsigned e = static_cast<unsigned>(event), id = unsigned(eventID) & 7u;
    int& pending = blk().flags_set[e % 64][id];
    if (pending == 0) {
        fail("flag-deadlock", loc,
             "WaitFlag<HardEvent::%s>(%u) waits for a SetFlag<HardEvent::%s>(%u) that was not issued "
             "before it: the %s pipe hangs here on the device",
             detail::event_name(event), id, detail::event_name(event), id,
             pipe_name(detail::event_pipe(event, true)));
    }
    --pending;
    trace_event(TraceKind::WaitFlag, detail::event_pipe(event, true), "WaitFlag", loc, int32_t(e), int32_t(id));
}

template <pipe_t pipe>
__aicore__ inline void PipeBarrier(SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    trace_event(TraceKind::Barrier, detail::pipe_of(pipe), "PipeBarrier", loc, int32_t(pipe), 0);
}

}  // namespace AscendC

// The intrinsic spellings some kernels use directly.
__aicore__ inline void pipe_barrier(AscendC::pipe_t pipe, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    trace_event(TraceKind::Barrier, AscendC::detail::pipe_of(pipe), "pipe_barrier", loc, int32_t(pipe), 0);
}
