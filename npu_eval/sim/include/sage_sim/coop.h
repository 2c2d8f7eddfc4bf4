// Cooperative block runner: every block of a launch as a fiber (ucontext) with its own stack,
// Unified Buffer and core registers, so a cross-block barrier (SyncAll) can park a block until
// all blocks reach it. Blocks still run one at a time, in index order between barriers, so a
// run stays deterministic; only the points where they switch are the barriers.
//
// The sequential runner in harness.h runs each block to its end before the next starts; there
// a SyncAll with more than one block cannot be honoured (the later blocks have not run yet) and
// reports so. coop_run() is the runner a harness uses instead when a kernel calls SyncAll or
// another cross-block wait (IBWait, WaitPreBlock, GroupBarrier, a DataCacheCleanAndInvalid poll).
//
// A block that polls GM (an IBWait, or a spin loop on a flag) yields at each fruitless poll
// (fiber_poll): the other blocks run, and it tries again. When a whole round passes in which no
// block stored to GM, finished or reached a barrier, nothing can change what the pollers read:
// on the device they spin forever, and here each is a deadlock at its poll's line.
#pragma once

#include <ucontext.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol.h"
#include "cube.h"
#include "vec.h"

namespace sage {
namespace sim {

// One core of a launch as the runner starts it: what GetBlockIdx, GetSubBlockIdx, GetTaskRatio and
// g_coreType answer on it. A vector launch is `block_dim` AIV cores; a mixed launch lists each AI
// Core's AIC and its AIVs (sage_sim/mix.h, launch_cores).
struct CoreSlot {
    int32_t core = 2;  // AscendC::AIC (1) or AIV (2)
    int idx = 0, num = 1, group = 0, sub_idx = 0, sub_num = 1, ratio = 1;
};

// A fresh block state for fiber `fiber` running core `k`.
inline void start_core(BlockState& st, const CoreSlot& k, int fiber) {
    st = BlockState{};
    st.idx = k.idx, st.num = k.num, st.core = k.core, st.fiber = fiber;
    st.group = k.group, st.sub_idx = k.sub_idx, st.sub_num = k.sub_num, st.ratio = k.ratio;
}

enum class FiberState : uint8_t { Ready, Waiting, Polling, Done, Aborted };

struct Fiber {
    int idx = 0;
    FiberState state = FiberState::Ready;
    ucontext_t ctx{};
    std::unique_ptr<char[]> stack;
    std::vector<uint8_t> ub, ub_init;
    BlockState st;     // the block's state while it is parked (swapped with rt().block when it runs)
    VecRegs regs;      // its mask and compare registers, likewise
    SrcLoc last{"", 0};
    SrcLoc wait_at{"", 0};
    int need = 0;      // blocks the barrier it waits at needs
    std::string why;   // Polling: what it waits for, for the deadlock message
    int budget = 1;    // Polling: fruitless rounds before that is a deadlock
    int stalls = 0;    // Polling: fruitless rounds so far
};

struct Coop {
    bool active = false;
    std::vector<std::unique_ptr<Fiber>> fibers;
    int cur = -1;
    ucontext_t sched{};
    std::function<void(int)> body;
    int status = 0;
    bool mixed = false;  // AIC and AIV cores in one launch: findings name the core, not a block
};

inline Coop& coop() {
    static Coop c;
    return c;
}

// A kernel's stack frames are small; 1 MB each keeps 64 blocks well inside the run's
// address-space limit.
constexpr size_t kFiberStackBytes = 1u << 20;

// Fibers a finished launch left, their memories kept: a program that launches thousands of times
// would otherwise map, fault in and free each core's local memory and stack at every launch, several
// times the work of a small kernel. A launch still fills the memories afresh (coop_run). A few are
// kept, so a launch of many cores does not hold its memory for the rest of the program.
constexpr size_t kSpareFibers = 8;
inline std::vector<std::unique_ptr<Fiber>>& spare_fibers() {
    static std::vector<std::unique_ptr<Fiber>> spare;
    return spare;
}
// A fiber in its initial state, with a spare one's memories when there is one.
inline std::unique_ptr<Fiber> fresh_fiber() {
    auto& spare = spare_fibers();
    if (spare.empty()) return std::make_unique<Fiber>();
    std::unique_ptr<Fiber> f = std::move(spare.back());
    spare.pop_back();
    std::vector<uint8_t> ub = std::move(f->ub), ub_init = std::move(f->ub_init);
    std::unique_ptr<char[]> stack = std::move(f->stack);
    *f = Fiber{};
    f->ub = std::move(ub), f->ub_init = std::move(ub_init), f->stack = std::move(stack);
    return f;
}

inline void fiber_entry() {
    Coop& c = coop();
    Fiber& f = *c.fibers[size_t(c.cur)];
    try {
        c.body(f.idx);
        f.state = FiberState::Done;
    } catch (const KernelAbort&) {
        f.state = FiberState::Aborted;
        c.status = protocol::kExitAborted;
    }
    // Returning follows uc_link back to the scheduler.
}

inline void fiber_resume(Fiber& f) {
    Coop& c = coop();
    c.cur = f.idx;
    std::swap(rt().block, f.st);
    vregs() = f.regs;
    rt().last = f.last;
    swapcontext(&c.sched, &f.ctx);
    f.regs = vregs();
    f.last = rt().last;
    std::swap(rt().block, f.st);
    c.cur = -1;
}

// Called by SyncAll inside a fiber: park this block until `need` blocks wait at the barrier.
inline void fiber_wait(SrcLoc loc, int need) {
    Coop& c = coop();
    Fiber& f = *c.fibers[size_t(c.cur)];
    f.state = FiberState::Waiting;
    f.wait_at = loc;
    f.need = need;
    swapcontext(&f.ctx, &c.sched);
}

// rt().poll while the runner is active: park this block at a GM poll until the others have run.
inline void fiber_poll(SrcLoc loc, const std::string& why, int budget) {
    Coop& c = coop();
    Fiber& f = *c.fibers[size_t(c.cur)];
    f.state = FiberState::Polling;
    f.wait_at = loc;
    f.why = why;
    f.budget = budget;
    swapcontext(&f.ctx, &c.sched);
}

// How a finding names the running core: "block 3" in a vector (or cube) launch; in a mixed
// launch "AIV 3 (AI Core 1, sub-block 1)" or "AIC 1", since AIC 1 and AIV 1 are different cores.
inline std::string mixed_core_name(int32_t core, int idx, int group, int sub_idx) {
    if (core == 1) return format("AIC %d", idx);
    return format("AIV %d (AI Core %d, sub-block %d)", idx, group, sub_idx);
}
inline std::string core_name(const BlockState& b) {
    if (!coop().active || !coop().mixed) return format("block %d", b.idx);
    return mixed_core_name(b.core, b.idx, b.group, b.sub_idx);
}

// Reports every parked block once the blocks can no longer move: pollers at their poll, waiters
// at their barrier.
inline void coop_deadlock(int blocks) {
    Coop& c = coop();
    int waiting = 0, need = 0, live = 0;
    for (auto& f : c.fibers) {
        if (f->state == FiberState::Waiting) ++waiting, need = std::max(need, f->need);
        if (f->state != FiberState::Done) ++live;
    }
    for (auto& f : c.fibers) {
        std::swap(rt().block, f->st);
        if (f->state == FiberState::Polling) {
            record_fault("flag-deadlock", Severity::Error, f->wait_at,
                         format("%s %s: on the device it waits here forever", core_name(rt().block).c_str(), f->why.c_str()));
        } else if (f->state == FiberState::Waiting) {
            record_fault("flag-deadlock", Severity::Error, f->wait_at,
                         format("SyncAll waits for %d blocks, but only %d reach it: %d block(s) finished without "
                                "calling it (the blocks call SyncAll a different number of times), in block %d. "
                                "Every block must run the same SyncAll calls, whatever its share of the work",
                                need, waiting, blocks - live, f->idx));
        }
        std::swap(rt().block, f->st);
    }
    c.status = protocol::kExitAborted;
}

// One round: every runnable block runs until it finishes, parks at a barrier or polls. Whether
// anything moved: a GM store, a block that finished or reached a barrier, a poll that succeeded.
inline bool coop_round() {
    Coop& c = coop();
    uint64_t epoch = rt().gm_epoch, xepoch = rt().xflag_epoch;
    bool moved = false;
    for (auto& f : c.fibers) {
        if (c.status != 0) break;
        if (f->state != FiberState::Ready && f->state != FiberState::Polling) continue;
        bool was_polling = f->state == FiberState::Polling;
        std::string before = was_polling ? f->why : std::string();
        SrcLoc at = f->wait_at;
        fiber_resume(*f);
        bool same_poll = was_polling && f->state == FiberState::Polling && f->wait_at.line == at.line &&
                         f->wait_at.file == at.file && f->why == before;
        if (!same_poll) moved = true;
    }
    if (rt().gm_epoch != epoch || rt().xflag_epoch != xepoch) moved = true;
    for (auto& f : c.fibers) {
        if (f->state != FiberState::Polling) f->stalls = 0;
        else f->stalls = moved ? 0 : f->stalls + 1;
    }
    return moved;
}

// Runs one launch's cores (`cores`, in the order the scheduler visits them) as fibers: body(f)
// runs fiber f with rt().block set up as the sequential runner would (index, count, core, its own
// local memory filled with `ub_fill`). done(state) is then called for each fiber in order, with
// that fiber's final state in rt().block (for its trace). Returns 0, or 3 when a core stopped on
// a fault or the cores deadlocked at a barrier, a poll or a cross-core flag.
template <class Body, class Done>
inline int coop_run(const std::vector<CoreSlot>& cores, bool mixed, uint8_t ub_fill, Body body, Done done) {
    Coop& c = coop();
    c = Coop{};
    c.active = true;
    c.mixed = mixed;
    c.body = body;
    for (size_t i = 0; i < cores.size(); ++i) {
        const CoreSlot& k = cores[i];
        std::unique_ptr<Fiber> f = fresh_fiber();
        f->idx = int(i);
        f->ub.assign(local_bytes(), ub_fill);
        f->ub_init.assign(local_bytes(), 0);
        start_core(f->st, k, int(i));
        f->st.ub = f->ub.data();
        f->st.ub_init = f->ub_init.data();
        f->regs = VecRegs{};
        f->regs.block = k.idx;
        if (!f->stack) f->stack.reset(new char[kFiberStackBytes]);
        getcontext(&f->ctx);
        f->ctx.uc_stack.ss_sp = f->stack.get();
        f->ctx.uc_stack.ss_size = kFiberStackBytes;
        f->ctx.uc_link = &c.sched;
        makecontext(&f->ctx, fiber_entry, 0);
        c.fibers.push_back(std::move(f));
    }
    rt().poll = fiber_poll;
    for (;;) {
        bool moved = coop_round();
        if (c.status != 0) break;
        int waiting = 0, need = 0, polling = 0;
        bool all_stalled = true;
        for (auto& f : c.fibers) {
            if (f->state == FiberState::Waiting) ++waiting, need = std::max(need, f->need);
            if (f->state == FiberState::Polling) ++polling, all_stalled &= f->stalls >= f->budget;
        }
        if (waiting > 0 && waiting >= need) {
            for (auto& f : c.fibers)
                if (f->state == FiberState::Waiting) f->state = FiberState::Ready;
            continue;
        }
        if (polling > 0 && (moved || !all_stalled)) continue;
        if (waiting == 0 && polling == 0) break;
        // Every block still running waits at a barrier that can no longer fill, or polls GM that
        // no block will write again: on the device the cores spin there forever.
        coop_deadlock(int(cores.size()));
        break;
    }
    rt().poll = nullptr;
    for (auto& f : c.fibers) {
        std::swap(rt().block, f->st);
        done(rt().block);
        std::swap(rt().block, f->st);
    }
    int status = c.status;
    c.active = false;
    for (auto& f : c.fibers) {
        if (spare_fibers().size() >= kSpareFibers) break;
        f->st = BlockState{};  // its trace and slots go now
        spare_fibers().push_back(std::move(f));
    }
    c.fibers.clear();
    return status;
}

// `blocks` AIV cores: a vector kernel's launch.
template <class Body, class Done>
inline int coop_run(int blocks, uint8_t ub_fill, Body body, Done done) {
    std::vector<CoreSlot> cores(size_t(std::max(blocks, 0)));
    for (int b = 0; b < blocks; ++b) cores[size_t(b)].idx = b, cores[size_t(b)].num = blocks;
    return coop_run(cores, false, ub_fill, body, done);
}

}  // namespace sim
}  // namespace sage
