// SetFlag/WaitFlag, PipeBarrier and the cross-block barrier SyncAll. The emulator runs a block in program order, so a
// WaitFlag whose SetFlag has not been issued before it can never be satisfied: on the device
// the waiting pipe hangs. That is reported here as a flag deadlock at the WaitFlag's line.
#pragma once

#include <cstring>
#include <string>

#include "../sage_sim/coop.h"
#include "../sage_sim/vec.h"

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
                                  "FIX_MTE2", "FIX_S", "M_S", "FIX_MTE3", "MTE1_FIX", "FIX_MTE1", "FIX_FIX"};
    static_assert(sizeof(names) / sizeof(names[0]) == size_t(HardEvent::MAX), "a name per HardEvent");
    auto i = static_cast<unsigned>(e);
    return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}
inline sage::sim::Pipe pipe_named(const char* p, size_t n) {
    using sage::sim::Pipe;
    auto is = [&](const char* name) { return std::strlen(name) == n && std::strncmp(p, name, n) == 0; };
    if (is("MTE2")) return Pipe::MTE2;
    if (is("MTE3")) return Pipe::MTE3;
    if (is("MTE1")) return Pipe::MTE1;
    if (is("V")) return Pipe::V;
    if (is("S")) return Pipe::S;
    if (is("M")) return Pipe::M;
    return Pipe::FIX;
}
// The pipes an event connects, from its name ("MTE2_V": set on MTE2, waited on V).
inline sage::sim::Pipe event_pipe(HardEvent e, bool waiter) {
    const char* n = event_name(e);
    const char* us = std::strchr(n, '_');
    if (!us) return sage::sim::Pipe::ALL;
    return waiter ? pipe_named(us + 1, std::strlen(us + 1)) : pipe_named(n, size_t(us - n));
}
}  // namespace detail

namespace detail {
inline void set_flag(HardEvent event, int32_t eventID, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    unsigned e = static_cast<unsigned>(event), id = unsigned(eventID) & 7u;
    ++blk().flags_set[e][id];
    trace_event(TraceKind::SetFlag, event_pipe(event, false), "SetFlag", loc, int32_t(e), int32_t(id));
}
inline void wait_flag(HardEvent event, int32_t eventID, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    unsigned e = static_cast<unsigned>(event), id = unsigned(eventID) & 7u;
    int& pending = blk().flags_set[e][id];
    if (pending == 0) {
        const char* name = event_name(event);
        // A pending SetFlag of the same event under another id is the likely intended partner.
        std::string other;
        for (unsigned i = 0; i < 8; ++i) {
            if (blk().flags_set[e][i]) {
                other = format(" (a SetFlag<HardEvent::%s>(%u) is pending: is the id wrong?)", name, i);
                break;
            }
        }
        fail("flag-deadlock", loc,
             "WaitFlag<HardEvent::%s>(%u) waits for a SetFlag<HardEvent::%s>(%u) that was not issued before it%s, "
             "in block %d: the %s pipe hangs here on the device. Issue the SetFlag first; when the wait opens a "
             "loop body (waiting for the previous iteration), also issue one SetFlag before the loop",
             name, id, name, id, other.c_str(), blk().idx, pipe_name(event_pipe(event, true)));
    }
    --pending;
    trace_event(TraceKind::WaitFlag, event_pipe(event, true), "WaitFlag", loc, int32_t(e), int32_t(id));
}
// The HardEvent a set_flag/wait_flag pipe pair names (PIPE_MTE2, PIPE_V -> MTE2_V).
inline HardEvent event_between(pipe_t src, pipe_t dst) {
    static const char* pipes[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "ALL", "MTE4", "MTE5", "V2", "FIX"};
    std::string want = std::string(unsigned(src) < 11 ? pipes[src] : "?") + "_" + (unsigned(dst) < 11 ? pipes[dst] : "?");
    for (unsigned i = 0; i < unsigned(HardEvent::MAX); ++i)
        if (want == event_name(HardEvent(i))) return HardEvent(i);
    return HardEvent::MAX;
}
}  // namespace detail

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID, SAGE_LOC) {
    static_assert(unsigned(event) < unsigned(HardEvent::MAX), "SetFlag needs a HardEvent below HardEvent::MAX");
    sage::sim::touch(loc);
    detail::set_flag(event, eventID, loc);
}

template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID, SAGE_LOC) {
    static_assert(unsigned(event) < unsigned(HardEvent::MAX), "WaitFlag needs a HardEvent below HardEvent::MAX");
    sage::sim::touch(loc);
    detail::wait_flag(event, eventID, loc);
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
__aicore__ inline void set_flag(AscendC::pipe_t pipe, AscendC::pipe_t tpipe, AscendC::event_t eventID, SAGE_LOC) {
    sage::sim::touch(loc);
    AscendC::HardEvent e = AscendC::detail::event_between(pipe, tpipe);
    if (e == AscendC::HardEvent::MAX)
        sage::sim::fail("flag-deadlock", loc, "set_flag between these two pipes names no HardEvent: no wait can "
                        "ever match it");
    AscendC::detail::set_flag(e, eventID, loc);
}
__aicore__ inline void wait_flag(AscendC::pipe_t pipe, AscendC::pipe_t tpipe, AscendC::event_t eventID, SAGE_LOC) {
    sage::sim::touch(loc);
    AscendC::HardEvent e = AscendC::detail::event_between(pipe, tpipe);
    if (e == AscendC::HardEvent::MAX)
        sage::sim::fail("flag-deadlock", loc, "wait_flag between these two pipes names no HardEvent: nothing can "
                        "ever set it");
    AscendC::detail::wait_flag(e, eventID, loc);
}

namespace AscendC {

// ---------------------------------------------------------------- SyncAll

namespace detail {
inline void sync_all(int need, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    trace_event(TraceKind::Barrier, Pipe::ALL, "SyncAll", loc, int32_t(PIPE_ALL), need);
    if (need <= 1) return;
    if (!coop().active) {
        fail("crash", loc,
             "SyncAll across %d blocks, but this run executes the blocks one after another (block %d has run to "
             "its end before block %d starts), so a barrier between them cannot be honoured. The build switches "
             "to the cooperative block runner when the kernel file names SyncAll; call it from the kernel file "
             "(not only from a header), or build with -DSAGE_SIM_COOP=1",
             need, blk().idx > 0 ? blk().idx - 1 : 0, blk().idx + 1);
    }
    fiber_wait(loc, need);
}
}  // namespace detail

// The hardware all-core barrier: every block waits until all blocks of the launch reach it.
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll(SAGE_LOC) {
    detail::sync_all(sage::sim::blk().num, loc);
}

// The software barrier through a GM workspace (each core writes a flag and polls the others'):
// usedCores blocks take part, all of them when 0. The workspaces need 32 bytes per core.
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                               const int32_t usedCores = 0, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    int need = usedCores > 0 ? usedCores : blk().num;
    uint64_t elems = uint64_t(need) * 8;  // 32 bytes of int32 per core
    gm_check(gmWorkspace.addr_, elems * sizeof(int32_t), loc, true, "SyncAll's gmWorkspace", sizeof(int32_t),
             gmWorkspace.gm_);
    ubWorkspace.check("SyncAll's ubWorkspace", elems, loc);
    detail::sync_all(need, loc);
}

}  // namespace AscendC
