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
#include <algorithm>
#include <array>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol.h"

// SAGE_SIM_OUTLINE marks the emulator's heavier non-template functions. A kernel build that links
// the prebuilt runtime object (SAGE_SIM_PREBUILT_RUNTIME, npu_eval/prebuilt.py) keeps their bodies
// for inlining only (gnu_inline: -O0 never emits them) and calls the object's copy, which
// SAGE_SIM_RUNTIME_TU emits; every other build has plain inline functions.
#if defined(SAGE_SIM_RUNTIME_TU)
#define SAGE_SIM_OUTLINE inline __attribute__((used))
#elif defined(SAGE_SIM_PREBUILT_RUNTIME)
#define SAGE_SIM_OUTLINE inline __attribute__((gnu_inline))
#else
#define SAGE_SIM_OUTLINE inline
#endif

// SAGE_SIM_HOT marks the loops over every byte or element of a copy or a matmul: compiled at -O2
// whatever the kernel's own -O level (a kernel builds at -O0 for speed of building), with no
// multiply-add contraction, so the arithmetic is the same at every level and on every CPU. A
// helper such a function calls is -O0 in a -O0 build unless it is SAGE_SIM_HOT too, and a lambda
// inside it is never: the hot loops call neither.
#if defined(__GNUC__) && !defined(__clang__)
#define SAGE_SIM_HOT __attribute__((optimize("O2", "fp-contract=off")))
#else
#define SAGE_SIM_HOT
#endif

#ifndef SAGE_CHIP_NAME
#define SAGE_CHIP_NAME "910B2"
#endif
#ifndef SAGE_CHIP_UB_BYTES
#define SAGE_CHIP_UB_BYTES (192 * 1024)
#endif
#ifndef SAGE_CHIP_UB_RESERVED_BYTES
#define SAGE_CHIP_UB_RESERVED_BYTES 0
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
// and remember its generation, so a tensor used after FreeTensor is detected. The locations
// let a fault name the buffer the way the user wrote it: by its InitBuffer line.
enum class SlotState : uint8_t { Free, Allocated, Queued, Scratch };
struct Slot {
    uint32_t addr;       // byte offset in UB
    uint32_t bytes;      // capacity
    uint32_t gen;
    SlotState state;
    int owner;           // queue id (TQue/TBuf), for the trace
    const char* kind;    // "VECIN queue", "TBuf", ...
    SrcLoc init;         // the InitBuffer that carved it
    int index, count;    // which of the `count` buffers that InitBuffer gave
    SrcLoc alloc{"", 0}; // the last AllocTensor of it
    SrcLoc held{"", 0};  // the AllocTensor, EnQue or DeQue that last moved it
    SrcLoc freed{"", 0}; // the last FreeTensor of it
    // Set when the TBufPool holding it was Reset: the memory may hold another pool's buffers
    // now, so any later use of the buffer is a use-after-free (freed = the Reset's line).
    bool pool_reset = false;
    // A `__ubuf__` array of the C API (sage_sim/ubuf.h): its name as declared; `init` is the
    // declaration. Null for the C++ API's buffers.
    const char* name = nullptr;
};

// One record per API call, for the cost model (docs/profile.md) and the missing-sync check.
enum class TraceKind : uint8_t { Instr, Alloc, Free, EnQue, DeQue, SetFlag, WaitFlag, Barrier, XSet, XWait, Unit };
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
    // A GM<->UB copy's GM span, for the advisor's redundant-copy check: b bursts of gm_burst bytes
    // from the absolute address gm_addr, gm_gap bytes between them (gm_burst 0: not recorded).
    uint64_t gm_addr = 0;
    uint32_t gm_burst = 0, gm_gap = 0;
};

// A block's trace: records in fixed chunks, so a growing trace never copies what it holds (a vector
// reallocating and copying millions of records, element by element in a -O0 build, was most of a large
// cube kernel's run), and a finished block's chunks go to a small pool the next block fills first,
// without faulting in fresh pages. Records keep their order; only size, empty, back, push_back and
// iteration are offered, which is all the trace's users need.
class TraceLog {
public:
    static constexpr size_t kChunk = 4096;      // records per chunk
    static constexpr size_t kSpareChunks = 64;  // chunks the pool keeps (about 25 MB)

    TraceLog() = default;
    TraceLog(TraceLog&& o) noexcept { take(o); }
    TraceLog& operator=(TraceLog&& o) noexcept {
        if (this != &o) release(), take(o);
        return *this;
    }
    TraceLog(const TraceLog&) = delete;
    TraceLog& operator=(const TraceLog&) = delete;
    ~TraceLog() { release(); }

    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    TraceRec& back() { return cur_[-1]; }  // the last chunk holds at least one record when not empty
    // Random access and clear() keep the std::vector interface the test drivers read the trace with.
    const TraceRec& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
    TraceRec& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
    void clear() { release(); }
    void push_back(const TraceRec& r) {
        if (cur_ == end_) grow();
        *cur_++ = r;
        ++n_;
    }

    struct const_iterator {
        const TraceLog* log;
        size_t i;
        const TraceRec& operator*() const { return log->chunks_[i / kChunk][i % kChunk]; }
        const_iterator& operator++() { return ++i, *this; }
        bool operator!=(const const_iterator& o) const { return i != o.i; }
    };
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, n_}; }

private:
    std::vector<TraceRec*> chunks_;
    TraceRec *cur_ = nullptr, *end_ = nullptr;
    size_t n_ = 0;

    // Never destroyed: a block state may be destroyed after it at exit.
    static std::vector<TraceRec*>& spare() {
        static auto* s = new std::vector<TraceRec*>();
        return *s;
    }
    void grow() {
        std::vector<TraceRec*>& s = spare();
        TraceRec* c = s.empty() ? new TraceRec[kChunk] : s.back();
        if (!s.empty()) s.pop_back();
        chunks_.push_back(c);
        cur_ = c, end_ = c + kChunk;
    }
    void release() {
        for (TraceRec* c : chunks_) {
            if (spare().size() < kSpareChunks) spare().push_back(c);
            else delete[] c;
        }
        chunks_.clear();
        cur_ = end_ = nullptr, n_ = 0;
    }
    void take(TraceLog& o) {
        chunks_ = std::move(o.chunks_), cur_ = o.cur_, end_ = o.end_, n_ = o.n_;
        o.chunks_.clear(), o.cur_ = o.end_ = nullptr, o.n_ = 0;
    }
};

