// SetFlag/WaitFlag, PipeBarrier and the cross-block barrier SyncAll. The emulator runs a block in program order, so a
// WaitFlag whose SetFlag has not been issued before it can never be satisfied: on the device
// the waiting pipe hangs. That is reported here as a flag deadlock at the WaitFlag's line.
#pragma once

#include <cstring>
#include <string>

#include "../sage_sim/coop.h"
#include "../sage_sim/mix.h"
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
inline void sync_all(int need, sage::sim::SrcLoc loc, bool aiv_only = true, bool soft = false) {
    using namespace sage::sim;
    touch(loc);
    if (coop().active && coop().mixed) {
        // a mixed launch's hardware SyncAll is made of cross-core flags (sage_sim/mix.h)
        if (soft)
            fail("api-misuse", loc, "SyncAll with a GM workspace synchronises pure vector kernels only (the SyncAll "
                 "page); in a mixed kernel call SyncAll<false>() or SyncAll<true>()");
        return mixed_sync_all(aiv_only, loc);
    }
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
    detail::sync_all(sage::sim::blk().num, loc, isAIVOnly);
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
    detail::sync_all(need, loc, true, true);
}

}  // namespace AscendC

// ---------------------------------------------------------------- CrossCoreSetFlag / CrossCoreWaitFlag
//
// The flags between the cores of a launch (sage_sim/mix.h): mode 0 among all AICs or all AIVs,
// mode 1 between the AIVs of an AI Core, mode 2 between an AI Core's AIC and its AIVs.

namespace AscendC {

template <uint8_t modeId, pipe_t pipe>
__aicore__ inline void CrossCoreSetFlag(uint16_t flagId, SAGE_LOC) {
    sage::sim::cross_set(int(modeId), detail::pipe_of(pipe), flagId, loc);
}

// modeId and pipe have no effect on the 910B's waits (the API page); they are checked on the set.
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
__aicore__ inline void CrossCoreWaitFlag(uint16_t flagId, SAGE_LOC) {
    sage::sim::cross_wait(flagId, loc);
}

}  // namespace AscendC

// ---------------------------------------------------------------- IBSet / IBWait
//
// The cross-block flags of IBSet/IBWait, InitDetermineComputeWorkspace/WaitPreBlock/NotifyNextBlock
// and GroupBarrier live in a GM workspace the kernel passes. The device polls it (a DMA read per
// try, no data cache); here a fruitless poll lets the other blocks run (coop.h), and a poll no
// block can satisfy any more is a flag-deadlock at the call. Their GM stores are the point of
// the API, so they are not cross-block races.

