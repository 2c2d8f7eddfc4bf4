// The harness's runtime half. The generated harness (npu_eval/harness.py) includes this,
// then the user's kernel, then defines sage_run_block() that builds the entry's arguments
// from the manifest and calls the entry once. harness_main() runs every block in turn,
// catches faults, and writes outputs, faults, writers and the trace for the Python side.
// The block runner (run_blocks), the GM mapping, the fault/trace writers and the crash
// handlers are shared with program mode (launch.h), which runs one launch at a time.
#pragma once

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <tuple>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#include "../kernel_operator.h"
#include "protocol.h"
#include "sandbox.h"
#include "mix.h"
#include "prebuilt.h"

// The linker's first byte of this executable's image (GNU ld, gold and lld define it): with
// a symbol's link-time address it turns a run-time program counter into a symbol-table one.
// Weak: a shared object aclrtc compiled (sage_sim/rtc.h) has none of its own; the program defines it.
extern "C" char __executable_start __attribute__((weak));

namespace sage {
namespace sim {

template <class F>
struct entry_traits;
template <class R, class... A>
struct entry_traits<R (*)(A...)> {
    static constexpr size_t arity = sizeof...(A);
    template <size_t I>
    using arg = typename std::tuple_element<I, std::tuple<A...>>::type;
};

// GM buffers start on a page and are followed by an inaccessible page, so a raw pointer
// running off the end faults at once and the crash report can name the buffer. A null base
// when the memory is not there.
inline GmBuffer gm_map(size_t bytes, int arg, const std::string& name) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t data = (bytes + page - 1) / page * page;
    if (data == 0) data = page;
    void* p = mmap(nullptr, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return GmBuffer{nullptr, 0, arg, name, nullptr};
    mprotect(static_cast<uint8_t*>(p) + data, page, PROT_NONE);
    GmBuffer b{static_cast<uint8_t*>(p), bytes, arg, name, nullptr};
    b.tracked = true;  // the writer array comes with the first store (gm_wrote)
    return b;
}

// The mapping gm_map made for a buffer of `bytes`, guard page included.
inline size_t gm_mapped_bytes(size_t bytes) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t data = (bytes + page - 1) / page * page;
    return (data ? data : page) + page;
}

// A value from the manifest that converts to whatever the parameter or field wants.
struct ManifestValue {
    std::string text;
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value ||
                                                             std::is_same<U, half>::value ||
                                                             std::is_same<U, bfloat16_t>::value ||
                                                             std::is_enum<U>::value>::type>
    operator U() const {
        if (text.find_first_of(".eEn") != std::string::npos && text.find("0x") != 0)
            return U(std::strtod(text.c_str(), nullptr));
        return U(std::strtoll(text.c_str(), nullptr, 0));
    }
};

// A GM buffer handed to a pointer parameter of any element type.
struct GmArg {
    uint8_t* ptr;
    template <typename P>
    operator P*() const {
        return reinterpret_cast<P*>(ptr);
    }
};

struct Manifest {
    struct Buffer {
        int arg;
        std::string role, path, name;
        size_t bytes;
    };
    int block_dim = 1;
    bool trace = false;
    std::string outdir = ".";
    std::vector<Buffer> buffers;
    std::vector<std::pair<int, std::string>> scalars;
    std::vector<std::tuple<int, std::string, std::string>> tiling;  // arg, field, value

    GmArg gm(int arg) {
        for (auto& b : rt().gm)
            if (b.arg == arg) return GmArg{b.base};
        die("no GM buffer for argument %d", arg);
    }
    ManifestValue scalar(int arg) const {
        for (auto& s : scalars)
            if (s.first == arg) return ManifestValue{s.second};
        die("no scalar for argument %d", arg);
    }
    SAGE_SIM_OUTLINE ManifestValue tiling_field(int arg, const char* field) const {
        for (auto& t : tiling)
            if (std::get<0>(t) == arg && std::get<1>(t) == field) return ManifestValue{std::get<2>(t)};
        die("no tiling field %s for argument %d", field, arg);
    }
    // Framework-style entries read tiling from GM: the struct is placed in a buffer of its own.
    template <typename S>
    GmArg place_tiling(int arg, const S& value) {
        for (auto& b : rt().gm)
            if (b.arg == arg) return GmArg{b.base};
        GmBuffer b = alloc_gm(sizeof(S), arg, "tiling");
        memcpy(b.base, &value, sizeof(S));
        rt().gm.push_back(b);
        return GmArg{b.base};
    }