struct GmBuffer {
    uint8_t* base;
    size_t bytes;
    int arg;            // index in the entry's parameter list
    std::string name;
    // Per byte: (location id << protocol::kWriterBlockBits) | (block + 1); null until a kernel first
    // stores into a tracked buffer (gm_wrote), so inputs cost no writer array (4 bytes a byte).
    uint32_t* writer;
    // Whether stores are tracked: gm_map's buffers are, but past launch.h's kMaxTrackedGmBytes; a
    // buffer a test driver registers by hand is not.
    bool tracked = false;
    // Per byte: 1 once the host (aclrtMemcpy, aclrtMemset) or a kernel wrote it, across launches;
    // null when not tracked (task mode, GmAlloc memory the host writes through plain pointers).
    uint8_t* written = nullptr;
    // The writer entries outside [writer_lo, writer_hi) are zero: a launch clears, and a cross-block
    // wait re-tags, only the bytes stored since the last clear, not a large workspace every time.
    size_t writer_lo = SIZE_MAX, writer_hi = 0;
    // A cross-block wait re-tags every stored byte as the waiter's (gm_retag_writers). Rewriting them
    // all at each wait was most of a mixed kernel's run (a 256 MiB output, a wait per tile), so a wait
    // only counts an epoch and names the waiter (`alias`): the non-zero entries of a 4 KB page not
    // settled in the current epoch are the alias's, whatever they hold, and a store or a handoff read
    // first settles the pages it touches (gm_settle). epoch 0: no wait yet, every entry is exact.
    uint32_t epoch = 0, alias = 0;
    std::vector<uint32_t> page_epoch;  // per 4 KB page: the epoch its entries were last made exact in
};

constexpr size_t kWriterPageBits = 12;
// The entries of the pages of [lo, hi) exact in the current epoch.
inline void gm_settle(GmBuffer& b, size_t lo, size_t hi) {
    hi = std::min(hi, b.bytes);
    if (!b.epoch || !b.writer || lo >= hi) return;
    if (b.page_epoch.empty()) b.page_epoch.assign((b.bytes >> kWriterPageBits) + 1, 0);
    for (size_t pg = lo >> kWriterPageBits; pg <= (hi - 1) >> kWriterPageBits; ++pg) {
        if (b.page_epoch[pg] == b.epoch) continue;
        b.page_epoch[pg] = b.epoch;
        size_t from = std::max(pg << kWriterPageBits, b.writer_lo);
        size_t to = std::min({(pg + 1) << kWriterPageBits, b.writer_hi, b.bytes});
        for (size_t i = from; i < to; ++i)
            if (b.writer[i]) b.writer[i] = (b.writer[i] & ~uint32_t(0xFFF)) | b.alias;
    }
}
inline void gm_settle_all(GmBuffer& b) {
    if (b.writer_lo < b.writer_hi) gm_settle(b, b.writer_lo, b.writer_hi);
}

// The writer entries of `b` back to zero (nobody stored since).
inline void gm_clear_writers(GmBuffer& b) {
    if (b.writer && b.writer_lo < b.writer_hi) memset(b.writer + b.writer_lo, 0, (b.writer_hi - b.writer_lo) * 4);
    b.writer_lo = SIZE_MAX, b.writer_hi = 0;
}

// A GM buffer the program freed (aclrtFree, GmFree): an access to it names the free.
struct FreedGm {
    const uint8_t* base;
    size_t bytes;
    std::string name;
    const char* api;
    SrcLoc at;
};

// A launch argument that is not device memory (a host pointer, or one never set). On the device a
// kernel that never touches it runs fine, so the launch accepts it; a GM access through it faults
// naming the argument (gm_out_of_bounds).
struct HostArg {
    const uint8_t* p;
    std::string what;  // "argument 3 ('biasDevice') of kernel"
};

enum AtomicOp : int { AtomicNone = 0, AtomicAddOp = 1, AtomicMaxOp = 2, AtomicMinOp = 3 };

// One 64-byte line of a core's data cache (sage_sim/dcache.h): the GM bytes a scalar load
// brought in, [lo, hi) of them valid (a line can overhang its buffer's ends).
constexpr uintptr_t kDcacheLine = 64;
struct DcacheLine {
    std::array<uint8_t, kDcacheLine> bytes{};
    uint8_t lo = 0, hi = 0;
};

