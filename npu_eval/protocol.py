"""The contract between the C++ harness (sim/include/sage_sim/protocol.h, used by harness.h,
launch.h, runtime.h and sandbox.h) and the Python side (run.py, trace.py, cost_model.py,
program.py, sandbox.py): exit codes, file names, TSV columns and the event-to-pipe map.

tests/test_protocol.py compiles a program that prints protocol.h's constants and checks that
they equal these; change both sides together.
"""

from __future__ import annotations

# ---- exit codes of a harness run ----
EXIT_ABORTED = 3          # a fault stopped the kernel (KernelAbort); its faults.tsv says which
EXIT_BAD_MANIFEST = 4     # the harness could not read its manifest or map its buffers
EXIT_TIMEOUT = 124        # SIGTERM at the time limit: the harness wrote where the kernel was
EXIT_SIGNAL_BASE = 128    # 128 + N: died of signal N (after writing crash.tsv)

# ---- files a run leaves in its output folder ----
MANIFEST = "manifest.tsv"   # task mode: what the harness loads (block_dim, buffers, scalars, tiling, tiling key)
TRACE = "trace.tsv"         # one line per API call, see TRACE_COLUMNS
LOCS = "locs.tsv"           # location id -> source line, see LOCS_COLUMNS
FAULTS = "faults.tsv"       # findings, see FAULT_COLUMNS
CRASH = "crash.tsv"         # the finding of a fatal signal or a timeout, same columns
DONE = "done"               # written last: the harness reached its end
OUTPUT_PREFIX = "out_"      # out_<arg>.bin: an output buffer after the launch
WRITER_PREFIX = "writer_"   # writer_<arg>.bin: runs of bytes with the same last writer
# program mode (launch.h): each launch in LAUNCH_PREFIX<n>/, host findings beside them
LAUNCH_PREFIX = "launch_"
META = "meta.tsv"           # index, file, line, column, kernel, block_dim of one launch
HOST_FAULTS = "host_faults.tsv"
HOST_CRASH = "host_crash.tsv"
RTC_COMPILER = "rtc_compiler.txt"  # aclrtc: the compiler command line, one argument a line (sage_sim/rtc.h)
# A crash.tsv row with this code is no finding: its message holds "<pc> <exec_start>" (hex) of a
# kernel that died before its first Ascend C call, for symbolize.py to name the function.
CRASH_PC = "pc"

# ---- environment the sandbox gives the child ----
ENV_PROGRAM_OUT = "SAGE_PROGRAM_OUT"      # program mode: where launches write their folders
ENV_PROGRAM_TRACE = "SAGE_PROGRAM_TRACE"  # program mode: "1" to record traces
ENV_PROGRAM_VALUES = "SAGE_PROGRAM_VALUES"  # program mode: "0" skips the cube's arithmetic (run --estimate-only)
ENV_SECCOMP = "SAGE_SANDBOX_SECCOMP"      # "0": run the kernel without the seccomp filter

# What sandbox.h prints on stderr when the kernel runs without its seccomp filter.
SECCOMP_FAILED = "sage sandbox: the seccomp filter could not"
SECCOMP_ABSENT = "sage sandbox: no seccomp filter"

# ---- TSV columns ----
FAULT_COLUMNS = ("code", "severity", "file", "line", "block", "count", "message")
LOCS_COLUMNS = ("id", "line", "file")
TRACE_COLUMNS = ("kind", "pipe", "api", "dtype", "elems", "bytes", "loc", "a", "b",
                 "w_addr", "w_bytes", "r0_addr", "r0_bytes", "r1_addr", "r1_bytes",
                 "gm_addr", "gm_burst", "gm_gap")
# A GM<->UB DataCopy's GM span (trace.GmSpan): `b` bursts of gm_burst bytes from the absolute
# address gm_addr, gm_gap bytes apart; gm_burst 0 on every other record.
TRACE_BLOCK = "B"               # `B <idx>` starts a block's records
TRACE_TRUNCATED = "truncated"   # the block hit the record cap
# trace kinds, in the order of harness.h's table
TRACE_KINDS = ("I", "alloc", "free", "enque", "deque", "setflag", "waitflag", "barrier", "xset", "xwait", "unitflag")
# writer runs: (location id << WRITER_BLOCK_BITS) | (block + 1)
WRITER_BLOCK_BITS = 12

# ---- the Matmul API's scalar records (S pipe; adv_api/matmul/matmul.h) ----
# Each is costed by its own CostTable field (costs.py): a message's GM round trip on the calling AIV,
# the AIC server's handling of it, an object's Init, one K step of its Mmad loop, one GM -> L1 copy it
# issues. The dtype column is STATIC_TILING when the object's tiling is a compile-time constant.
MATMUL_MESSAGE = "MatmulMessage"
MATMUL_SERVE = "MatmulServe"
MATMUL_INIT = "MatmulInit"
MATMUL_KSTEP = "MatmulKStep"
MATMUL_COPY = "MatmulCopy"
STATIC_TILING = "static"

# ---- pipes and events ----
PIPES = ("S", "V", "MTE1", "MTE2", "MTE3", "M", "FIX")   # sage::sim::Pipe order
PIPE_ALL = 6  # pipe_t::PIPE_ALL, the barrier on every pipe
# HardEvent (kernel_common.h order) -> (the pipe that sets the flag, the pipe that waits on it)
EVENT_PIPES = (("MTE2", "MTE1"), ("MTE1", "MTE2"), ("MTE1", "M"), ("M", "MTE1"), ("MTE2", "V"), ("V", "MTE2"),
               ("MTE3", "V"), ("V", "MTE3"), ("M", "V"), ("V", "M"), ("V", "V"), ("MTE3", "MTE1"),
               ("MTE1", "MTE3"), ("MTE1", "V"), ("MTE2", "M"), ("M", "MTE2"), ("V", "MTE1"), ("M", "FIX"),
               ("FIX", "M"), ("MTE3", "MTE2"), ("MTE2", "MTE3"), ("S", "V"), ("V", "S"), ("S", "MTE2"),
               ("MTE2", "S"), ("S", "MTE3"), ("MTE3", "S"), ("MTE2", "FIX"), ("FIX", "MTE2"), ("FIX", "S"),
               ("M", "S"), ("FIX", "MTE3"))