    [[noreturn]] static void die(const char* fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        std::fprintf(stderr, "sage harness: ");
        std::vfprintf(stderr, fmt, ap);
        std::fprintf(stderr, "\n");
        va_end(ap);
        std::exit(protocol::kExitBadManifest);
    }

    static GmBuffer alloc_gm(size_t bytes, int arg, const std::string& name) {
        GmBuffer b = gm_map(bytes, arg, name);
        if (!b.base) die("cannot map %zu bytes of GM for argument %d", bytes, arg);
        return b;
    }

    static Manifest load(const char* path) {
        Manifest m;
        FILE* f = std::fopen(path, "r");
        if (!f) die("cannot open manifest %s", path);
        char line[8192];
        while (std::fgets(line, sizeof line, f)) {
            std::vector<std::string> cols;
            std::string cur;
            for (char* c = line; *c && *c != '\n'; ++c) {
                if (*c == '\t') {
                    cols.push_back(cur);
                    cur.clear();
                } else {
                    cur += *c;
                }
            }
            cols.push_back(cur);
            const std::string& k = cols[0];
            if (k == "block_dim") m.block_dim = std::atoi(cols.at(1).c_str());
            else if (k == "trace") m.trace = cols.at(1) == "1";
            else if (k == "values") rt().values = cols.at(1) == "1";
            else if (k == "outdir") m.outdir = cols.at(1);
            else if (k == "ub_bytes") rt().ub_bytes = std::strtoull(cols.at(1).c_str(), nullptr, 10);
            else if (k == "ub_reserved") rt().ub_reserved_bytes = std::strtoull(cols.at(1).c_str(), nullptr, 10);
            else if (k == "buffer")
                m.buffers.push_back(Buffer{std::atoi(cols.at(1).c_str()), cols.at(2), cols.at(5), cols.at(4),
                                           std::strtoull(cols.at(3).c_str(), nullptr, 10)});
            else if (k == "scalar") m.scalars.emplace_back(std::atoi(cols.at(1).c_str()), cols.at(2));
            else if (k == "tiling") m.tiling.emplace_back(std::atoi(cols.at(1).c_str()), cols.at(2), cols.at(3));
            else if (k == "tiling_key") tiling_key() = std::strtoull(cols.at(1).c_str(), nullptr, 10);
        }
        std::fclose(f);
        return m;
    }

    void load_buffers() {
        for (auto& b : buffers) {
            GmBuffer g = alloc_gm(b.bytes, b.arg, b.name);
            if (b.path != "-") {
                FILE* f = std::fopen(b.path.c_str(), "rb");
                if (!f) die("cannot open %s", b.path.c_str());
                size_t got = std::fread(g.base, 1, b.bytes, f);
                std::fclose(f);
                if (got != b.bytes) die("%s holds %zu bytes, expected %zu", b.path.c_str(), got, b.bytes);
            }
            rt().gm.push_back(g);
        }
    }
};

inline std::string out_path(const Manifest& m, const std::string& name) { return m.outdir + "/" + name; }

inline void write_file(const std::string& path, const void* data, size_t bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) Manifest::die("cannot write %s", path.c_str());
    std::fwrite(data, 1, bytes, f);
    std::fclose(f);
}

// Who wrote each output byte, as runs (first byte, length, writer): a DataCopy writes one run,
// so this stays small where a word per byte would be four times the output.
SAGE_SIM_HOT inline void write_writers(const std::string& path, const uint32_t* w, size_t bytes) {
    struct Run {
        uint64_t start, length;
        uint32_t writer, pad;
    };
    std::vector<Run> runs;
    if (!w) runs.push_back(Run{0, bytes, 0, 0});  // no store made the writer array: nobody wrote
    for (size_t i = 0; w && i < bytes;) {
        size_t j = i + 1;
        while (j < bytes && w[j] == w[i]) ++j;
        runs.push_back(Run{i, j - i, w[i], 0});
        i = j;
    }
    write_file(path, runs.data(), runs.size() * sizeof(Run));
}

