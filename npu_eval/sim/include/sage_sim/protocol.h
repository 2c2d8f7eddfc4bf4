// The contract between the harness and the Python side (npu_eval/protocol.py): exit codes,
// the files a run leaves, their TSV columns, the environment the sandbox sets and the
// flag-event-to-pipe map. The other headers use these names instead of literals;
// tests/test_protocol.py prints them from a small program and compares them with protocol.py.
#pragma once

namespace sage {
namespace sim {
namespace protocol {

// ---- exit codes of a harness run ----
constexpr int kExitAborted = 3;        // a fault stopped the kernel (KernelAbort)
constexpr int kExitBadManifest = 4;    // the manifest could not be read, or GM not mapped
constexpr int kExitTimeout = 124;      // SIGTERM at the time limit
constexpr int kExitSignalBase = 128;   // 128 + N: died of signal N

// ---- files a run leaves in its output folder ----
constexpr const char* kManifest = "manifest.tsv";
constexpr const char* kTrace = "trace.tsv";
constexpr const char* kLocs = "locs.tsv";
constexpr const char* kFaults = "faults.tsv";
constexpr const char* kCrash = "crash.tsv";
constexpr const char* kDone = "done";
constexpr const char* kOutputPrefix = "out_";      // out_<arg>.bin
constexpr const char* kWriterPrefix = "writer_";   // writer_<arg>.bin
constexpr const char* kLaunchPrefix = "launch_";   // program mode: launch_<n>/
constexpr const char* kMeta = "meta.tsv";
constexpr const char* kHostFaults = "host_faults.tsv";
constexpr const char* kHostCrash = "host_crash.tsv";
constexpr const char* kRtcCompiler = "rtc_compiler.txt";  // aclrtc: the compiler, one argument a line
// A crash.tsv row with this code carries, in its message column, the program counter where a
// kernel died before its first Ascend C call and the runtime address of __executable_start
// (both hex), so the Python side can name the function from the binary's symbol table.
constexpr const char* kCrashPc = "pc";

// ---- environment ----
constexpr const char* kEnvProgramOut = "SAGE_PROGRAM_OUT";
constexpr const char* kEnvProgramTrace = "SAGE_PROGRAM_TRACE";
constexpr const char* kEnvProgramValues = "SAGE_PROGRAM_VALUES";
constexpr const char* kEnvSeccomp = "SAGE_SANDBOX_SECCOMP";
// The starts of what sandbox.h prints when the kernel runs without its seccomp filter.
constexpr const char* kSeccompFailed = "sage sandbox: the seccomp filter could not";
constexpr const char* kSeccompAbsent = "sage sandbox: no seccomp filter";

// ---- TSV columns ----
constexpr const char* kFaultColumns[] = {"code", "severity", "file", "line", "block", "count", "message"};
constexpr const char* kLocsColumns[] = {"id", "line", "file"};
constexpr const char* kTraceColumns[] = {"kind", "pipe", "api", "dtype", "elems", "bytes", "loc", "a", "b",
                                         "w_addr", "w_bytes", "r0_addr", "r0_bytes", "r1_addr", "r1_bytes",
                                         "gm_addr", "gm_burst", "gm_gap"};
constexpr const char* kTraceBlock = "B";
constexpr const char* kTraceTruncated = "truncated";
// Trace record kinds, indexed by the runtime's record kind.
constexpr const char* kTraceKinds[] = {"I", "alloc", "free", "enque", "deque", "setflag", "waitflag", "barrier", "xset", "xwait", "unitflag"};
// writer_<arg>.bin runs: (location id << kWriterBlockBits) | (block + 1)
constexpr int kWriterBlockBits = 12;

// The Matmul API's scalar records (S pipe; adv_api/matmul/matmul.h), each costed by its own
// CostTable field: a message's GM round trip on the calling AIV, the AIC server's handling of it,
// an object's Init, one K step of its Mmad loop, one GM -> L1 copy it issues. Their dtype column
// says whether the object's tiling is a compile-time constant.
constexpr const char* kMatmulMessage = "MatmulMessage";
constexpr const char* kMatmulServe = "MatmulServe";
constexpr const char* kMatmulInit = "MatmulInit";
constexpr const char* kMatmulKStep = "MatmulKStep";
constexpr const char* kMatmulCopy = "MatmulCopy";
constexpr const char* kStaticTiling = "static";

// ---- pipes and flag events ----
constexpr const char* kPipes[] = {"S", "V", "MTE1", "MTE2", "MTE3", "M", "FIX"};  // Pipe order
constexpr int kPipeAll = 6;  // pipe_t::PIPE_ALL
// HardEvent, in its enum order -> {the pipe that sets the flag, the pipe that waits on it}
constexpr const char* kEventPipes[][2] = {
    {"MTE2", "MTE1"}, {"MTE1", "MTE2"}, {"MTE1", "M"}, {"M", "MTE1"}, {"MTE2", "V"}, {"V", "MTE2"},
    {"MTE3", "V"}, {"V", "MTE3"}, {"M", "V"}, {"V", "M"}, {"V", "V"}, {"MTE3", "MTE1"},
    {"MTE1", "MTE3"}, {"MTE1", "V"}, {"MTE2", "M"}, {"M", "MTE2"}, {"V", "MTE1"}, {"M", "FIX"},
    {"FIX", "M"}, {"MTE3", "MTE2"}, {"MTE2", "MTE3"}, {"S", "V"}, {"V", "S"}, {"S", "MTE2"},
    {"MTE2", "S"}, {"S", "MTE3"}, {"MTE3", "S"}, {"MTE2", "FIX"}, {"FIX", "MTE2"}, {"FIX", "S"},
    {"M", "S"}, {"FIX", "MTE3"}};

}  // namespace protocol
}  // namespace sim
}  // namespace sage
