// Cooperative block runner: every block of a launch as a fiber (ucontext) with its own stack,
// Unified Buffer and core registers, so a cross-block barrier (SyncAll) can park a block until
// all blocks reach it. Blocks still run one at a time, in index order between barriers, so a
// run stays deterministic; only the points where they switch are the barriers.
//
// The sequential runner in harness.h runs each block to its end before the next starts; there
// a SyncAll with more than one block cannot be honoured (the later blocks have not run yet) and
// reports so. coop_run() is the runner a harness uses instead when a kernel calls SyncAll.
#pragma once

#include <ucontext.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "protocol.h"
#include "vec.h"

namespace sage {
namespace sim {

enum class FiberState : uint8_t { Ready, Waiting, Done, Aborted };

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
};

struct Coop {
    bool active = false;
    std::vector<std::unique_ptr<Fiber>> fibers;
    int cur = -1;
    ucontext_t sched{};
    std::function<void(int)> body;
    int status = 0;
};

inline Coop& coop() {
    static Coop c;
    return c;
}

// A kernel's stack frames are small; 1 MB each keeps 64 blocks well inside the run's
// address-space limit.
constexpr size_t kFiberStackBytes = 1u << 20;

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

// Runs `blocks` blocks: body(b) runs block b with rt().block set up as the sequential runner
// would (index, count, its own UB filled with `ub_fill`). done(state) is then called for each
// block in index order, with that block's final state in rt().block (for its trace). Returns 0,
// or 3 when a block stopped on a fault or the blocks deadlocked at a barrier.
template <class Body, class Done>
inline int coop_run(int blocks, uint8_t ub_fill, Body body, Done done) {
    Coop& c = coop();
    c = Coop{};
    c.active = true;
    c.body = body;
    for (int b = 0; b < blocks; ++b) {
        auto f = std::make_unique<Fiber>();
        f->idx = b;
        f->ub.assign(rt().ub_bytes, ub_fill);
        f->ub_init.assign(rt().ub_bytes, 0);
        f->st.idx = b;
        f->st.num = blocks;
        f->st.ub = f->ub.data();
        f->st.ub_init = f->ub_init.data();
        f->regs = VecRegs{};
        f->regs.block = b;
        f->stack.reset(new char[kFiberStackBytes]);
        getcontext(&f->ctx);
        f->ctx.uc_stack.ss_sp = f->stack.get();
        f->ctx.uc_stack.ss_size = kFiberStackBytes;
        f->ctx.uc_link = &c.sched;
        makecontext(&f->ctx, fiber_entry, 0);
        c.fibers.push_back(std::move(f));
    }
    for (;;) {
        for (auto& f : c.fibers) {
            if (f->state == FiberState::Ready && c.status == 0) fiber_resume(*f);
        }
        if (c.status != 0) break;
        int waiting = 0, need = 0, live = 0;
        for (auto& f : c.fibers) {
            if (f->state == FiberState::Waiting) ++waiting, need = std::max(need, f->need);
            if (f->state != FiberState::Done) ++live;
        }
        if (waiting == 0) break;
        if (waiting >= need) {
            for (auto& f : c.fibers)
                if (f->state == FiberState::Waiting) f->state = FiberState::Ready;
            continue;
        }
        // Every block still running waits at a barrier that can no longer fill: on the device
        // the cores spin there forever.
        for (auto& f : c.fibers) {
            if (f->state != FiberState::Waiting) continue;
            std::swap(rt().block, f->st);
            int finished = blocks - live;
            record_fault("flag-deadlock", Severity::Error, f->wait_at,
                         format("SyncAll waits for %d blocks, but only %d reach it: %d block(s) finished without "
                                "calling it (the blocks call SyncAll a different number of times), in block %d. "
                                "Every block must run the same SyncAll calls, whatever its share of the work",
                                need, waiting, finished, f->idx));
            std::swap(rt().block, f->st);
        }
        c.status = protocol::kExitAborted;
        break;
    }
    for (auto& f : c.fibers) {
        std::swap(rt().block, f->st);
        done(rt().block);
        std::swap(rt().block, f->st);
    }
    int status = c.status;
    c.active = false;
    c.fibers.clear();
    return status;
}

}  // namespace sim
}  // namespace sage
