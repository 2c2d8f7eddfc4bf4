// Program mode (`sage-npu run FILE`): a whole Ascend C program, host main() and kernels, built
// for the CPU. Its kernel launches (`kernel<<<n, l2ctrl, stream>>>(args)`, rewritten by
// npu_eval/program.py into kernel_launch(...)(args), and ICPU_RUN_KF) run here, one block after
// another as in the task harness, each launch with its own faults and trace written to
// $SAGE_PROGRAM_OUT/launch_<n>/ for the Python side. Device memory (aclrtMalloc, GmAlloc) is
// registered as GM, so every check of the emulator applies to it.
//
// Outside `sage-npu run` (SAGE_PROGRAM_OUT unset) launches still run, nothing is written and
// faults go to stderr.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness.h"

namespace sage {
namespace sim {

// Where a launch is written in the user's source. `args` is the argument list's text, the
// names naming the GM buffers in fault messages ("xDevice" rather than "aclrtMalloc at 87").
struct LaunchSite {
    const char* file;
    int line;
    int column;
    const char* kernel;
    const char* args;
    bool device;  // <<<>>>: arguments must be device memory (ICPU_RUN_KF runs on host memory too)
};

constexpr int kAclAicoreException = 507015;  // ACL_ERROR_RT_AICORE_EXCEPTION
constexpr int kAclAicpuException = 507018;   // ACL_ERROR_RT_AICPU_EXCEPTION
constexpr size_t kMaxFreedKept = 256;          // freed mappings kept (PROT_NONE) to name a use after free
// Race tracking costs 4 bytes of writer per GM byte, plus 4 of order stamps in a mixed launch
// (runtime.h): larger buffers go without it, and so do buffers past a total of that much tracked GM,
// so the bookkeeping stays within 2 GiB of the run's 4 GiB address space (matmul_gelu's 8192^3
// half matmul allocates 512 MiB of GM and 512 MiB of host memory).
constexpr size_t kMaxTrackedGmBytes = size_t(256) << 20;
inline size_t gm_tracked_bytes() {
    size_t n = 0;
    for (const GmBuffer& g : rt().gm) n += g.tracked ? g.bytes : 0;
    return n;
}

struct Program {
    std::string out;       // $SAGE_PROGRAM_OUT; empty when not run by sage-npu run
    bool trace = false;    // record each launch's trace for the cost model
    bool sandboxed = false;
    int sticky_error = 0;  // a faulted launch poisons the stream, as on the device
    int host_fd = -1;      // host_faults.tsv: findings in host code (ACL misuse)
    int host_crash_fd = -1;
    int kernel_mode = 0;      // SetKernelMode
    std::vector<uint8_t> ub, ub_init;
    std::vector<std::string> host_reported;  // "code file line": one finding per place
    std::string last_error;                  // aclGetRecentErrMsg
};

inline Program& program() {
    static Program p;
    return p;
}

inline void write_text(int fd, const std::string& s) {
    if (fd >= 0) write_all(fd, s.data(), s.size());
}

inline std::string tsv_field(const std::string& s) {
    std::string out;
    escape_into(out, s);
    return out;
}

// A finding in host code (an ACL call), written at once: the program may crash later.
inline void host_report(const char* code, Severity sev, SrcLoc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    Program& p = program();
    p.last_error = msg;
    std::string key = std::string(code) + " " + (loc.file ? loc.file : "") + " " + std::to_string(loc.line);
    for (auto& k : p.host_reported)
        if (k == key) return;
    p.host_reported.push_back(key);
    static const char* sevs[] = {"error", "warning", "info"};
    if (p.host_fd < 0) {
        std::fprintf(stderr, "%s:%d: %s: %s [%s]\n", loc.file, loc.line, sevs[int(sev)], msg.c_str(), code);
        return;
    }
    write_text(p.host_fd, std::string(code) + "\t" + sevs[int(sev)] + "\t" + tsv_field(loc.file ? loc.file : "") +
                              "\t" + std::to_string(loc.line) + "\t-1\t1\t" + tsv_field(msg) + "\n");
}

inline const char* base_name(const char* path) {
    const char* b = path ? std::strrchr(path, '/') : nullptr;
    return b ? b + 1 : (path ? path : "");
}

// ---- device memory ----

// `track_writes`: whether the host writes this memory only through ACL calls we see
// (aclrtMalloc), so a kernel read of bytes nobody wrote can be flagged; GmAlloc memory is
// written by the host through plain pointers.
inline void* device_alloc(size_t bytes, const char* api, SrcLoc loc, bool track_writes = false) {
    GmBuffer b = gm_map(bytes, -1, format("%s at %s:%d", api, base_name(loc.file), loc.line));
    if (!b.base) return nullptr;
    // What fresh device memory holds: zeros by default, because asc-devkit's own test plan
    // runs samples on the NPU whose checks pass only when output bytes the kernel never writes
    // read back as zero (reduce, tbufpool_management, data_sync_barrier, gm_by_pass_dcache);
    // nothing in ACL's documentation guarantees it, so a kernel's read of such bytes is an
    // uninitialized-gm-read warning. `sage-npu run --strict-device-memory` fills 0x5A instead.
#ifndef SAGE_DEVICE_MEM_FILL
#define SAGE_DEVICE_MEM_FILL 0
#endif
    memset(b.base, SAGE_DEVICE_MEM_FILL, bytes);
    if (bytes > kMaxTrackedGmBytes || gm_tracked_bytes() + bytes > kMaxTrackedGmBytes) {
        b.tracked = false;
    } else if (track_writes) {
        b.written = static_cast<uint8_t*>(std::calloc(bytes ? bytes : 1, 1));
    }
    rt().gm.push_back(b);
    return b.base;
}

inline const FreedGm* freed_at(const void* p) {
    auto* q = static_cast<const uint8_t*>(p);
    for (size_t i = rt().gm_freed.size(); i-- > 0;) {
        const FreedGm& f = rt().gm_freed[i];
        if (q >= f.base && q < f.base + (f.bytes ? f.bytes : 1)) return &f;
    }
    return nullptr;
}

// 0 when freed; else what was wrong (reported at `loc`).
inline bool device_free(void* p, const char* api, SrcLoc loc) {
    if (!p) return true;
    auto* q = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < rt().gm.size(); ++i) {
        GmBuffer& b = rt().gm[i];
        if (q < b.base || q >= b.base + (b.bytes ? b.bytes : 1)) continue;
        if (q != b.base) {
            host_report("acl-error", Severity::Error, loc, "%s is given a pointer %lld bytes into device buffer '%s', "
                        "not its start: pass the pointer the allocation returned", api, (long long)(q - b.base),
                        b.name.c_str());
            return false;
        }
        // The pages stay reserved but inaccessible, so a later access faults and names this free.
        mprotect(b.base, gm_mapped_bytes(b.bytes), PROT_NONE);
        std::free(b.writer);
        std::free(b.written);
        rt().gm_freed.push_back(FreedGm{b.base, b.bytes, b.name, api, loc});
        if (rt().gm_freed.size() > kMaxFreedKept) {
            FreedGm& old = rt().gm_freed.front();
            munmap(const_cast<uint8_t*>(old.base), gm_mapped_bytes(old.bytes));
            rt().gm_freed.erase(rt().gm_freed.begin());
        }
        rt().gm.erase(rt().gm.begin() + long(i));
        return true;
    }
    if (const FreedGm* f = freed_at(p)) {
        host_report("acl-error", Severity::Error, loc, "%s frees device buffer '%s' a second time: %s already freed it "
                    "at %s", api, f->name.c_str(), f->api, line_ref(f->at, loc).c_str());
        return false;
    }
    host_report("acl-error", Severity::Error, loc, "%s is given %p, which is not device memory (not from aclrtMalloc "
                "or GmAlloc)", api, p);
    return false;
}

// Checks that [p, p+bytes) lies in one device buffer; reports at `loc` and returns false if not.
inline bool device_range(const void* p, size_t bytes, SrcLoc loc, const char* api, const char* role) {
    auto* q = static_cast<const uint8_t*>(p);
    if (GmBuffer* b = gm_find(p)) {
        size_t off = size_t(q - b->base);
        if (bytes <= b->bytes - off) return true;
        host_report("gm-out-of-bounds", Severity::Error, loc, "%s: the %s runs %zu bytes past the end of device buffer "
                    "'%s' (%zu bytes; the copy covers bytes %zu..%zu)", api, role, bytes - (b->bytes - off),
                    b->name.c_str(), b->bytes, off, off + bytes - 1);
        return false;
    }
    if (const FreedGm* f = freed_at(p)) {
        host_report("use-after-free", Severity::Error, loc, "%s: the %s is device buffer '%s', which %s freed at %s",
                    api, role, f->name.c_str(), f->api, line_ref(f->at, loc).c_str());
        return false;
    }
    host_report("acl-error", Severity::Error, loc, "%s: the %s %p is not device memory (not from aclrtMalloc): "
                "check the copy kind and the argument order (dst, destMax, src, count, kind)", api, role, p);
    return false;
}

// ---- launches ----

// The i-th argument's text when it is a plain name, else "".
inline std::string nth_arg_name(const char* args, size_t i) {
    std::string cur;
    size_t k = 0;
    int depth = 0;
    for (const char* c = args ? args : "";; ++c) {
        if (*c == '\0' || (*c == ',' && depth == 0)) {
            if (k == i) {
                size_t a = cur.find_first_not_of(" \t\n"), b = cur.find_last_not_of(" \t\n");
                std::string name = a == std::string::npos ? "" : cur.substr(a, b - a + 1);
                for (char ch : name)
                    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return "";
                return name;
            }
            if (*c == '\0') return "";
            ++k;
            cur.clear();
            continue;
        }
        if (*c == '(' || *c == '[' || *c == '{' || *c == '<') ++depth;
        if (*c == ')' || *c == ']' || *c == '}' || *c == '>') --depth;
        cur += *c;
    }
}

template <class T>
inline void check_launch_arg(const LaunchSite& site, size_t i, const T& v) {
    if constexpr (std::is_pointer<T>::value) {
        const void* ptr = reinterpret_cast<const void*>(v);
        if (!ptr) return;
        std::string name = nth_arg_name(site.args, i);
        if (GmBuffer* b = gm_find(ptr)) {
            if (!name.empty() && static_cast<const uint8_t*>(ptr) == b->base) b->name = name;
            return;
        }
        SrcLoc at{site.file, site.line};
        std::string what = name.empty() ? format("argument %zu", i + 1) : format("argument %zu ('%s')", i + 1,
                                                                                     name.c_str());
        if (const FreedGm* f = freed_at(ptr)) {
            record_fault("use-after-free", Severity::Error, at,
                         format("%s of %s is device buffer '%s', which %s freed at %s", what.c_str(), site.kernel,
                                f->name.c_str(), f->api, line_ref(f->at, at).c_str()));
        } else if (site.device) {
            // Legal while the kernel never reads it (a bias pointer passed only when there is a bias):
            // a GM access through it faults at the kernel's line instead (gm_out_of_bounds).
            rt().host_args.push_back(HostArg{static_cast<const uint8_t*>(ptr), format("%s of %s", what.c_str(),
                                                                                        site.kernel)});
        }
    }
}

template <class... A, size_t... I>
inline void check_launch_args(const LaunchSite& site, std::index_sequence<I...>, const A&... args) {
    (check_launch_arg(site, I, args), ...);
}

inline std::string launch_dir(int k) { return program().out + "/" + protocol::kLaunchPrefix + std::to_string(k); }

inline void print_faults(const LaunchSite& site, int k) {
    static const char* sev[] = {"error", "warning", "info"};
    for (auto& f : rt().faults)
        std::fprintf(stderr, "%s:%d: %s: %s (launch %d of %s, block %d) [%s]\n", f.file.c_str(), f.line,
                     sev[int(f.severity)], f.message.c_str(), k, site.kernel, f.block, f.code.c_str());
}

template <class F, class... A>
inline void run_launch(const LaunchSite& site, F& f, int64_t block_dim, A&... args) {
    Program& p = program();
    int k = ++launches_done();
    std::string dir = p.out.empty() ? std::string() : launch_dir(k);
    if (!dir.empty()) {
        ::mkdir(dir.c_str(), 0755);
        std::string meta = std::to_string(k) + "\t" + tsv_field(site.file) + "\t" + std::to_string(site.line) + "\t" +
                           std::to_string(site.column) + "\t" + tsv_field(site.kernel) + "\t" +
                           std::to_string(block_dim) + "\n";
        write_file(dir + "/" + protocol::kMeta, meta.data(), meta.size());
    }
    rt().faults.clear();
    trace_truncated() = false;
    rt().tracing = p.trace && !dir.empty();
    for (auto& g : rt().gm) gm_clear_writers(g);  // a race is between the blocks of one launch
    blk() = BlockState{};
    blk().idx = -1;  // findings at the launch itself belong to no block
    rt().host_args.clear();
    check_launch_args(site, std::index_sequence_for<A...>{}, args...);
    SrcLoc at{site.file, site.line};
    int status = 0;
    if (block_dim <= 0 || block_dim > 65535) {
        record_fault("acl-error", Severity::Error, at,
                     format("%s is launched on %lld blocks: the block count must be 1..65535", site.kernel,
                            (long long)block_dim));
        status = protocol::kExitAborted;
    }
    if (status == 0) {
        if (!dir.empty() && !p.sandboxed) {
            sandbox_enter_kernel();  // stays for the rest of the program (a filter cannot be lifted)
            p.sandboxed = true;
        }
        if (p.ub.size() != local_bytes()) {
            p.ub.assign(local_bytes(), 0);
            p.ub_init.assign(local_bytes(), 0);
        }
        int fd = dir.empty() ? -1 : ::open((dir + "/" + protocol::kCrash).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                                           0644);
        FILE* trace = rt().tracing ? std::fopen((dir + "/" + protocol::kTrace).c_str(), "w") : nullptr;
        rt().fault_fd = fd;
        rt().last = at;
        in_host_code() = false;
        status = run_blocks(block_dim, p.ub, p.ub_init, trace, [&] { f(args...); });
        in_host_code() = true;
        rt().fault_fd = p.host_crash_fd;
        std::fflush(stdout);
        if (trace) std::fclose(trace);
        if (fd >= 0) ::close(fd);
    }
    bool failed = status != 0;
    for (auto& fr : rt().faults) failed = failed || fr.severity == Severity::Error;
    if (failed) {
        p.sticky_error = kAclAicoreException;
        p.last_error = format("launch %d of %s faulted (see the sage-npu report)", k, site.kernel);
    }
    if (dir.empty()) {
        print_faults(site, k);
        return;
    }
    write_faults_to(dir);
    std::string done = std::to_string(status) + "\n";
    write_file(dir + "/done", done.data(), done.size());
}

// ---- stream capture (ACL graphs: aclmdlRICaptureBegin .. aclmdlRICaptureEnd) ----

// What a capture records instead of running it, to run each time the model executes: a copy,
// a memset, a kernel launch (its arguments copied as they were at the launch), an event.
struct CapturedTask {
    std::string kind;   // the task type aclmdlRIDebugJsonPrint names: KERNEL, MEMCPY_ASYNC, ...
    std::string what;   // the kernel, or the call
    SrcLoc at;
    std::function<void()> run;
};

// The one capture in progress (ACL captures per stream; the emulator has one host thread): the
// stream it began on, the streams that joined it by waiting on an event recorded in it, and the
// tasks in the order they were issued, which is an order the device may run them in.
struct CaptureState {
    bool active = false;
    const void* origin = nullptr;
    std::vector<const void*> streams;
    std::vector<const void*> events;
    std::vector<CapturedTask> tasks;
};

inline CaptureState& capture() {
    static CaptureState c;
    return c;
}

inline bool captured(const void* stream) {
    const CaptureState& c = capture();
    if (!c.active || !stream) return false;
    for (const void* s : c.streams)
        if (s == stream) return true;
    return false;
}

template <class T>
inline const void* as_stream(const T& v) {
    if constexpr (std::is_pointer<T>::value) return reinterpret_cast<const void*>(v);
    return nullptr;
}

}  // namespace sim
}  // namespace sage

