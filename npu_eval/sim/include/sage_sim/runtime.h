// The emulator's runtime: the state of the block being run, the user's source locations,
// fault reporting, the global-memory registry and the per-block instruction trace.
// Every Ascend C API header reports through this file, so a check lives next to the
// operation it guards and always names the user's line, never a line in these headers.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#ifndef SAGE_CHIP_NAME
#define SAGE_CHIP_NAME "910B2"
#endif
#ifndef SAGE_CHIP_UB_BYTES
#define SAGE_CHIP_UB_BYTES (192 * 1024)
#endif
#ifndef SAGE_CHIP_FAMILY
#define SAGE_CHIP_FAMILY 910  // 910 (910B, "Atlas A2") or 310 (310P)
#endif

namespace sage {
namespace sim {

// A place in the user's source. API functions take one as a defaulted last parameter, so
// the compiler fills in the caller's file and line (GCC evaluates __builtin_FILE/LINE in a
// default argument at the call site, and that nests through SrcLoc::here()).
struct SrcLoc {
    const char* file;
    int line;
    static constexpr SrcLoc here(const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
        return SrcLoc{f, l};
    }
};
#define SAGE_LOC ::sage::sim::SrcLoc loc = ::sage::sim::SrcLoc::here()

enum class Pipe : uint8_t { S, V, MTE1, MTE2, MTE3, M, FIX, ALL };
inline const char* pipe_name(Pipe p) {
    static const char* names[] = {"S", "V", "MTE1", "MTE2", "MTE3", "M", "FIX", "ALL"};
    return names[static_cast<int>(p)];
}

enum class Severity : uint8_t { Error, Warning, Info };

// Thrown for a fault after which the block cannot go on (a deadlock, an access outside
// memory). The harness catches it per block and reports the run as a runtime error.
struct KernelAbort {
    const char* code;
};

struct FaultRecord {
    std::string code, file, message;
    int line;
    int block;
    Severity severity;
    int count;
};

// A buffer slot in the Unified Buffer: a queue buffer or a TBuf. Tensors refer to their slot
// and remember its generation, so a tensor used after FreeTensor is detected.
enum class SlotState : uint8_t { Free, Allocated, Queued, Scratch };
struct Slot {
    uint32_t addr;   // byte offset in UB
    uint32_t bytes;  // capacity
    uint32_t gen;
    SlotState state;
    int owner;       // queue id (TQue/TBuf), for messages and the trace
};

// One record per API call, for the cost model (DESIGN section 4) and the missing-sync check.
enum class TraceKind : uint8_t { Instr, Alloc, Free, EnQue, DeQue, SetFlag, WaitFlag, Barrier };
struct UbRange {
    uint32_t addr = 0, bytes = 0;
};
struct TraceRec {
    TraceKind kind;
    Pipe pipe;
    const char* api;    // static string
    const char* dtype;  // static string
    uint32_t elems;
    uint64_t bytes;     // bytes moved (copies) or processed (vector ops)
    uint32_t loc;       // interned location id
    int32_t a, b;       // queue/slot, event type/id, pipe
    UbRange w, r0, r1;  // UB written and read
};

struct GmBuffer {
    uint8_t* base;
    size_t bytes;
    int arg;            // index in the entry's parameter list
    std::string name;
    uint32_t* writer;   // per byte: (location id << 12) | (block + 1); null if not tracked
};

struct BlockState {
    int idx = 0, num = 1;
    uint8_t* ub = nullptr;     // the block's Unified Buffer
    uint8_t* ub_init = nullptr;  // per byte: written since its buffer was allocated
    uint32_t ub_used = 0;      // bytes handed out by TPipe::InitBuffer
    std::deque<Slot> slots;    // stable addresses for the block's lifetime
    int next_queue_id = 0;
    int flags_set[8][8] = {};  // pending SetFlag count per HardEvent kind and event id
    int next_event_id[8] = {};
    void* tpipe = nullptr;     // GetTPipePtr()
    std::vector<TraceRec> trace;
};

struct Runtime {
    BlockState block;
    std::vector<GmBuffer> gm;
    std::vector<FaultRecord> faults;
    std::vector<std::pair<std::string, int>> locs;  // interned (file, line); id = index + 1
    SrcLoc last{"", 0};         // the last user location an API call saw
    bool tracing = true;
    bool atomic_add = false;
    size_t ub_bytes = SAGE_CHIP_UB_BYTES;
    int fault_fd = -1;          // written by the crash handler
};

inline Runtime& rt() {
    static Runtime r;
    return r;
}
inline BlockState& blk() { return rt().block; }

// Called by every API entry: the fallback for operators that cannot take a location.
inline void touch(SrcLoc loc) { rt().last = loc; }

inline uint32_t intern(SrcLoc loc) {
    auto& locs = rt().locs;
    // Most calls repeat the previous location; scan from the end.
    for (size_t i = locs.size(); i-- > 0;) {
        if (locs[i].second == loc.line && locs[i].first == loc.file) return uint32_t(i + 1);
    }
    locs.emplace_back(loc.file, loc.line);
    return uint32_t(locs.size());
}

inline std::string vformat(const char* fmt, va_list ap) {
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return buf;
}

inline void record_fault(const char* code, Severity sev, SrcLoc loc, const std::string& msg) {
    for (auto& f : rt().faults) {
        if (f.code == code && f.line == loc.line && f.file == loc.file) {
            ++f.count;
            return;
        }
    }
    rt().faults.push_back(FaultRecord{code, loc.file, msg, loc.line, blk().idx, sev, 1});
}

// A finding after which the kernel can go on (the device would compute garbage or race).
inline void report(const char* code, Severity sev, SrcLoc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    record_fault(code, sev, loc, msg);
}

// A fault that stops the block: recorded, then the block unwinds to the harness.
[[noreturn]] inline void fail(const char* code, SrcLoc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    record_fault(code, Severity::Error, loc, msg);
    throw KernelAbort{code};
}

inline void trace(TraceRec r) {
    if (rt().tracing) rt().block.trace.push_back(r);
}
inline void trace_instr(Pipe pipe, const char* api, const char* dtype, uint32_t elems,
                        uint64_t bytes, SrcLoc loc, UbRange w = {}, UbRange r0 = {},
                        UbRange r1 = {}) {
    if (!rt().tracing) return;
    trace(TraceRec{TraceKind::Instr, pipe, api, dtype, elems, bytes, intern(loc), 0, 0, w, r0, r1});
}
inline void trace_event(TraceKind kind, Pipe pipe, const char* api, SrcLoc loc, int32_t a,
                        int32_t b, UbRange w = {}) {
    if (!rt().tracing) return;
    trace(TraceRec{kind, pipe, api, "", 0, 0, intern(loc), a, b, w, {}, {}});
}

// ---- global memory ----

inline GmBuffer* gm_find(const void* p) {
    auto* q = static_cast<const uint8_t*>(p);
    for (auto& b : rt().gm) {
        if (q >= b.base && q < b.base + b.bytes) return &b;
    }
    return nullptr;
}

inline GmBuffer* gm_nearest(const void* p, long long* offset) {
    auto* q = static_cast<const uint8_t*>(p);
    GmBuffer* best = nullptr;
    long long best_d = 0;
    for (auto& b : rt().gm) {
        long long d = q - b.base;
        long long dist = d < 0 ? -d : (d >= (long long)b.bytes ? d - (long long)b.bytes : 0);
        if (!best || dist < best_d) best = &b, best_d = dist, *offset = d;
    }
    return best;
}

// Checks that [p, p+bytes) lies inside one buffer the host passed.
inline GmBuffer* gm_check(const void* p, uint64_t bytes, SrcLoc loc, bool write) {
    GmBuffer* b = gm_find(p);
    if (b && static_cast<const uint8_t*>(p) + bytes <= b->base + b->bytes) return b;
    long long off = 0;
    GmBuffer* n = gm_nearest(p, &off);
    if (n) {
        fail("gm-out-of-bounds", loc,
             "%s %llu bytes at byte offset %lld of GM buffer '%s' (%zu bytes), %s by %lld bytes "
             "(block %d)",
             write ? "writes" : "reads", (unsigned long long)bytes, off, n->name.c_str(),
             n->bytes, off < 0 ? "before its start" : "past its end",
             off < 0 ? -off : off + (long long)bytes - (long long)n->bytes, blk().idx);
    }
    fail("gm-out-of-bounds", loc, "%s %llu bytes at an address outside every GM buffer",
         write ? "writes" : "reads", (unsigned long long)bytes);
}

// Records who wrote GM bytes (for a mismatch's source line) and flags two blocks writing
// the same bytes, which race on the device.
inline void gm_wrote(GmBuffer* b, const void* p, uint64_t bytes, SrcLoc loc) {
    if (!b->writer) return;
    uint32_t me = (intern(loc) << 12) | uint32_t((blk().idx + 1) & 0xFFF);
    size_t off = static_cast<const uint8_t*>(p) - b->base;
    uint32_t* w = b->writer + off;
    bool raced = false;
    int other = -1;
    for (uint64_t i = 0; i < bytes; ++i) {
        uint32_t prev = w[i];
        if (prev && (prev & 0xFFF) != (me & 0xFFF) && !rt().atomic_add && !raced) {
            raced = true;
            other = int(prev & 0xFFF) - 1;
        }
        w[i] = me;
    }
    if (raced) {
        report("gm-race", Severity::Error, loc,
               "block %d writes bytes of GM buffer '%s' that block %d also writes (from byte "
               "offset %zu); on the device the blocks run at the same time and race",
               blk().idx, b->name.c_str(), other, off);
    }
}

// ---- Unified Buffer ----

inline void ub_mark(UbRange r) {
    if (r.bytes) memset(blk().ub_init + r.addr, 1, r.bytes);
}
inline void ub_clear(UbRange r) {
    if (r.bytes) memset(blk().ub_init + r.addr, 0, r.bytes);
}
// Reports a read of UB bytes not written since their buffer was allocated.
inline void ub_check_init(UbRange r, const char* api, SrcLoc loc) {
    if (!r.bytes) return;
    const void* z = memchr(blk().ub_init + r.addr, 0, r.bytes);
    if (!z) return;
    size_t at = static_cast<const uint8_t*>(z) - (blk().ub_init + r.addr);
    report("uninitialized-read", Severity::Warning, loc,
           "%s reads UB bytes %zu.. of a %u-byte operand that nothing wrote since the buffer "
           "was allocated (block %d)",
           api, at, r.bytes, blk().idx);
}

inline const char* chip_name() { return SAGE_CHIP_NAME; }

}  // namespace sim
}  // namespace sage
