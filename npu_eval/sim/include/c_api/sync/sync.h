// The C API's synchronisation inside a core (asc-devkit include/c_api/sync/sync.h), for 910B:
// flags between two pipes (asc_sync_notify/asc_sync_wait: set_flag/wait_flag), barriers on one
// pipe (asc_sync_pipe) or on all (asc_sync, asc_sync_vec), and the MTE2/MTE3 hand-offs. The flags
// and barriers are the C++ API's (SetFlag/WaitFlag/PipeBarrier): a wait with no notify before it
// is a flag-deadlock at its line, and the trace orders the pipes for the missing-sync check.
// The cross-core arrive/wait forms are not emulated: the emulator runs vector kernels only.
#pragma once

#include "../../basic_api/kernel_operator_block_sync_intf.h"

#define asc_sync_notify(pipe, tpipe, id) set_flag((pipe), (tpipe), (id))
#define asc_sync_wait(pipe, tpipe, id) wait_flag((pipe), (tpipe), (id))
#define asc_sync_pipe(pipe) pipe_barrier((pipe))

namespace sage {
namespace sim {
namespace capi {
// What asc_sync_mte2/asc_sync_mte3 issue: flags from `from` to the other two pipes, waited at
// once, then a barrier on `from`.
inline void sync_mte(pipe_t from, pipe_t other, int id, SrcLoc loc) {
    auto ev = static_cast<event_t>(id);
    set_flag(from, other, ev, loc);
    set_flag(from, PIPE_V, ev, loc);
    wait_flag(from, other, ev, loc);
    wait_flag(from, PIPE_V, ev, loc);
    pipe_barrier(from, loc);
}
}  // namespace capi
}  // namespace sim
}  // namespace sage

// What asc_sync_data_barrier waits for: every memory access, GM, UB (DSB_SEQ is reserved).
enum mem_dsb_t : uint8_t { DSB_ALL = 0, DSB_DDR, DSB_UB, DSB_SEQ };

// The scalar unit waits for the core's outstanding memory accesses. The emulator completes each
// access in program order, so there is nothing to wait for; the trace records the instruction.
__aicore__ inline void asc_sync_data_barrier(mem_dsb_t arg, SAGE_LOC) {
    (void)arg;
    sage::sim::touch(loc);
    sage::sim::trace_instr(sage::sim::Pipe::S, "asc_sync_data_barrier", "", 0, 0, loc);
}

__aicore__ inline void asc_sync_vec(SAGE_LOC) { pipe_barrier(PIPE_ALL, loc); }
__aicore__ inline void asc_sync_mte3(int id, SAGE_LOC) { sage::sim::capi::sync_mte(PIPE_MTE3, PIPE_MTE2, id, loc); }
__aicore__ inline void asc_sync_mte2(int id, SAGE_LOC) { sage::sim::capi::sync_mte(PIPE_MTE2, PIPE_MTE3, id, loc); }
__aicore__ inline void asc_sync(SAGE_LOC) { pipe_barrier(PIPE_ALL, loc); }
// The first C API's spelling of asc_sync_pipe.
__aicore__ inline void asc_sync(pipe_t pipe, SAGE_LOC) { pipe_barrier(pipe, loc); }
