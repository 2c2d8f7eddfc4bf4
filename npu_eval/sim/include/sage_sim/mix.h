// Mixed AIC/AIV kernels: the cores a launch runs for its kernel type, and the cross-core flags
// (CrossCoreSetFlag/CrossCoreWaitFlag) between them. docs/cube.md, "Mixed kernels".
//
// On the 910B an AI Core is one cube core (AIC) and two vector cores (AIV). A launch of blockDim
// N of a KERNEL_TYPE_MIX_AIC_1_2 kernel runs N AIC and 2N AIV cores: GetBlockIdx is 0..N-1 on the
// AICs and 0..2N-1 on the AIVs (AIV 2g and 2g+1 belong to AI Core g, sub-blocks 0 and 1),
// GetBlockNum is N on both, GetTaskRatio 1 on the AIC and 2 on the AIV. KERNEL_TYPE_MIX_AIC_1_1
// pairs one AIV with each AIC; AIC_ONLY and MIX_AIC_1_0 run N AICs, AIV_ONLY and MIX_AIV_1_0 N AIVs.
//
// Run model: every core of the launch is a fiber of the cooperative runner (coop.h), visited in
// the order of launch_cores (AI Core 0's AIC, its AIVs, AI Core 1's AIC, ...). A core runs until
// it finishes or waits (a cross-core flag with nothing pending, SyncAll, a GM poll); the switch
// points are those waits only, so the same kernel and inputs give the same run and report. A
// wait no core can satisfy any more is a flag-deadlock at the wait's line.
//
// The seam for APIs built on cross-core flags (the high-level matrix API's AIC/AIV hand-over): cross_set()
// and cross_wait() below are the flags with their documented semantics, callable from any API
// with the caller's location.
#pragma once

#include <array>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "coop.h"
#include "../utils/common_types.h"

// The launch's kernel type: the build defines it from the kernel file's KERNEL_TASK_TYPE_DEFAULT
// (npu_eval/build.py). A kernel that declares none is a vector kernel.
#ifndef SAGE_SIM_KERNEL_TYPE
#define SAGE_SIM_KERNEL_TYPE KERNEL_TYPE_AIV_ONLY
#define SAGE_SIM_KERNEL_TYPE_UNDECLARED 1
#endif