struct BlockState {
    int idx = 0, num = 1;
    // The core the block runs on (sage_sim/mix.h): g_coreType's value (1 AIC, 2 AIV), its AI Core
    // (`group`), its sub-block and the launch's AIV:AIC ratio. `fiber` numbers every core of a
    // launch once: a mixed launch's AIC 0 and AIV 0 share idx 0 but not the fiber.
    int32_t core = 2;
    int fiber = 0, group = 0, sub_idx = 0, sub_num = 1, ratio = 1;
    // Inside a Matmul API call on an AIV of a mixed kernel: the device's AIC serves it, the emulator
    // runs the cube work here (adv_api/matmul/matmul_intf.h), so the AIV-cube check stands aside.
    int cube_client = 0;
    // While an AIV's Matmul call is served by its AIC (a mixed kernel): the AIC's state, in whose
    // trace the call's cube work is recorded, and the cross-core id the AIC sets when the call's work
    // is done.
    BlockState* server = nullptr;
    int cube_reply = -1;
    // The AIC's one L1 copy of an ibshare matrix (a Matmul on the ibshare norm template; its
    // MatmulType's IBSHARE): the GM matrix it holds (by the tensor's address), the tiles of it copied
    // so far and their base blocks. A call of any Matmul object on this core that needs a tile
    // already there reads it instead of copying it again. The trace only: each AIV's emulated L1
    // still gets its own copy of the data.
    struct SharedL1 {
        uintptr_t org = 0;
        std::vector<uint64_t> tiles;
        int32_t blocks = 0;
    } shared_l1;
    uint8_t* ub = nullptr;     // the block's Unified Buffer
    uint8_t* ub_init = nullptr;  // per byte: written since its buffer was allocated
    uint32_t ub_used = 0;      // bytes handed out by TPipe::InitBuffer
    std::deque<Slot> slots;    // stable addresses for the block's lifetime
    int next_queue_id = 0;
    int flags_set[64][8] = {}; // pending SetFlag count per HardEvent (< 64) and event id
    int next_event_id[8] = {};
    void* tpipe = nullptr;     // GetTPipePtr()
    // SetAtomicAdd/Max/Min: UB->GM copies combine with GM (per core, as on the device) until
    // DisableDmaAtomic. Non-zero: the copy is a read-modify-write, so blocks do not race.
    int atomic_op = 0;         // AtomicOp
    // DataCopyPad's pad register (set_mov_pad_val): SetPadValue or an isPad copy writes it;
    // GM->UB copies with left/right padding fill the padding from it, isPad or not.
    uint64_t pad_bits = 0;
    bool pad_set = false;      // never written in this block: the padding is undefined
    // The registers LoadData's img2col form (LoadData3DParamsV2) reads when the call does not set
    // them: SetFmatrix's feature map (l1H, l1W, padList) for the left [0] and right [1] matrix,
    // SetLoadDataPaddingValue's bits, SetLoadDataBoundary's L1 byte bound (0: none).
    struct Fmatrix { uint16_t l1H = 0, l1W = 0; uint8_t pad[4] = {}; bool set = false; } fmatrix[2];
    uint64_t load3d_pad_bits = 0;
    bool load3d_pad_set = false;
    uint32_t load3d_boundary = 0;
    // The Fixpipe registers an L0C DataCopy (DataCopyCO12DstParams) reads: SetFixpipeNz2ndFlag's
    // ND matrices and strides, SetFixpipePreQuantFlag's scalar quantisation word, and
    // SetFixPipeConfig's per-column quantisation words (a local-array address in the Fixpipe
    // Buffer; -1 until set).
    uint16_t fix_nd_num = 1, fix_src_nd_stride = 0;
    uint32_t fix_dst_nd_stride = 0;
    uint64_t fix_pre_quant = 0;
    int64_t fix_quant_vec = -1;
    // L0C's unit flags (Mmad/Fixpipe unitFlag 2/3): one per 512-byte block, by local address / 512;
    // 1 = a Mmad with unitFlag 3 wrote it and no Fixpipe with unitFlag 3 has read it since.
    std::vector<uint8_t> unit_bits;
    // The core's data cache: scalar GM loads go through it, DMA does not (sage_sim/dcache.h).
    std::unordered_map<uintptr_t, DcacheLine> dcache;
    // The last scalar GM load, to tell a spin loop (the same value read again and again).
    uintptr_t spin_addr = 0;
    uint64_t spin_bits = 0, spin_epoch = 0;
    uint32_t spin_count = 0;
    int wait_pre_task_calls = 0, set_next_task_calls = 0;  // WaitPreTaskEnd, SetNextTaskStart
    void* sys_workspace = nullptr;  // SetSysWorkspace
    // The C API's `__ubuf__` arrays (sage_sim/ubuf.h): bytes placed so far, from UB byte 0 as the
    // device compiler places them, and the slot of each declaration.
    uint32_t ubuf_used = 0;
    std::vector<Slot*> ubuf_slots;
    Slot ub_whole{};           // what a raw UB address (no array around it) is checked against
    TraceLog trace;
};

struct Runtime {
    BlockState block;
    std::vector<GmBuffer> gm;
    std::vector<FreedGm> gm_freed;  // program mode: the most recent frees, newest last
    std::vector<HostArg> host_args;  // the running launch's arguments that are not device memory
    std::vector<FaultRecord> faults;
    std::vector<std::pair<std::string, int>> locs;  // interned (file, line); id = index + 1
    SrcLoc last{"", 0};         // the last user location an API call saw
    bool tracing = true;
    // false: an estimate-only run (the manifest's `values 0`): the cube's multiply-accumulate, the
    // one cost that grows as m*n*k, is skipped; every copy, check and trace record happens as usual
    bool values = true;
    size_t ub_bytes = SAGE_CHIP_UB_BYTES;
    size_t ub_reserved_bytes = SAGE_CHIP_UB_RESERVED_BYTES;  // the risky top of ub_bytes
    int fault_fd = -1;          // written by the crash handler
    // Counts GM stores (gm_mark_written): a block polling GM waits for it to move.
    uint64_t gm_epoch = 0;
    // Counts cross-core flag sets (CrossCoreSetFlag): a block waiting at CrossCoreWaitFlag waits for it to move.
    uint64_t xflag_epoch = 0;
    // Set by the cooperative runner (coop.h) while it runs: parks the calling block at a GM
    // poll so the others can run; the budget is how many fruitless polls make a deadlock.
    void (*poll)(SrcLoc loc, const std::string& why, int budget) = nullptr;
};

// The emulator's state. With SAGE_SIM_PREBUILT_RUNTIME it lives in the prebuilt runtime object
// (see harness_main), so a kernel's build does not generate its constructors and destructor.
#if defined(SAGE_SIM_PREBUILT_RUNTIME) && !defined(SAGE_SIM_RUNTIME_TU)
Runtime& rt();
#else
#ifndef SAGE_SIM_RUNTIME_TU
inline
#endif
Runtime& rt() {
    static Runtime r;
    return r;
}
#endif
inline BlockState& blk() { return rt().block; }

// Where the Unified Buffer nobody holds starts: above the pipe's buffers and every tensor the
// kernel carved (LocalMemAllocator, fixed addresses), on a 32-byte boundary. PopStackBuffer and
// the advanced APIs' forms without a sharedTmpBuffer take their scratch from here to the top.
// A carved tensor counts for the rest of the kernel (a pipe's Destroy frees its buffers, but
// tensors placed by address have no end): conservative, never under a live tensor.
inline uint32_t ub_free_base() {
    uint64_t top = blk().ub_used;
    for (const Slot& s : blk().slots)
        if (s.addr < rt().ub_bytes) top = std::max<uint64_t>(top, uint64_t(s.addr) + s.bytes);  // not L1/L0

    top = (top + 31) / 32 * 32;
    return top < rt().ub_bytes ? uint32_t(top) : uint32_t(rt().ub_bytes);
}