inline void escape_into(std::string& out, const std::string& s) {
    for (char c : s) out += (c == '\t' || c == '\n') ? ' ' : c;
}

inline void write_faults_to(const std::string& dir) {
    static const char* sev[] = {"error", "warning", "info"};
    std::string s;
    for (auto& f : rt().faults) {
        s += f.code + "\t" + sev[int(f.severity)] + "\t";
        escape_into(s, f.file);
        s += "\t" + std::to_string(f.line) + "\t" + std::to_string(f.block) + "\t" + std::to_string(f.count) + "\t";
        escape_into(s, f.message);
        s += "\n";
    }
    write_file(dir + "/" + protocol::kFaults, s.data(), s.size());
    std::string l;
    for (size_t i = 0; i < rt().locs.size(); ++i) {
        l += std::to_string(i + 1) + "\t" + std::to_string(rt().locs[i].second) + "\t";
        escape_into(l, rt().locs[i].first);
        l += "\n";
    }
    write_file(dir + "/" + protocol::kLocs, l.data(), l.size());
}
inline void write_faults(const Manifest& m) { write_faults_to(m.outdir); }

inline void append_trace(FILE* f, const BlockState& b) {
    if (trace_truncated()) std::fprintf(f, "truncated\t%d\n", b.fiber);
    // `B <fiber> <core> <idx>`: the fiber numbers every core once; a mixed launch's cost model
    // places AIC and AIV cores apart (npu_eval/trace.py).
    std::fprintf(f, "B\t%d\t%s\t%d\n", b.fiber, b.core == 1 ? "AIC" : "AIV", b.idx);
    for (auto& r : b.trace) {
        std::fprintf(f, "%s\t%s\t%s\t%s\t%u\t%llu\t%u\t%d\t%d\t%u\t%u\t%u\t%u\t%u\t%u\t%llu\t%u\t%u\n",
                     protocol::kTraceKinds[int(r.kind)], pipe_name(r.pipe), r.api, r.dtype, r.elems,
                     (unsigned long long)r.bytes, r.loc, r.a, r.b, r.w.addr, r.w.bytes, r.r0.addr, r.r0.bytes,
                     r.r1.addr, r.r1.bytes, (unsigned long long)r.gm_addr, r.gm_burst, r.gm_gap);
    }
}

// ---- crash and timeout reports, written from signal handlers ----

inline void write_all(int fd, const char* s, size_t n) {
    while (n) {
        ssize_t k = ::write(fd, s, n);
        if (k <= 0) return;
        s += k;
        n -= size_t(k);
    }
}

// Where a crash happens: in a kernel (a block is running) or, in program mode, in the host
// code around the launches, where the last Ascend C call says nothing about the crash.
inline bool& in_host_code() {
    static bool host = false;
    return host;
}
inline int& launches_done() {
    static int n = 0;
    return n;
}

// Before a block's first Ascend C call there is no line to name: record where the program
// counter was, and where this executable's image starts, so the Python side can name the
// function from the binary's symbol table (symbolize.py). Symbolizing here would not be
// async-signal-safe.
// On x86-64 the return addresses of the frame-pointer chain follow (up to kCrashFrames), so a
// crash inside a library function or an out-of-line helper (std::vector::operator[] at -O0) can
// still be named by the user's line that called it.
constexpr int kCrashFrames = 6;
inline void write_crash_pc(int fd, void* uctx) {
    uintptr_t pc = 0;
#if defined(__x86_64__)
    const auto& regs = static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs;
    pc = static_cast<uintptr_t>(regs[REG_RIP]);
#elif defined(__aarch64__)
    pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(uctx)->uc_mcontext.pc);
#endif
    if (!pc) return;
    char msg[512];
    int n = std::snprintf(msg, sizeof msg, "%s\tnote\t\t0\t%d\t1\t%lx %lx", protocol::kCrashPc, blk().idx,
                          static_cast<unsigned long>(pc),
                          static_cast<unsigned long>(reinterpret_cast<uintptr_t>(&__executable_start)));