#include "aicpu.h"  // AI CPU kernels: after the program state and host_report they use

namespace sage {
namespace sim {

// The stream of `<<<blockDim, l2ctrl, stream>>>`: the configuration's second element.
template <class... Cfg>
inline const void* launch_stream(const Cfg&... cfg) {
    const void* found = nullptr;
    size_t i = 0;
    ((found = i++ == 1 ? as_stream(cfg) : found), ...);
    return found;
}

// `kernel<<<blockDim, l2ctrl, stream>>>(args)` becomes `kernel_launch(site, kernel, blockDim,
// l2ctrl, stream)(args)`: the arguments keep their place, and convert to the kernel's
// parameters as in any call. On a stream being captured the launch is recorded, not run.
template <class F>
struct Launcher {
    LaunchSite site;
    F f;
    int64_t block_dim;
    const void* stream;
    template <class... A>
    void operator()(A&&... args) {
        if constexpr (is_aicpu_kernel<F>) {  // an AI CPU kernel: host code (aicpu.h)
            if (captured(stream)) {
                auto saved = std::make_tuple(std::decay_t<A>(args)...);
                F fn = f;
                int64_t blocks = block_dim;
                capture().tasks.push_back(CapturedTask{"KERNEL", site.kernel, SrcLoc{site.file, site.line},
                                                       [fn, blocks, saved]() mutable {
                                                           std::apply([&](auto&... a) { run_aicpu_launch(fn, blocks, a...); },
                                                                      saved);
                                                       }});
            } else {
                run_aicpu_launch(f, block_dim, args...);
            }
        } else {
            if (captured(stream)) {
                auto saved = std::make_tuple(std::decay_t<A>(args)...);
                LaunchSite s = site;
                F fn = f;
                int64_t blocks = block_dim;
                capture().tasks.push_back(CapturedTask{"KERNEL", site.kernel, SrcLoc{site.file, site.line},
                                                       [s, fn, blocks, saved]() mutable {
                                                           std::apply([&](auto&... a) { run_launch(s, fn, blocks, a...); },
                                                                      saved);
                                                       }});
                return;
            }
            run_launch(site, f, block_dim, args...);
        }
    }
};

template <class F, class... Cfg>
inline Launcher<std::decay_t<F>> kernel_launch(const LaunchSite& site, F&& f, int64_t block_dim, Cfg&&... cfg) {
    return Launcher<std::decay_t<F>>{site, f, block_dim, launch_stream(cfg...)};
}

// ---- start-up ----

inline bool program_start() {
    const char* out = std::getenv(protocol::kEnvProgramOut);
    if (!out || !*out) return false;
    Program& p = program();
    p.out = out;
    const char* trace = std::getenv(protocol::kEnvProgramTrace);
    p.trace = trace && std::strcmp(trace, "1") == 0;
    // `run --estimate-only`: every launch skips the cube's multiply-accumulate (runtime.h `values`)
    const char* values = std::getenv(protocol::kEnvProgramValues);
    if (values && std::strcmp(values, "0") == 0) rt().values = false;
    setvbuf(stdout, nullptr, _IOLBF, 0);  // a crash must not eat the lines already printed
    in_host_code() = true;
    install_signal_handlers(p.out + "/" + protocol::kHostCrash);
    p.host_crash_fd = rt().fault_fd;
    p.host_fd = ::open((p.out + "/" + protocol::kHostFaults).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return true;
}

// Before any global constructor of the program (this header comes first in its translation unit).
inline const bool program_started = program_start();

}  // namespace sim
}  // namespace sage