// Called by every API entry: the fallback for operators that cannot take a location.
inline void touch(SrcLoc loc) { rt().last = loc; }

SAGE_SIM_OUTLINE uint32_t intern(SrcLoc loc) {
    auto& locs = rt().locs;
    // Most calls repeat the previous location; scan from the end.
    for (size_t i = locs.size(); i-- > 0;) {
        if (locs[i].second == loc.line && locs[i].first == loc.file) return uint32_t(i + 1);
    }
    locs.emplace_back(loc.file, loc.line);
    return uint32_t(locs.size());
}

SAGE_SIM_OUTLINE std::string vformat(const char* fmt, va_list ap) {
    char buf[1536];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return buf;
}
SAGE_SIM_OUTLINE std::string format(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

// A fault already reported at this line only counts again: a check inside a loop must not
// format its message on every iteration.
SAGE_SIM_OUTLINE bool already_reported(const char* code, SrcLoc loc) {
    for (auto& f : rt().faults) {
        if (f.line == loc.line && f.code == code && f.file == loc.file) {
            ++f.count;
            return true;
        }
    }
    return false;
}

// A fault as severe as (or more than) one already reported at its line only counts again; a more
// severe one is kept beside it (a check that warned at a line and then stops the kernel there
// must not stop it without saying why).
SAGE_SIM_OUTLINE void record_fault(const char* code, Severity sev, SrcLoc loc, const std::string& msg) {
    for (auto& f : rt().faults) {
        if (f.line == loc.line && f.code == code && f.file == loc.file && f.severity <= sev) {
            ++f.count;
            return;
        }
    }
    rt().faults.push_back(FaultRecord{code, loc.file, msg, loc.line, blk().idx, sev, 1});
}

// A finding after which the kernel can go on (the device would compute garbage or race).
SAGE_SIM_OUTLINE void report(const char* code, Severity sev, SrcLoc loc, const char* fmt, ...) {
    if (already_reported(code, loc)) return;
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    rt().faults.push_back(FaultRecord{code, loc.file, msg, loc.line, blk().idx, sev, 1});
}

// A fault that stops the block: recorded, then the block unwinds to the harness.
[[noreturn]] SAGE_SIM_OUTLINE void fail(const char* code, SrcLoc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    record_fault(code, Severity::Error, loc, msg);
    throw KernelAbort{code};
}

// "line 23" when `at` is in the file of the fault being reported, else "name.h:23".
SAGE_SIM_OUTLINE std::string line_ref(SrcLoc at, SrcLoc from) {
    if (!at.line) return "an unknown line";
    if (from.file && at.file && std::strcmp(at.file, from.file) == 0) return format("line %d", at.line);
    const char* base = std::strrchr(at.file, '/');
    return format("%s:%d", base ? base + 1 : at.file, at.line);
}

// "the VECIN queue from InitBuffer at line 24 (2 buffers of 256 bytes)"
SAGE_SIM_OUTLINE std::string slot_origin(const Slot& s, SrcLoc from) {
    if (!s.init.line) return format("the %s (%u bytes)", s.kind, s.bytes);
    if (s.name) {
        return format("__ubuf__ array '%s' declared at %s (%u bytes)", s.name, line_ref(s.init, from).c_str(),
                      s.bytes);
    }
    if (s.count > 1)
        return format("the %s from InitBuffer at %s (%d buffers of %u bytes)", s.kind, line_ref(s.init, from).c_str(),
                      s.count, s.bytes);
    return format("the %s from InitBuffer at %s (%u bytes)", s.kind, line_ref(s.init, from).c_str(), s.bytes);
}

SAGE_SIM_OUTLINE Slot* slot_at(uint32_t addr) {
    Slot* found = nullptr;
    for (auto& s : blk().slots) {
        if (addr >= s.addr && addr < s.addr + s.bytes) found = &s;  // the latest carve wins after a Reset
    }
    return found;
}

// A kernel looping forever would grow the trace without bound (about 90 MB/s); past this many
// records per block the trace stops and says so, and the run's other checks go on.
constexpr size_t kMaxTraceRecords = 2u << 20;
inline bool& trace_truncated() {
    static bool t = false;
    return t;
}
// The trace the running code records into: its block's, or the AIC's while an AIV's Matmul call is
// served there.
inline TraceLog& trace_buf() {
    return rt().block.server ? rt().block.server->trace : rt().block.trace;
}
// Runs what it scopes without trace records (the work still happens): a copy the device does not
// make, whose data the emulator still needs (the ibshare cache's hits).
class TracePause {
public:
    explicit TracePause(bool pause) : was_(rt().tracing) {
        if (pause) rt().tracing = false;
    }
    ~TracePause() { rt().tracing = was_; }
    TracePause(const TracePause&) = delete;
    TracePause& operator=(const TracePause&) = delete;

private:
    bool was_;
};
inline void trace(TraceRec r) {
    if (!rt().tracing) return;
    TraceLog& t = trace_buf();
    if (t.size() >= kMaxTraceRecords) {
        trace_truncated() = true;
        return;
    }
    t.push_back(r);
}
SAGE_SIM_OUTLINE void trace_instr(Pipe pipe, const char* api, const char* dtype, uint32_t elems,
                        uint64_t bytes, SrcLoc loc, UbRange w = {}, UbRange r0 = {},
                        UbRange r1 = {}) {
    if (!rt().tracing) return;
    trace(TraceRec{TraceKind::Instr, pipe, api, dtype, elems, bytes, intern(loc), 0, 0, w, r0, r1});
}
// A GM transfer's shape for the cost model: the GM address's offset from a 512-byte boundary
// (full bandwidth wants 512-byte aligned addresses) and the number of bursts; a DataCopy also
// gives each burst's bytes and the gap between bursts, its GM span for the advisor.
SAGE_SIM_OUTLINE void trace_gm_shape(const void* gm, uint32_t bursts, uint32_t burst = 0, uint32_t gap = 0) {
    if (!rt().tracing || trace_buf().empty()) return;
    TraceRec& r = trace_buf().back();
    r.a = int32_t(reinterpret_cast<uintptr_t>(gm) % 512);
    r.b = int32_t(bursts);
    r.gm_addr = uint64_t(reinterpret_cast<uintptr_t>(gm));
    r.gm_burst = burst;
    r.gm_gap = gap;
}
SAGE_SIM_OUTLINE void trace_event(TraceKind kind, Pipe pipe, const char* api, SrcLoc loc, int32_t a,
                        int32_t b, UbRange w = {}) {
    if (!rt().tracing) return;
    trace(TraceRec{kind, pipe, api, "", 0, 0, intern(loc), a, b, w, {}, {}});
}

// ---- global memory ----

SAGE_SIM_OUTLINE GmBuffer* gm_find(const void* p) {
    auto* q = static_cast<const uint8_t*>(p);
    for (auto& b : rt().gm) {
        if (q >= b.base && q < b.base + b.bytes) return &b;
    }
    return nullptr;
}

SAGE_SIM_OUTLINE GmBuffer* gm_nearest(const void* p, long long* offset) {
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

// The GM buffer a pointer was derived from: the one holding it, else the nearest one that
// starts below it (kernels offset a buffer's base upwards, by block and tile). -1 if none.
// GlobalTensor::SetGlobalBuffer remembers it, so an access that runs off its buffer into a
// neighbouring one is still caught.
SAGE_SIM_OUTLINE int gm_home(const void* p) {
    auto* q = static_cast<const uint8_t*>(p);
    int below = -1;
    for (size_t i = 0; i < rt().gm.size(); ++i) {
        const GmBuffer& b = rt().gm[i];
        if (q >= b.base && q < b.base + b.bytes) return int(i);
        if (q >= b.base && (below < 0 || b.base > rt().gm[size_t(below)].base)) below = int(i);
    }
    return below;
}

// The host-memory launch argument an address outside every GM buffer came from: the nearest one at
// or below it, when it is nearer than the GM buffer `b` the access was bound to (as gm_home picks).
SAGE_SIM_OUTLINE const HostArg* host_arg_below(const uint8_t* q, const GmBuffer* b) {
    if (b && q >= b->base && q < b->base + b->bytes) return nullptr;
    const HostArg* best = nullptr;
    for (const HostArg& h : rt().host_args)
        if (h.p <= q && (!best || h.p > best->p)) best = &h;
    if (best && b && b->base <= q && b->base > best->p) return nullptr;
    return best;
}

[[noreturn]] SAGE_SIM_OUTLINE void gm_out_of_bounds(const GmBuffer* b, const uint8_t* q, uint64_t bytes, SrcLoc loc,
                                          bool write, const char* api, uint32_t elem) {
    const char* verb = write ? "writes" : "reads";
    if (!api) api = write ? "a GM write" : "a GM read";
    for (size_t i = rt().gm_freed.size(); i-- > 0;) {
        const FreedGm& f = rt().gm_freed[i];
        if (q + bytes > f.base && q < f.base + f.bytes) {
            fail("use-after-free", loc, "%s %s GM buffer '%s' (%zu bytes) after %s freed it at %s, in block %d: "
                 "free device memory only after the last launch that uses it", api, verb, f.name.c_str(), f.bytes,
                 f.api, line_ref(f.at, loc).c_str(), blk().idx);
        }
    }
    if (const HostArg* h = host_arg_below(q, b)) {
        fail("acl-error", loc, "%s %s %llu bytes through %s, which is host memory, not device memory (not from "
             "aclrtMalloc), in block %d: on the NPU the kernel cannot reach it. Allocate it with aclrtMalloc and "
             "copy the data in with aclrtMemcpy", api, verb, (unsigned long long)bytes, h->what.c_str(), blk().idx);
    }
    if (!b) {
        fail("gm-out-of-bounds", loc, "%s %s %llu bytes at an address outside every GM buffer the host passed "
             "(block %d): the GlobalTensor was never bound with SetGlobalBuffer, or its pointer is wrong",
             api, verb, (unsigned long long)bytes, blk().idx);
    }
    if (elem == 0) elem = 1;
    long long off = q - b->base;
    bool before = off < 0;
    long long over = before ? -off : off + (long long)bytes - (long long)b->bytes;
    const char* unit = elem == 1 ? "bytes" : "elements";
    long long e_off = off / (long long)elem, e_over = (over + elem - 1) / elem;
    unsigned long long e_n = bytes / elem, e_len = b->bytes / elem;
    fail("gm-out-of-bounds", loc,
         "%s %s %llu %s at %s %lld of GM buffer '%s', which holds %llu %s (%zu bytes): %lld %s %s, in block %d. %s",
         api, verb, e_n, unit, elem == 1 ? "byte" : "element", e_off, b->name.c_str(), e_len, unit, b->bytes, e_over,
         unit, before ? "before its start" : "past its end", blk().idx,
         before ? "Check the offset given to SetGlobalBuffer and the index into the GlobalTensor."
                : "A block's last tile must move only the elements left (clamp the count, and use DataCopyPad "
                  "for a length that is not whole 32-byte blocks); check that the tiling gives no block more "
                  "than the buffer holds.");
}

// Checks that [p, p+bytes) lies inside one buffer the host passed: `home` (an index into
// rt().gm from gm_home) when the caller knows which buffer the pointer came from.
inline void gm_mark_written(GmBuffer* b, const void* p, uint64_t bytes) {
    ++rt().gm_epoch;
    if (b && b->written && bytes) memset(b->written + (static_cast<const uint8_t*>(p) - b->base), 1, bytes);
}

// A kernel reading device memory that neither the host nor any kernel wrote: on the device it
// holds whatever was there, so the result depends on luck (program mode, aclrtMalloc memory).
inline void gm_check_written(const GmBuffer* b, const void* p, uint64_t bytes, SrcLoc loc, const char* api,
                             uint32_t elem) {
    size_t off = size_t(static_cast<const uint8_t*>(p) - b->base);
    const void* z = memchr(b->written + off, 0, bytes);
    if (!z || already_reported("uninitialized-gm-read", loc)) return;
    size_t first = size_t(static_cast<const uint8_t*>(z) - b->written);
    if (elem == 0) elem = 1;
    report("uninitialized-gm-read", Severity::Warning, loc,
           "%s reads %s[%zu], which neither the host nor any kernel wrote since %s, in block %d: device memory "
           "holds whatever was there before (often zeros in a new process, but nothing guarantees it). Copy data "
           "in first (aclrtMemcpy) or clear it (aclrtMemset)",
           api ? api : "a load", b->name.c_str(), first / elem, b->name.c_str(), blk().idx);
}

// The bounds half of gm_check: [p, p+bytes) inside one buffer, or the out-of-bounds fault (which
// does not return). A strided read checks its span here and the bytes it reads with
// gm_check_written (DataCopy with Nd2NzParams).
SAGE_SIM_OUTLINE GmBuffer* gm_bounds(const void* p, uint64_t bytes, SrcLoc loc, bool write, const char* api = nullptr,
                                     uint32_t elem = 1, int home = -1) {
    auto* q = static_cast<const uint8_t*>(p);
    GmBuffer* b = home >= 0 ? &rt().gm[size_t(home)] : gm_find(p);
    if (b && q >= b->base && bytes <= b->bytes && uint64_t(q - b->base) <= b->bytes - bytes) return b;
    if (!b) {
        long long off = 0;
        b = gm_nearest(p, &off);
    }
    gm_out_of_bounds(b, q, bytes, loc, write, api, elem);
}

SAGE_SIM_OUTLINE GmBuffer* gm_check(const void* p, uint64_t bytes, SrcLoc loc, bool write, const char* api = nullptr,
                          uint32_t elem = 1, int home = -1) {
    GmBuffer* b = gm_bounds(p, bytes, loc, write, api, elem, home);
    if (!write && b->written && bytes) gm_check_written(b, p, bytes, loc, api, elem);
    return b;
}

// ---- GM between the cores of a mixed launch ----
// On the device the cores of a mixed launch run at the same time: a core that reads (by DMA) GM
// bytes another core wrote is ordered after that write only by cross-core flags, a set after the
// write taken by a wait before the read, directly or through a chain of flags. Vector clocks: each
// core counts its sets; a set carries what its core has seen so far, a wait adds what the sets it
// took carried; a store stamps each byte with its core and that core's count; a read is ordered when
// the reader has seen the writer's count at the store. Unordered is a gm-race at the reader's line.
constexpr uint32_t kOrderCoreBits = 12;  // a stamp: (count << kOrderCoreBits) | (fiber + 1)
constexpr uint32_t kOrderMaxCount = (1u << (32 - kOrderCoreBits)) - 1;
struct GmOrder {
    bool active = false;
    std::vector<std::string> names;            // per fiber, as messages name the core
    std::vector<std::vector<uint32_t>> clock;  // per fiber: the count of each fiber it has seen
    // synchronisation id (mix.h) -> the clock its sets carried, and the waits yet to take it
    std::unordered_map<int, std::pair<std::vector<uint32_t>, int>> released;
    std::vector<std::vector<uint32_t>> stamp;  // per GM buffer (index in rt().gm), per byte; empty: not stored
};
inline GmOrder& gm_order() {
    static GmOrder o;
    return o;
}

// A launch starts, its cores named in fiber order: checked when it is mixed (and the stamp holds
// its fibers). gm_order_stop ends it.
SAGE_SIM_OUTLINE void gm_order_start(std::vector<std::string> names, bool mixed) {
    GmOrder& o = gm_order();
    o = GmOrder{};
    size_t n = names.size();
    o.active = mixed && n < (size_t(1) << kOrderCoreBits);
    if (!o.active) return;
    o.names = std::move(names);
    o.clock.assign(n, std::vector<uint32_t>(n, 0));
    for (size_t f = 0; f < n; ++f) o.clock[f][f] = 1;
    o.stamp.resize(rt().gm.size());
}
inline void gm_order_stop() { gm_order() = GmOrder{}; }

// A core's count moves on; past the stamp's room old stores would pass for new, so the check
// stops for the rest of the launch (a million sets).
inline void gm_order_tick(uint32_t& count) {
    if (++count >= kOrderMaxCount) gm_order().active = false;
}
inline void gm_order_join(std::vector<uint32_t>& into, const std::vector<uint32_t>& from) {
    for (size_t i = 0; i < into.size() && i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

// The running core sets a flag, part of synchronisation `id`: the increment carries what it has seen.
SAGE_SIM_OUTLINE void gm_order_release(int id) {
    GmOrder& o = gm_order();
    if (!o.active) return;
    auto& mine = o.clock[size_t(blk().fiber)];
    auto& carried = o.released[id].first;
    if (carried.empty()) carried.assign(mine.size(), 0);
    gm_order_join(carried, mine);
    gm_order_tick(mine[size_t(blk().fiber)]);
}
// Synchronisation `id` is complete: its increment reached `waits` counters.
inline void gm_order_publish(int id, int waits) {
    if (gm_order().active) gm_order().released[id].second += waits;
}
// The running core's wait took an increment of synchronisation `id`.
SAGE_SIM_OUTLINE void gm_order_acquire(int id) {
    GmOrder& o = gm_order();
    if (!o.active) return;
    auto it = o.released.find(id);
    if (it == o.released.end()) return;
    gm_order_join(o.clock[size_t(blk().fiber)], it->second.first);
    if (--it->second.second <= 0) o.released.erase(it);
}
// The running core is ordered after every store so far (a cross-block wait that is not a flag:
// IBWait, GroupBarrier, a handoff read), as gm_acquire treats the writers.
SAGE_SIM_OUTLINE void gm_order_acquire_all() {
    GmOrder& o = gm_order();
    if (!o.active) return;
    size_t me = size_t(blk().fiber);
    for (size_t f = 0; f < o.clock.size(); ++f) {
        if (f == me) continue;
        o.clock[me][f] = std::max(o.clock[me][f], o.clock[f][f]);
        gm_order_tick(o.clock[f][f]);
    }
}

inline std::vector<uint32_t>* gm_order_stamps(const GmBuffer* b) {
    GmOrder& o = gm_order();
    size_t i = size_t(b - rt().gm.data());
    // a buffer whose stores are not tracked is too large to track (launch.h, kMaxTrackedGmBytes): no stamps either
    return o.active && b && b->tracked && i < o.stamp.size() ? &o.stamp[i] : nullptr;
}
// The running core stored [p, p + bytes) of `b`.
inline void gm_order_wrote(const GmBuffer* b, const void* p, uint64_t bytes) {
    std::vector<uint32_t>* s = gm_order_stamps(b);
    if (!s || !bytes) return;
    if (s->empty()) s->assign(b->bytes, 0);
    const uint32_t f = uint32_t(blk().fiber);
    const uint32_t v = (gm_order().clock[f][f] << kOrderCoreBits) | (f + 1);
    size_t off = size_t(static_cast<const uint8_t*>(p) - b->base);
    std::fill(s->begin() + long(off), s->begin() + long(off + bytes), v);
}

SAGE_SIM_OUTLINE void gm_order_race(const GmBuffer* b, size_t byte, uint32_t writer, size_t first, uint64_t bytes,
                                    SrcLoc loc, const char* api, uint32_t elem) {
    if (already_reported("gm-race", loc)) return;
    SrcLoc where{"", 0};  // the store's line: the writer array keeps it (gm_acquire changes only the block)
    uint32_t id = b->writer ? b->writer[byte] >> protocol::kWriterBlockBits : 0;
    if (id && id <= rt().locs.size()) where = SrcLoc{rt().locs[id - 1].first.c_str(), rt().locs[id - 1].second};
    if (elem == 0) elem = 1;
    const GmOrder& o = gm_order();
    const char* name = b->name.c_str();
    report("gm-race", Severity::Error, loc,
           "%s reads %s[%zu..%zu] with %s, but %s stored %s[%zu] (at %s) and no cross-core flag orders that store "
           "before this read: on the device the cores run at the same time, so the read may get the bytes from "
           "before the store. Set a flag after the store (CrossCoreSetFlag on the writing core) and wait for it "
           "(CrossCoreWaitFlag) before reading",
           o.names[size_t(blk().fiber)].c_str(), name, first / elem, (first + bytes) / elem - 1, api ? api : "a load",
           o.names[writer].c_str(), name, byte / elem, line_ref(where, loc).c_str());
}

// The running core reads [p, p + bytes) of `b` by DMA: every byte another core stored must be
// ordered before it.
SAGE_SIM_OUTLINE void gm_order_read(const GmBuffer* b, const void* p, uint64_t bytes, SrcLoc loc, const char* api,
                                    uint32_t elem) {
    std::vector<uint32_t>* s = gm_order_stamps(b);
    if (!s || s->empty() || !bytes) return;
    const size_t me = size_t(blk().fiber);
    const std::vector<uint32_t>& seen = gm_order().clock[me];
    size_t off = size_t(static_cast<const uint8_t*>(p) - b->base);
    for (uint64_t i = 0; i < bytes; ++i) {
        uint32_t v = (*s)[off + i], f = v & ((1u << kOrderCoreBits) - 1);
        if (f == 0 || f - 1 == me || seen[f - 1] >= v >> kOrderCoreBits) continue;
        return gm_order_race(b, off + i, f - 1, off, bytes, loc, api, elem);
    }
}

SAGE_SIM_OUTLINE void gm_race(const GmBuffer* b, size_t byte, uint32_t prev, size_t first, uint64_t bytes, SrcLoc loc,
                    const char* api, uint32_t elem, bool identical = false) {
    if (already_reported("gm-race", loc)) return;
    int other = int(prev & 0xFFF) - 1;
    uint32_t id = prev >> 12;
    SrcLoc where{"", 0};
    if (id && id <= rt().locs.size()) where = SrcLoc{rt().locs[id - 1].first.c_str(), rt().locs[id - 1].second};
    if (elem == 0) elem = 1;
    const char* name = b->name.c_str();
    if (identical) {
        // Same bytes from every writer: the order cannot change the result, so not a fault.
        report("gm-race", Severity::Warning, loc,
               "block %d writes %s[%zu..%zu] with %s, which block %d already wrote (at %s) with the same values: "
               "the result does not depend on the order, but the blocks duplicate the work. Give each block its "
               "own slice of the output (check the offset given to SetGlobalBuffer)",
               blk().idx, name, first / elem, (first + bytes) / elem - 1, api ? api : "a store", other,
               line_ref(where, loc).c_str());
        return;
    }
    report("gm-race", Severity::Error, loc,
           "block %d writes %s[%zu..%zu] with %s, but block %d already wrote %s[%zu] (at %s): on the device the "
           "blocks run at "
           "the same time, so which value lands is a race. Give each block its own slice of the output (check "
           "the offset given to SetGlobalBuffer and the tile index), or accumulate with SetAtomicAdd",
           blk().idx, name, first / elem, (first + bytes) / elem - 1, api ? api : "a store", other, name,
           byte / elem, line_ref(where, loc).c_str());
}

// Records who wrote GM bytes (for a mismatch's source line) and flags two blocks writing
// the same bytes, which race on the device. On the hot path of every UB->GM copy, so one pass
// over the writer array, memory-bound (four writer bytes per output byte): the race test is
// a compare that a correct kernel never takes.
// `identical`: the store left the bytes as they were (the caller compared before writing).
SAGE_SIM_OUTLINE SAGE_SIM_HOT void gm_wrote(GmBuffer* b, const void* p, uint64_t bytes, SrcLoc loc,
                                          const char* api = nullptr, uint32_t elem = 1, bool identical = false) {
    gm_mark_written(b, p, bytes);
    gm_order_wrote(b, p, bytes);
    if (!b->tracked || !bytes) return;
    if (!b->writer) {
        b->writer = static_cast<uint32_t*>(std::calloc(b->bytes ? b->bytes : 1, sizeof(uint32_t)));
        if (!b->writer) {  // no room for the bookkeeping: the stores go untracked, the kernel runs on
            b->tracked = false;
            return;
        }
    }
    const uint32_t mine = uint32_t(blk().fiber + 1) & 0xFFF;
    const uint32_t me = (intern(loc) << protocol::kWriterBlockBits) | mine;
    size_t off = size_t(static_cast<const uint8_t*>(p) - b->base);
    gm_settle(*b, off, size_t(off + bytes));
    if (off < b->writer_lo) b->writer_lo = off;
    if (off + bytes > b->writer_hi) b->writer_hi = size_t(off + bytes);
    uint32_t* w = b->writer + off;
    if (blk().atomic_op) {
        for (uint64_t i = 0; i < bytes; ++i) w[i] = me;  // not std::fill: -O0 in a -O0 build
        return;
    }
    uint64_t hit = bytes;
    uint32_t hit_prev = 0;
    for (uint64_t i = 0; i < bytes; ++i) {
        uint32_t prev = w[i];
        if (__builtin_expect(prev != 0 && (prev & 0xFFF) != mine, 0) && hit == bytes) hit = i, hit_prev = prev;
        w[i] = me;
    }
    if (hit != bytes) gm_race(b, off + hit, hit_prev, off, bytes, loc, api, elem, identical);
}

// A block that passed a cross-block wait (IBWait, WaitPreBlock, GroupBarrier, a cross-core flag) is
// ordered after what the blocks it waited for wrote before releasing it: its later stores to those
// bytes are not races. The writer array keeps no time, so every byte another block wrote so far is
// re-tagged as this block's (same line): a coarse happens-before that also excuses blocks the
// waiter did not wait for.
SAGE_SIM_OUTLINE void gm_retag_writers() {
    const uint32_t mine = uint32_t(blk().fiber + 1) & 0xFFF;
    for (auto& b : rt().gm) {
        if (!b.writer || b.writer_lo >= b.writer_hi) continue;
        ++b.epoch, b.alias = mine;  // every stored entry is now the waiter's (GmBuffer.alias)
    }
}
// A wait that is not a cross-core flag: coarse for the mixed launch's reads too (gm_order_acquire_all).
SAGE_SIM_OUTLINE void gm_acquire() {
    gm_retag_writers();
    gm_order_acquire_all();
}

// A read meant for cross-core handoff (ReadGmByPassDCache) that returns bytes another block
// stored has seen that block's flag: it is ordered after that block's stores (gm_acquire).
inline void gm_read_acquires(const GmBuffer* b, const void* p, uint64_t bytes) {
    if (!b || !b->writer) return;
    const uint32_t mine = uint32_t(blk().fiber + 1) & 0xFFF;
    const size_t off = size_t(static_cast<const uint8_t*>(p) - b->base);
    gm_settle(*const_cast<GmBuffer*>(b), off, size_t(off + bytes));
    const uint32_t* w = b->writer + off;
    for (uint64_t i = 0; i < bytes; ++i)
        if (w[i] && (w[i] & 0xFFF) != mine) return gm_acquire();
}

// ---- Unified Buffer ----

inline void ub_mark(UbRange r) {
    if (r.bytes) memset(blk().ub_init + r.addr, 1, r.bytes);
}
inline void ub_clear(UbRange r) {
    if (r.bytes) memset(blk().ub_init + r.addr, 0, r.bytes);
}
// Whether every byte of `r` was written since its buffer was allocated.
inline bool ub_is_init(UbRange r) { return !r.bytes || !memchr(blk().ub_init + r.addr, 0, r.bytes); }
// The stale bytes a fresh Unified Buffer holds (the harness fills it; a C API `__ubuf__` array
// gets them when it is placed).
constexpr uint8_t kUbStale = 0x5A;

// C API kernels may store into a `__ubuf__` array with plain scalar code (`x[i] = 0;`), which no
// API call sees. A byte of such an array (or at a raw UB address) that the bookkeeping calls
// unwritten but that no longer holds the stale fill was written that way: mark it written.
// False only when a scalar store wrote the fill value itself.
SAGE_SIM_OUTLINE bool ub_adopt_scalar_writes(UbRange r) {
    const Slot* s = slot_at(r.addr);
    if (s && !s->name) return false;
    bool any = false;
    uint8_t* init = blk().ub_init + r.addr;
    const uint8_t* v = blk().ub + r.addr;
    for (uint32_t i = 0; i < r.bytes; ++i) {
        if (!init[i] && v[i] != kUbStale) init[i] = 1, any = true;
    }
    return any;
}

// Reports a read of UB bytes not written since their buffer was allocated.
SAGE_SIM_OUTLINE void ub_check_init(UbRange r, const char* api, SrcLoc loc) {
    if (!r.bytes) return;
    const void* z = memchr(blk().ub_init + r.addr, 0, r.bytes);
    if (z && ub_adopt_scalar_writes(r)) z = memchr(blk().ub_init + r.addr, 0, r.bytes);
    if (!z || already_reported("uninitialized-read", loc)) return;
    size_t at = static_cast<const uint8_t*>(z) - (blk().ub_init + r.addr);
    const Slot* s = slot_at(r.addr);
    std::string since = "its buffer was set up";
    std::string what = "a UB buffer";
    if (s) {
        what = slot_origin(*s, loc);
        if (s->name) since = format("its declaration at %s", line_ref(s->init, loc).c_str());
        else if (s->state == SlotState::Scratch) since = format("InitBuffer at %s", line_ref(s->init, loc).c_str());
        else if (s->alloc.line) since = format("AllocTensor at %s", line_ref(s->alloc, loc).c_str());
    }
    report("uninitialized-read", Severity::Warning, loc,
           "%s reads bytes %zu..%u of an operand that nothing wrote since %s (a tensor of %s), in block %d: it "
           "holds stale data. Fill it first (DataCopy in, Duplicate, or the op meant to produce it)",
           api, at, r.bytes - 1, since.c_str(), what.c_str(), blk().idx);
}

inline const char* chip_name() { return SAGE_CHIP_NAME; }

}  // namespace sim
}  // namespace sage