namespace sage {
namespace sim {

constexpr int kCrossFlagIds = 16;     // flag ids 0-15 per core in modes 0, 1 and 2 (low 4 bits kept)
constexpr int kCrossCounterMax = 15;  // each flag's counter counts 0-15; past it the device stops

// AICs and AIVs per AI Core for a kernel type; 310P's AICORE kinds run one (vector) core each.
struct KernelShape {
    int aic = 0, aiv = 1;
};
inline KernelShape kernel_shape(int type) {
    switch (type) {
        case KERNEL_TYPE_AIC_ONLY:
        case KERNEL_TYPE_MIX_AIC_1_0: return {1, 0};
        case KERNEL_TYPE_MIX_AIC_1_1: return {1, 1};
        case KERNEL_TYPE_MIX_AIC_1_2: return {1, 2};
        default: return {0, 1};
    }
}
inline bool kernel_is_mixed(int type) { return kernel_shape(type).aic && kernel_shape(type).aiv; }

// The cores a launch of `block_dim` runs, in the order the scheduler visits them.
inline std::vector<CoreSlot> launch_cores(int type, int block_dim) {
    KernelShape k = kernel_shape(type);
    std::vector<CoreSlot> v;
    for (int g = 0; g < block_dim; ++g) {
        if (k.aic) v.push_back(CoreSlot{AscendC::AIC, g, block_dim, g, 0, 1, 1});
        for (int s = 0; s < k.aiv; ++s) v.push_back(CoreSlot{AscendC::AIV, g * k.aiv + s, block_dim, g, s, k.aiv, k.aiv});
    }
    return v;
}

// The sets of one (mode, setting core type, AI Core or all, flag) towards the waiters' increments.
// Every setting core must set once per increment (the key-features page: "M AIVs each set once"),
// so a core's n-th set counts towards the n-th increment, however far it runs ahead of the others.
struct CrossArrivals {
    std::map<size_t, int> sets;  // per setting fiber: its sets so far
    std::vector<int> ids;        // per increment: the id of its synchronisation
    int fired = 0;               // increments made
};

// Cross-core flag state of one launch. Each core has a counter per flag id; it is the queue of
// increments not yet consumed, each carrying the id of the synchronisation that made it (the
// trace's `xset`/`xwait` records share it, so the cost model knows which set a wait waited for).
struct CrossCore {
    std::vector<CoreSlot> cores;  // per fiber
    std::vector<std::array<std::deque<int>, kCrossFlagIds>> pending;
    std::map<std::tuple<int, int, int, int>, CrossArrivals> arrivals;  // (mode, core type, AI Core or -1, flag)
    int next_id = 1;
};
inline CrossCore& cross() {
    static CrossCore c;
    return c;
}

// KERNEL_TASK_TYPE_DEFAULT in the kernel body: the build chose the launch's cores from the first
// one in the kernel file; a kernel of that file declaring another type would run on wrong cores.
inline void declare_kernel_type(int type, SAGE_LOC) {
    touch(loc);
#ifdef SAGE_SIM_KERNEL_TYPE_UNDECLARED
    if (type == KERNEL_TYPE_AIV_ONLY || type == KERNEL_TYPE_MIX_AIV_1_0) return;
#endif
    if (type != SAGE_SIM_KERNEL_TYPE)
        fail("not-emulated", loc,
             "this kernel declares kernel type %d, but the launch runs the cores of type %d (the first "
             "KERNEL_TASK_TYPE_DEFAULT in the kernel file, or none): put kernels of different types in different "
             "files",
             type, int(SAGE_SIM_KERNEL_TYPE));
}

// Runs a launch of `block_dim` of a kernel of `type` (the seam a harness calls): every core as a
// cooperative fiber, flags reset. Returns as coop_run does.
template <class Body, class Done>
inline int mix_run(int type, int block_dim, uint8_t ub_fill, Body body, Done done) {
    CrossCore& x = cross();
    x = CrossCore{};
    x.cores = launch_cores(type, block_dim);
    x.pending.resize(x.cores.size());
    std::vector<std::string> names;
    for (const CoreSlot& c : x.cores) names.push_back(mixed_core_name(c.core, c.idx, c.group, c.sub_idx));
    gm_order_start(std::move(names), kernel_is_mixed(type));
    int status = coop_run(x.cores, kernel_is_mixed(type), ub_fill, body, done);
    gm_order_stop();
    return status;
}

namespace detail {

inline const char* const kModeText[] = {"mode 0, all cores of its type", "mode 1, the AIVs of its AI Core",
                                        "mode 2, between the AIC and the AIVs of its AI Core"};

inline void cross_runner(const char* api, SrcLoc loc) {
    if (cross().cores.empty() || !coop().active)
        fail("crash", loc, "%s ran outside the cooperative runner: the build switches to it when the kernel file "
             "names %s; call it from the kernel file, or build with -DSAGE_SIM_COOP=1", api, api);
}

// The mode, pipe and kernel type CrossCoreSetFlag needs (the API pages' tables).
inline void cross_check(const char* api, int mode, Pipe pipe, SrcLoc loc) {
    if (mode < 0 || mode > 2)
        fail("api-misuse", loc, "%s<%d, ...>: the 910B has modes 0, 1 and 2 (mode 4 is Ascend 950's)", api, mode);
    if (pipe == Pipe::S || pipe == Pipe::ALL)
        fail("api-misuse", loc, "%s<%d, PIPE_%s>: the pipe must be PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 "
             "or PIPE_FIX", api, mode, pipe_name(pipe));
    cross_runner(api, loc);
    int type = SAGE_SIM_KERNEL_TYPE;
#ifndef SAGE_SIM_KERNEL_TYPE_UNDECLARED
    if (type == KERNEL_TYPE_AIV_ONLY || type == KERNEL_TYPE_AIC_ONLY)
        fail("api-misuse", loc, "%s in a KERNEL_TYPE_%s kernel: such a launch does not start the cross-core "
             "scheduler, so the flags do nothing on the device. Declare KERNEL_TYPE_MIX_%s_1_0 (mode 0) or a "
             "mixed type", api, type == KERNEL_TYPE_AIV_ONLY ? "AIV_ONLY" : "AIC_ONLY",
             type == KERNEL_TYPE_AIV_ONLY ? "AIV" : "AIC");
#endif
    if (mode > 0 && !coop().mixed)
        fail("api-misuse", loc, "%s in %s needs a mixed kernel (KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2) "
             "or _1_1): this one runs one kind of core", api, kModeText[mode]);
    if (mode == 1 && blk().core == AscendC::AIC)
        fail("api-misuse", loc, "%s in %s on an AIC: mode 1 synchronises the AIVs of an AI Core", api,
             kModeText[mode]);
}

// One increment of `flag` on core `f`, from synchronisation `id`.
inline void cross_bump(size_t f, int flag, int id, SrcLoc loc) {
    CrossCore& x = cross();
    auto& q = x.pending[f][size_t(flag)];
    q.push_back(id);
    if (int(q.size()) > kCrossCounterMax) {
        const CoreSlot& c = x.cores[f];
        BlockState who;
        who.idx = c.idx, who.core = c.core, who.group = c.group, who.sub_idx = c.sub_idx;
        fail("api-misuse", loc, "CrossCoreSetFlag(%d): the flag's counter on %s would reach %d, but it counts 0-%d: "
             "its cores set the flag more often than %s waits for it. On the device this raises an error and "
             "stops the kernel; pair each set with a CrossCoreWaitFlag", flag, core_name(who).c_str(),
             int(q.size()), kCrossCounterMax, core_name(who).c_str());
    }
}

// The fibers `mode` releases when core `me` sets a flag, and how many sets that takes.
inline std::vector<size_t> cross_targets(int mode, const CoreSlot& me, int* need, std::tuple<int, int, int, int>* key,
                                         int flag) {
    const auto& cores = cross().cores;
    std::vector<size_t> out;
    int want = mode == 0 ? me.core : (mode == 2 && me.core == AscendC::AIV ? AscendC::AIC : AscendC::AIV);
    for (size_t i = 0; i < cores.size(); ++i)
        if (cores[i].core == want && (mode == 0 || cores[i].group == me.group)) out.push_back(i);
    *key = std::make_tuple(mode, me.core, mode == 0 ? -1 : me.group, flag);
    if (mode == 0) {
        *need = 0;
        for (const auto& c : cores) *need += c.core == me.core;
    } else {
        *need = me.core == AscendC::AIV ? me.sub_num : 1;  // an AIC's set is complete alone
    }
    return out;
}

inline std::string cross_waits_for(int flag) {
    return format("waits at CrossCoreWaitFlag(%d) for flag %d, which no core sets for it any more (its %s in mode "
                  "2, its AI Core's other AIV in mode 1, every %s in mode 0)", flag, flag,
                  blk().core == AscendC::AIC ? "AIVs" : "AIC", blk().core == AscendC::AIC ? "AIC" : "AIV");
}

// Before a set bumps target `t`'s full counter: the cores run one at a time, so a core that only
// sets (an AIC handing C blocks to its AIVs, matmul_gelu_high_performance) would run far ahead of
// its waiters, which on the device keep up while it computes. It yields until `t` takes one;
// a `t` that finished never will, and then the bump is the overflow the device stops on.
inline void cross_room(const std::vector<size_t>& targets, int flag, SrcLoc loc) {
    for (size_t t : targets) {
        for (;;) {
            FiberState st = coop().fibers[t]->state;
            if (int(cross().pending[t][size_t(flag)].size()) < kCrossCounterMax || st == FiberState::Done ||
                st == FiberState::Aborted)
                break;
            const CoreSlot& c = cross().cores[t];
            rt().poll(loc, format("sets flag %d, but the flag's counter on %s is full (%d) and that core, stuck "
                                  "elsewhere, takes none (the set would overflow it)", flag,
                                  mixed_core_name(c.core, c.idx, c.group, c.sub_idx).c_str(), kCrossCounterMax), 1);
        }
    }
}

}  // namespace detail

// A set of `flag_id` in `mode` from the running core, unchecked (cross_set checks the user's call;
// SyncAll sets its own flags on every pipe).
inline void cross_signal(int mode, Pipe pipe, uint16_t flag_id, SrcLoc loc) {
    CrossCore& x = cross();
    int flag = flag_id & (kCrossFlagIds - 1);
    const CoreSlot me = x.cores[size_t(blk().fiber)];
    int need = 1;
    std::tuple<int, int, int, int> key;
    std::vector<size_t> targets = detail::cross_targets(mode, me, &need, &key, flag);
    detail::cross_room(targets, flag, loc);
    CrossArrivals& arr = x.arrivals[key];
    size_t nth = size_t(arr.sets[size_t(blk().fiber)]++);
    if (nth == arr.ids.size()) arr.ids.push_back(x.next_id++);
    int id = arr.ids[nth];
    trace_event(TraceKind::XSet, pipe, "CrossCoreSetFlag", loc, flag, id);
    ++rt().xflag_epoch;
    gm_order_release(id);  // the increment carries what this core stored so far
    int ready = 0;  // setting cores that have set for the next increment
    for (const auto& s : arr.sets) ready += s.second > arr.fired;
    if (ready < need) return;
    int made = arr.ids[size_t(arr.fired++)];
    for (size_t t : targets) detail::cross_bump(t, flag, made, loc);
    gm_order_publish(made, int(targets.size()));
}

// CrossCoreSetFlag<mode, pipe>(flagId) from the running core, once its pipe's earlier work is done.
inline void cross_set(int mode, Pipe pipe, uint16_t flag_id, SrcLoc loc) {
    touch(loc);
    detail::cross_check("CrossCoreSetFlag", mode, pipe, loc);
    cross_signal(mode, pipe, flag_id, loc);
}

// CrossCoreWaitFlag(flagId): the running core waits (the other cores run) until its counter for the
// flag is non-zero, then takes one. On the 910B the mode and pipe of a wait have no effect (the
// API page): it holds every pipe of the core, whichever set released it.
inline void cross_wait(uint16_t flag_id, SrcLoc loc) {
    touch(loc);
    detail::cross_runner("CrossCoreWaitFlag", loc);
    int flag = flag_id & (kCrossFlagIds - 1);
    for (;;) {
        auto& q = cross().pending[size_t(blk().fiber)][size_t(flag)];
        if (!q.empty()) {
            int id = q.front();
            q.pop_front();
            gm_retag_writers();    // its stores no longer race with the setters' earlier ones
            gm_order_acquire(id);  // its reads are ordered after what the setters stored before setting
            trace_event(TraceKind::XWait, Pipe::ALL, "CrossCoreWaitFlag", loc, flag, id);
            return;
        }
        rt().poll(loc, detail::cross_waits_for(flag), 1);
    }
}

// The hardware SyncAll of a mixed launch, on the flags it reserves (11-14, the CrossCoreSetFlag
// page). isAIVOnly: every AIV (or, called on an AIC, every AIC) meets in mode 0. Otherwise the
// three steps of the SyncAll page: each AIC waits for its AIVs (mode 2), the AICs meet (mode 0),
// then each AIC releases its AIVs (mode 2).
constexpr uint16_t kSyncAllFlagSide = 11, kSyncAllFlagUp = 12, kSyncAllFlagDown = 13, kSyncAllFlagAic = 14;
inline void mixed_sync_all(bool aiv_only, SrcLoc loc) {
    bool aic = blk().core == AscendC::AIC;
    if (aiv_only) {
        cross_signal(0, Pipe::ALL, kSyncAllFlagSide, loc);
        cross_wait(kSyncAllFlagSide, loc);
    } else if (aic) {
        cross_wait(kSyncAllFlagUp, loc);
        cross_signal(0, Pipe::ALL, kSyncAllFlagAic, loc);
        cross_wait(kSyncAllFlagAic, loc);
        cross_signal(2, Pipe::ALL, kSyncAllFlagDown, loc);
    } else {
        cross_signal(2, Pipe::ALL, kSyncAllFlagUp, loc);
        cross_wait(kSyncAllFlagDown, loc);
    }
}

}  // namespace sim
}  // namespace sage