#if defined(__x86_64__)
    // Walk only frames that lie above the stack pointer and below it by at most 8 MB, upwards.
    const uintptr_t sp = static_cast<uintptr_t>(regs[REG_RSP]);
    uintptr_t fp = static_cast<uintptr_t>(regs[REG_RBP]);
    // First the two words at the stack pointer: stopped in a callee's first or last instructions
    // (before `push rbp` or after `pop rbp`), the caller's return address is there and the frame
    // pointer still names the caller's caller. The Python side keeps only addresses inside a
    // function of the binary, so a word that is data is dropped.
    if (sp && (sp & 7) == 0) {
        const uintptr_t* top = reinterpret_cast<const uintptr_t*>(sp);
        n += std::snprintf(msg + n, sizeof msg - size_t(n), " %lx %lx", static_cast<unsigned long>(top[0]),
                           static_cast<unsigned long>(top[1]));
    }
    for (int i = 0; i < kCrashFrames && n > 0 && n < int(sizeof msg) - 40; ++i) {
        if (fp < sp || fp - sp > (uintptr_t(8) << 20) || (fp & 7) != 0) break;
        const uintptr_t* frame = reinterpret_cast<const uintptr_t*>(fp);
        if (!frame[1]) break;
        n += std::snprintf(msg + n, sizeof msg - size_t(n), " %lx", static_cast<unsigned long>(frame[1]));
        if (frame[0] <= fp) break;
        fp = frame[0];
    }
#endif
    if (n > 0 && n < int(sizeof msg) - 1) msg[n++] = '\n';
    if (n > 0) write_all(fd, msg, std::min(size_t(n), sizeof msg - 1));
}

// The crash line names the last Ascend C call the kernel made (the signal gives no user line
// of its own) and, for a bad access, what the address was: next to a GM buffer, or null.
inline void on_fatal_signal(int sig, siginfo_t* info, void* uctx) {
    int fd = rt().fault_fd;
    if (fd >= 0) {
        char msg[1024];
        int n;
        const bool before_first_call = rt().last.line == 0;
        const char* what = sig == SIGSEGV ? "SIGSEGV (invalid memory access)"
                         : sig == SIGBUS  ? "SIGBUS (misaligned or unmapped access)"
                         : sig == SIGFPE  ? "SIGFPE (arithmetic fault, e.g. integer division by zero)"
                         : sig == SIGILL  ? "SIGILL (illegal instruction)"
                         : sig == SIGABRT ? "SIGABRT (abort)"
                                          : "a fatal signal";
        if (in_host_code()) {
            // No user line: the host code makes no API call that would leave one. The program
            // counter names it (program mode builds with line tables: symbolize.py).
            write_crash_pc(fd, uctx);
            if (sig == SIGTERM)
                n = std::snprintf(msg, sizeof msg, "timeout\terror\t\t0\t-1\t1\tthe program ran past its time "
                                  "limit in its host code, after %d kernel launch(es) (waiting for input, or an "
                                  "endless loop?)\n", launches_done());
            else
                n = std::snprintf(msg, sizeof msg, "crash\terror\t\t0\t-1\t1\tthe program died of %s in its host "
                                  "code, after %d kernel launch(es)\n", what, launches_done());
        } else if (sig == SIGTERM) {
            if (before_first_call) write_crash_pc(fd, uctx);
            n = std::snprintf(msg, sizeof msg, "timeout\terror\t%s\t%d\t%d\t1\tthe kernel ran past its time limit "
                              "in block %d%s (an endless loop, or a loop bound read from a wrong tiling field?)\n",
                              rt().last.file, rt().last.line, blk().idx, blk().idx,
                              before_first_call ? ", before its first Ascend C call"
                                                : "; the last Ascend C call it made was here");
        } else {
            char where[256] = "";
            if (sig == SIGSEGV || sig == SIGBUS) {
                long long off = 0;
                GmBuffer* b = gm_nearest(info->si_addr, &off);
                const FreedGm* freed = nullptr;
                auto* q = static_cast<const uint8_t*>(info->si_addr);
                for (auto& f : rt().gm_freed)
                    if (q >= f.base && q < f.base + f.bytes + 4096) freed = &f;
                if (freed) {
                    std::snprintf(where, sizeof where, ": a raw access to GM buffer '%s', which %s freed at line %d",
                                  freed->name.c_str(), freed->api, freed->at.line);
                } else if (b && off >= -4096 && off < (long long)b->bytes + 65536) {
                    std::snprintf(where, sizeof where, ": a raw access %lld bytes %s GM buffer '%s' (%zu bytes)",
                                  off < 0 ? -off : off - (long long)b->bytes, off < 0 ? "before" : "past the end of",
                                  b->name.c_str(), b->bytes);
                } else if (reinterpret_cast<uintptr_t>(info->si_addr) < 65536) {
                    std::snprintf(where, sizeof where, ": a null pointer access (address 0x%lx)",
                                  (unsigned long)reinterpret_cast<uintptr_t>(info->si_addr));
                } else {
                    std::snprintf(where, sizeof where, " at address %p", info->si_addr);
                }
            }
            if (before_first_call) write_crash_pc(fd, uctx);
            n = std::snprintf(msg, sizeof msg, "crash\terror\t%s\t%d\t%d\t1\tthe kernel died of %s%s in block %d%s\n",
                              rt().last.file, rt().last.line, blk().idx, what, where, blk().idx,
                              before_first_call ? ", before its first Ascend C call"
                                                : "; the last Ascend C call before it was here");
        }
        if (n > 0) write_all(fd, msg, std::min(size_t(n), sizeof msg - 1));
    }
    _exit(sig == SIGTERM ? protocol::kExitTimeout : protocol::kExitSignalBase + sig);
}

