// kernel_operator_common_intf.h: the task-level sync pair of SuperKernel's Early-Start
// (WaitPreTaskEnd, SetNextTaskStart), the deprecated InitOutput, the system workspace
// (SetSysWorkspace, GetSysWorkSpacePtr, GetUserWorkspace) and CANN 6's `tik2` namespace.
//
// Outside a SuperKernel the pair orders nothing: a launch starts after the previous one ends
// and the next starts after it. What the doc page asks is checked: each block calls each of
// them exactly once (another count mismatches the device's sync counters and hangs it), and
// WaitPreTaskEnd comes before the first copy (what runs before it may overlap the previous
// task, which could still be writing that GM).
#pragma once

#include <cstring>

#include "../sage_sim/vec.h"

namespace AscendC {

namespace detail {
inline void task_sync_once(int& count, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (++count > 1) {
        fail("api-misuse", loc,
             "%s called %d times in block %d: each block must call it exactly once (SuperKernel counts one per "
             "core; a second one leaves a sync unmatched and the device hangs)",
             api, count, blk().idx);
    }
    trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
}
// Whether this block has issued a DMA transfer yet (from its trace).
inline bool copied_yet() {
    for (const auto& r : sage::sim::blk().trace)
        if (r.kind == sage::sim::TraceKind::Instr && (r.pipe == Pipe::MTE2 || r.pipe == Pipe::MTE3)) return true;
    return false;
}
}  // namespace detail

// What comes after it waits for the previous task (SuperKernel sub-kernel) to end.
template <bool FORCE = false>
__aicore__ inline void WaitPreTaskEnd(SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    detail::task_sync_once(blk().wait_pre_task_calls, "WaitPreTaskEnd", loc);
    if (detail::copied_yet()) {
        report("api-misuse", Severity::Warning, loc,
               "WaitPreTaskEnd after the block's first DataCopy, in block %d: in a SuperKernel the instructions "
               "before it run alongside the previous sub-kernel, which may still be writing the GM they read. "
               "Call it before the first copy",
               blk().idx);
    }
}

// What comes after it may overlap the next task: call it after the last copy.
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX, bool FORCE = false>
__aicore__ inline void SetNextTaskStart(SAGE_LOC) {
    static_assert(AIV_PIPE == PIPE_MTE2 || AIV_PIPE == PIPE_MTE3 || AIV_PIPE == PIPE_S || AIV_PIPE == PIPE_V,
                  "SetNextTaskStart's AIV_PIPE must be PIPE_MTE2, PIPE_MTE3, PIPE_S or PIPE_V");
    sage::sim::touch(loc);
    detail::task_sync_once(sage::sim::blk().set_next_task_calls, "SetNextTaskStart", loc);
}

// Deprecated (asc-devkit: use Fill): `size` elements of GM set to `value` (staged through UB
// by the vector unit and written by MTE3 on the device). Blocks that clear the same workspace
// with the same value duplicate work but do not race.
template <typename T>
__aicore__ inline void InitOutput(GlobalTensor<T> gmWorkspaceAddr, uint32_t size, T value = 0, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    T* p = gmWorkspaceAddr.addr_;
    GmBuffer* b = gm_check(p, uint64_t(size) * sizeof(T), loc, true, "InitOutput", sizeof(T), gmWorkspaceAddr.gm_);
    bool identical = b && b->tracked;
    for (uint32_t i = 0; i < size; ++i) {
        identical = identical && std::memcmp(&p[i], &value, sizeof(T)) == 0;
        p[i] = value;
    }
    gm_wrote(b, p, uint64_t(size) * sizeof(T), loc, "InitOutput", sizeof(T), identical);
    trace_instr(Pipe::V, "Duplicate", dtype_name<T>(), size, uint64_t(size) * sizeof(T), loc);
    trace_instr(Pipe::MTE3, "InitOutput", dtype_name<T>(), size, uint64_t(size) * sizeof(T), loc);
    trace_gm_shape(p, 1);
}

// The system workspace the advanced APIs use, at the start of the kernel's workspace: the
// first SetSysWorkspace fixes it (the framework does when it launches with a workspace).
__aicore__ inline void SetSysWorkspace(GM_ADDR workspace, SAGE_LOC) {
    sage::sim::touch(loc);
    if (workspace == nullptr) sage::sim::fail("api-misuse", loc, "SetSysWorkspace(nullptr): pass the kernel's workspace");
    if (sage::sim::blk().sys_workspace == nullptr) sage::sim::blk().sys_workspace = workspace;
}
__aicore__ inline GM_ADDR GetSysWorkSpacePtr() { return reinterpret_cast<GM_ADDR>(sage::sim::blk().sys_workspace); }

// The system workspace reserves this much at the start of the workspace (impl's RESERVED_WORKSPACE).
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 2002
constexpr size_t RESERVED_WORKSPACE = 2 * 1024 * 1024;
#else
constexpr size_t RESERVED_WORKSPACE = 16 * 1024 * 1024;
#endif

// The user's part of the workspace: past the reserved system part (CANN's CPU-debug build
// returns `workspace` itself; the device does not, so a workspace sized for the user's part
// alone is too small there). Without SetSysWorkspace the system part starts at `workspace`.
__aicore__ inline GM_ADDR GetUserWorkspace(GM_ADDR workspace, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    uint8_t* sys = blk().sys_workspace ? reinterpret_cast<uint8_t*>(blk().sys_workspace)
                                       : reinterpret_cast<uint8_t*>(workspace);
    if (sys == nullptr) fail("api-misuse", loc, "GetUserWorkspace(nullptr) with no SetSysWorkspace: pass the kernel's workspace");
    GmBuffer* b = gm_find(sys);
    if (b && uint64_t(b->base + b->bytes - sys) < RESERVED_WORKSPACE) {
        report("api-misuse", Severity::Error, loc,
               "GetUserWorkspace skips the %zu MB system workspace, but the workspace holds %llu bytes from there "
               "(in block %d): the user's part starts past its end. Allocate the user's size plus %zu MB "
               "(GetLibApiWorkSpaceSize on the host)",
               RESERVED_WORKSPACE >> 20, (unsigned long long)(b->base + b->bytes - sys), blk().idx,
               RESERVED_WORKSPACE >> 20);
    }
    return reinterpret_cast<GM_ADDR>(sys + RESERVED_WORKSPACE);
}

}  // namespace AscendC

// CANN declares GetSysWorkSpacePtr at global scope (kernel_operator_swap_mem_intf.h): kernels call
// it unqualified, inside templates too.
using AscendC::GetSysWorkSpacePtr;

// CANN 6 (TIK C++) spelled the namespace tik2; older public samples still do.
namespace tik2 = AscendC;