namespace AscendC {
namespace detail {

// Bytes a GlobalTensor may touch from its address: its SetGlobalBuffer size when given, else
// up to the end of its GM buffer.
template <typename T>
inline uint64_t gm_room(const GlobalTensor<T>& g) {
    if (g.size_) return g.size_ * sizeof(T);
    auto& gm = sage::sim::rt().gm;
    if (g.gm_ < 0 || size_t(g.gm_) >= gm.size()) return 0;
    const auto& b = gm[size_t(g.gm_)];
    auto* p = reinterpret_cast<const uint8_t*>(g.addr_);
    return p >= b.base && p < b.base + b.bytes ? uint64_t(b.base + b.bytes - p) : 0;
}

// Bytes a LocalTensor holds from its address to the end of its buffer (after the usual checks).
template <typename T>
inline uint64_t ub_room(const LocalTensor<T>& t, const char* api, sage::sim::SrcLoc loc) {
    t.check(api, 0, loc, false);
    uint64_t end = uint64_t(t.slot_->addr) + t.slot_->bytes;
    return t.addr_ < end ? end - t.addr_ : 0;
}

// A workspace below the size the API's doc page requires: the device would read and write
// past it (other data, or another block's flags).
inline void need_room(const char* api, const char* what, uint64_t need, uint64_t have, const char* rule,
                      sage::sim::SrcLoc loc) {
    if (have >= need) return;
    sage::sim::fail("api-misuse", loc,
                    "%s's %s holds %llu bytes, but this call needs %llu (%s), in block %d: on the device the flags "
                    "land past it, on other data. Allocate at least %llu bytes",
                    api, what, (unsigned long long)have, (unsigned long long)need, rule, sage::sim::blk().idx,
                    (unsigned long long)need);
}

// A cross-block poll that failed: yield to the other blocks (cooperative runner), or, when the
// blocks run one after another, say why the wait cannot be honoured.
inline void poll_again(const std::string& why, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (rt().poll) return rt().poll(loc, why, 1);
    if (blk().num <= 1) fail("flag-deadlock", loc, "block 0 %s: on the device it waits here forever", why.c_str());
    fail("crash", loc,
         "block %d %s, but this run executes the blocks one after another, so another block cannot set it "
         "meanwhile. The build switches to the cooperative block runner when the kernel file names the wait "
         "(IBWait, WaitPreBlock, GroupBarrier, DataCacheCleanAndInvalid); call it from the kernel file, or build "
         "with -DSAGE_SIM_COOP=1",
         blk().idx, why.c_str());
}

// A flag word in GM, read and written by DMA (DataCopy through the 32-byte ubWorkspace on the
// device): checked like any GM access, not subject to the race check.
inline int32_t flag_load(const int32_t* p, const char* api, sage::sim::SrcLoc loc) {
    sage::sim::gm_check(p, sizeof(int32_t), loc, false, api, sizeof(int32_t));
    return *p;
}
inline void flag_store(int32_t* p, int32_t v, const char* api, sage::sim::SrcLoc loc) {
    auto* b = sage::sim::gm_check(p, sizeof(int32_t), loc, true, api, sizeof(int32_t));
    *p = v;
    sage::sim::gm_mark_written(b, p, sizeof(int32_t));
}

// The instructions of one flag exchange, for the cost model: `polls` reads (MTE2) of the flags
// into the ubWorkspace, then one write (MTE3) from it, each stage behind a barrier (the device
// orders them with PIPE_ALL barriers and event flags).
inline void trace_flag_exchange(const char* api, const void* gm, sage::sim::UbRange ub, int polls, bool write,
                                sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
    for (int i = 0; i < polls; ++i) {
        trace_instr(Pipe::MTE2, api, "int32", ub.bytes / 4, ub.bytes, loc, ub);
        trace_gm_shape(gm, 1);
        trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
    }
    if (write) {
        trace_instr(Pipe::MTE3, api, "int32", ub.bytes / 4, ub.bytes, loc, {}, ub);
        trace_gm_shape(gm, 1);
    }
    trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
}

// IBSet/IBWait's flag for (blockIdx, eventID): 32 bytes at gmWorkspace[(cores * eventID +
// blockIdx) * 8], cores = the blocks (AIV only) or twice that (mix mode).
inline int32_t* ib_flag(const GlobalTensor<int32_t>& gm, const LocalTensor<int32_t>& ub, int32_t blockIdx,
                        int32_t eventID, bool aivOnly, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    int cores = blk().num * (aivOnly ? 1 : 2);
    if (blockIdx < 0 || blockIdx >= cores || eventID < 0) {
        fail("api-misuse", loc,
             "%s(blockIdx %d, eventID %d) with %d cores: blockIdx must be in [0, %d] and eventID at least 0, "
             "in block %d (blockIdx names the block that waits, the same in the IBSet and its IBWait)",
             api, blockIdx, eventID, cores, cores - 1, blk().idx);
    }
    uint64_t need = (uint64_t(cores) * uint64_t(eventID) + uint64_t(blockIdx)) * 32 + 32;
    need_room(api, "gmWorkspace", need, gm_room(gm), "cores*32*eventID + blockIdx*32 + 32 bytes", loc);
    need_room(api, "ubWorkspace", 32, ub_room(ub, api, loc), "32 bytes", loc);
    return gm.addr_ + (int64_t(cores) * eventID + blockIdx) * 8;
}

// Waits until the flag holds `want`, then writes `next` into it (the ubWorkspace keeps the
// 32 bytes read, as the device's DataCopy leaves them).
template <class Why>
inline void ib_exchange(int32_t* flag, const LocalTensor<int32_t>& ub, int32_t want, int32_t next, Why why,
                        const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    int polls = 1;
    while (flag_load(flag, api, loc) != want) {
        poll_again(why(), loc);
        ++polls;
    }
    if (want == 1) gm_acquire();  // IBWait: ordered after the IBSet's block
    memcpy(ub.data(), flag, 32);
    ub_mark(ub.range(8));
    ub.data()[0] = next;
    flag_store(flag, next, api, loc);
    trace_flag_exchange(api, flag, ub.range(8), polls, true, loc);
}

}  // namespace detail

// Sets block `blockIdx`'s flag `eventID` (waits until it is 0, writes 1): the IBWait(blockIdx,
// eventID) in that block may go on. gmWorkspace starts zeroed.
template <bool isAIVOnly = true>
__aicore__ inline void IBSet(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                             int32_t blockIdx, int32_t eventID, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    int32_t* flag = detail::ib_flag(gmWorkspace, ubWorkspace, blockIdx, eventID, isAIVOnly, "IBSet", loc);
    auto why = [&] {
        return format("IBSet(blockIdx %d, eventID %d) waits for its flag (gmWorkspace[%lld]) to be 0, but it stays "
                      "%d: an earlier IBSet of the same flag that no IBWait consumed, or a workspace not zeroed "
                      "before the launch",
                      blockIdx, eventID, (long long)(flag - gmWorkspace.addr_), *flag);
    };
    detail::ib_exchange(flag, ubWorkspace, 0, 1, why, "IBSet", loc);
}

// Waits until block `blockIdx`'s flag `eventID` is 1 (an IBSet with the same arguments), then
// clears it.
template <bool isAIVOnly = true>
__aicore__ inline void IBWait(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                              int32_t blockIdx, int32_t eventID, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    int32_t* flag = detail::ib_flag(gmWorkspace, ubWorkspace, blockIdx, eventID, isAIVOnly, "IBWait", loc);
    auto why = [&] {
        return format("IBWait(blockIdx %d, eventID %d) waits for its flag (gmWorkspace[%lld]) to become 1, but no "
                      "block calls IBSet with the same gmWorkspace, blockIdx and eventID any more",
                      blockIdx, eventID, (long long)(flag - gmWorkspace.addr_));
    };
    detail::ib_exchange(flag, ubWorkspace, 1, 0, why, "IBWait", loc);
}

}  // namespace AscendC