// An exception the kernel let escape (std::bad_alloc from a huge new, std::out_of_range from
// .at()) would end in a bare abort; name it instead. Runs once, on the way out.
inline void on_terminate() {
    int fd = rt().fault_fd;
    if (fd >= 0) {
        char what[512] = "an exception of unknown type";
        try {
            if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
            std::snprintf(what, sizeof what, "std::terminate (no exception)");
        } catch (const std::bad_alloc&) {
            rlimit lim{};
            getrlimit(RLIMIT_AS, &lim);
            if (lim.rlim_cur != RLIM_INFINITY)
                std::snprintf(what, sizeof what, "std::bad_alloc: the kernel asked for more memory than the "
                              "run's %llu MiB limit (the memory_limit_mb setting)",
                              (unsigned long long)(lim.rlim_cur >> 20));
            else
                std::snprintf(what, sizeof what, "std::bad_alloc: the kernel ran out of memory");
        } catch (const std::exception& x) {
            std::snprintf(what, sizeof what, "an uncaught C++ exception: %s", x.what());
        } catch (...) {
        }
        for (char* c = what; *c; ++c)
            if (*c == '\n' || *c == '\t') *c = ' ';  // what() is free text; the line must stay one TSV row
        char msg[1024];
        int n = in_host_code()
                    ? std::snprintf(msg, sizeof msg, "crash\terror\t\t0\t-1\t1\tthe program died of %s in its host "
                                    "code, after %d kernel launch(es)\n", what, launches_done())
                    : std::snprintf(msg, sizeof msg, "crash\terror\t%s\t%d\t%d\t1\tthe kernel died of %s in block "
                                    "%d; the last Ascend C call before it was here\n",
                                    rt().last.file, rt().last.line, blk().idx, what, blk().idx);
        if (n > 0) write_all(fd, msg, std::min(size_t(n), sizeof msg - 1));
    }
    _exit(128 + SIGABRT);
}

inline void install_signal_handlers(const std::string& crash_path) {
    rt().fault_fd = ::open(crash_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    static char altstack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    // This process may be PID 1 of its own PID namespace, where a signal without a handler
    // is dropped (SIGKILL aside): every signal that should end the run has one.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM}) sigaction(sig, &sa, nullptr);
    signal(SIGXFSZ, SIG_IGN);  // an oversized output fails its write instead of killing us
    std::set_terminate(on_terminate);
}
inline void install_signal_handlers(const Manifest& m) { install_signal_handlers(out_path(m, protocol::kCrash)); }

// Runs the cores of one launch (sage_sim/mix.h, launch_cores: block_dim AIVs for a vector kernel,
// AICs and AIVs for a mixed one), their traces appended to `trace` when given. Without
// cross-core waits they run in turn, each with a fresh block state over one Unified Buffer (stale
// bytes, as the device leaves them). A fault that stops a core (KernelAbort) stops the launch: 3; else 0.
template <class Body>
inline int run_blocks(int64_t block_dim, std::vector<uint8_t>& ub, std::vector<uint8_t>& ub_init, FILE* trace,
                      Body&& body) {
#ifdef SAGE_SIM_COOP
    // The kernel waits for other cores (SyncAll, a cross-core flag, a GM poll) or is mixed: cores run
    // as fibers (each with its own local memory), so a wait parks a core until the others let it go.
    // The build defines this only then: fibers have small stacks.
    (void)ub, (void)ub_init;
    return mix_run(SAGE_SIM_KERNEL_TYPE, int(block_dim), 0x5A, [&](int) { body(); }, [&](BlockState& st) {
        if (trace) append_trace(trace, st);
    });
#endif
    memset(ub.data(), 0x5A, ub.size());  // stale data, as a fresh UB would hold
    int status = 0;
    std::vector<CoreSlot> cores = launch_cores(SAGE_SIM_KERNEL_TYPE, int(block_dim));
    for (size_t f = 0; f < cores.size() && status == 0; ++f) {
        BlockState& st = blk();
        start_core(st, cores[f], int(f));
        st.ub = ub.data();
        st.ub_init = ub_init.data();
        try {
            body();
        } catch (const KernelAbort&) {
            status = protocol::kExitAborted;
        }
        if (trace) append_trace(trace, st);
    }
    return status;
}

using BlockFn = void (*)(Manifest&);

// With SAGE_SIM_PREBUILT_RUNTIME the build links harness_main from a runtime object compiled
// once per flag set (SAGE_SIM_RUNTIME_TU, npu_eval/pch.py), so a kernel's build does not
// generate the runtime's code again; without it, it is an inline function like the rest.
#if defined(SAGE_SIM_PREBUILT_RUNTIME) && !defined(SAGE_SIM_RUNTIME_TU)
int harness_main(int argc, char** argv, BlockFn run_block);
#else
#ifndef SAGE_SIM_RUNTIME_TU
inline
#endif
int harness_main(int argc, char** argv, BlockFn run_block) {
    if (argc < 2) Manifest::die("usage: %s MANIFEST", argv[0]);
    setvbuf(stdout, nullptr, _IOLBF, 0);
    Manifest m = Manifest::load(argv[1]);
    install_signal_handlers(m);
    m.load_buffers();
    rt().tracing = m.trace;
    sandbox_enter_kernel();

    std::vector<uint8_t> ub(local_bytes()), ub_init(local_bytes());  // the UB and the cube memories (cube.h)
    FILE* trace = m.trace ? std::fopen(out_path(m, protocol::kTrace).c_str(), "w") : nullptr;
    int status = run_blocks(m.block_dim, ub, ub_init, trace, [&] { run_block(m); });
    std::fflush(stdout);
    if (trace) std::fclose(trace);
    sandbox_leave_kernel();
    for (auto& g : rt().gm) {
        for (auto& b : m.buffers) {
            if (b.arg != g.arg || b.role == "in" || !rt().values) continue;  // estimate only: nothing to compare
            gm_settle_all(g);
            write_file(out_path(m, protocol::kOutputPrefix + std::to_string(b.arg) + ".bin"), g.base, g.bytes);
            write_writers(out_path(m, protocol::kWriterPrefix + std::to_string(b.arg) + ".bin"), g.writer, g.bytes);
        }
    }
    write_faults(m);
    write_file(out_path(m, protocol::kDone), "ok\n", 3);
    return status;
}
#endif

}  // namespace sim
}  // namespace sage
