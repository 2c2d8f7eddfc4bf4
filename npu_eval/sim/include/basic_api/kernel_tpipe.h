// TPipe, TQue and TBuf: the Unified Buffer's allocator and the queues that carry the
// synchronisation between pipes. Deadlocks the device would hang on (DeQue of an empty
// queue, AllocTensor with every buffer taken) stop the block here, at the user's line.
#pragma once

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "kernel_tensor.h"

namespace AscendC {

namespace detail {
// The pipe that fills a queue's buffers and the one that drains them: GM -> UB/L1 is MTE2,
// L1 -> L0A/L0B/BiasTable is MTE1, the cube (M) writes L0C, Fixpipe (FIX) empties it, UB -> GM
// is MTE3, the rest is the vector unit.
inline sage::sim::Pipe producer_pipe(TPosition pos) {
    using sage::sim::Pipe;
    switch (pos_mem(pos)) {
        case sage::sim::Mem::L1: return Pipe::MTE2;
        case sage::sim::Mem::L0A: case sage::sim::Mem::L0B: case sage::sim::Mem::BT: return Pipe::MTE1;
        case sage::sim::Mem::L0C: return Pipe::M;
        case sage::sim::Mem::FB: return Pipe::FIX;  // L1 -> Fixpipe Buffer is the FIX pipe's copy
        default: return pos == TPosition::VECIN ? Pipe::MTE2 : Pipe::V;
    }
}
inline sage::sim::Pipe consumer_pipe(TPosition pos) {
    using sage::sim::Pipe;
    switch (pos_mem(pos)) {
        case sage::sim::Mem::L1: return Pipe::MTE1;
        case sage::sim::Mem::L0A: case sage::sim::Mem::L0B: case sage::sim::Mem::BT: return Pipe::M;
        case sage::sim::Mem::L0C: case sage::sim::Mem::FB: return Pipe::FIX;
        default: return pos == TPosition::VECOUT ? Pipe::MTE3 : Pipe::V;
    }
}
inline const char* queue_kind(TPosition pos) {
    switch (pos) {
        case TPosition::VECIN: return "VECIN queue";
        case TPosition::VECOUT: return "VECOUT queue";
        case TPosition::VECCALC: return "VECCALC queue";
        case TPosition::A1: return "A1 (L1) queue";
        case TPosition::B1: return "B1 (L1) queue";
        case TPosition::C1: return "C1 (L1) queue";
        case TPosition::TSCM: return "TSCM (L1) queue";
        case TPosition::A2: return "A2 (L0A) queue";
        case TPosition::B2: return "B2 (L0B) queue";
        case TPosition::CO1: return "CO1 (L0C) queue";
        case TPosition::C2: return "C2 (BiasTable) queue";
        case TPosition::C2PIPE2GM: return "C2PIPE2GM (Fixpipe Buffer) queue";
        default: return "queue";
    }
}
// The memory a queue's buffers live in: its source position's, unless that is the UB or GM.
constexpr sage::sim::Mem queue_mem(TPosition src, TPosition dst) {
    return pos_mem(src) != sage::sim::Mem::UB ? pos_mem(src) : pos_mem(dst);
}
// What each buffer of a queue is doing, for a deadlock message: "buffer 0 AllocTensor'd at
// line 41 and not yet EnQue'd; buffer 1 ...".
SAGE_SIM_OUTLINE std::string holders(const std::vector<sage::sim::Slot*>& slots, sage::sim::SrcLoc from) {
    using namespace sage::sim;
    std::string out;
    for (size_t i = 0; i < slots.size(); ++i) {
        const Slot& s = *slots[i];
        const char* what = s.state == SlotState::Free       ? "free"
                           : s.state == SlotState::Queued   ? "in the queue since EnQue at"
                           : s.held.line == s.alloc.line && s.held.file == s.alloc.file
                               ? "taken by AllocTensor at"
                               : "taken by DeQue at";
        out += format("%sbuffer %zu %s", i ? "; " : "", i, what);
        if (s.state != SlotState::Free) out += " " + line_ref(s.held, from);
    }
    return out;
}
}  // namespace detail

class TPipe;

// A buffer handle of a custom TBufPool (CANN: a TBufType*, passed around as uint8_t*).
using TBufHandle = uint8_t*;

namespace detail {
// A TBufPool's share of the Unified Buffer, [start, start + len), handed out from cur upward.
struct PoolState {
    uint32_t start = 0, len = 0, cur = 0;
    uint8_t bufs = 0;        // buffer handles in use (a custom pool's GetCurBufSize)
    bool live = false;       // InitBufPool gave it memory, and no Reset took it back since
    sage::sim::SrcLoc init{"", 0};   // that InitBufPool
    sage::sim::SrcLoc reset{"", 0};  // the last Reset
    uint8_t* handles = nullptr;      // the pool's buffer handles (a custom pool's GetBufHandle)
    uint32_t handle_count = 0;
    struct Part {
        sage::sim::SrcLoc loc;
        int num;
        uint32_t bytes;
    };
    std::vector<Part> parts;                // what InitBuffer/InitBufPool took from it, for messages
    std::vector<sage::sim::Slot*> slots;    // its buffers: a Reset takes them back
};
// Pools reach each other's state (a pool shares or carves another) through this one friend.
struct PoolAccess {
    template <class P>
    static PoolState& of(P& pool) {
        return pool.tBufPoolImpl;
    }
};

inline uint32_t round32(uint32_t len) { return uint32_t((uint64_t(len) + 31u) / 32u * 32u); }

SAGE_SIM_OUTLINE sage::sim::Slot* carve_at(uint32_t addr, uint32_t bytes, int owner, const char* kind, int index, int count,
                                 sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    auto& b = blk();
    b.slots.push_back(Slot{addr, bytes, 0, SlotState::Free, owner, kind, loc, index, count});
    ub_clear({addr, bytes});
    return &b.slots.back();
}

// "the TBufPool from InitBufPool at line 30 (65536 bytes from UB byte 0)"
SAGE_SIM_OUTLINE std::string pool_origin(const PoolState& p, sage::sim::SrcLoc from) {
    return sage::sim::format("the TBufPool from InitBufPool at %s (%u bytes from UB byte %u)",
                             sage::sim::line_ref(p.init, from).c_str(), p.len, p.start);
}

// A pool must hold memory before anything is placed in it. On the 910B, Reset gives the
// memory back (CANN zeroes the pool's start and length), so a buffer placed afterwards would
// land at UB byte 0, over the TPipe's first buffers.
SAGE_SIM_OUTLINE void pool_require_live(const PoolState& p, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (p.live) return;
    if (p.reset.line) {
        fail("ub-overflow", loc,
             "%s on a TBufPool that Reset at %s emptied, in block %d: Reset gives the pool's memory back (its "
             "start and length become 0), so the device would place this buffer at UB byte 0, over other "
             "buffers. Give the pool memory again with InitBufPool first, or use a pool that shares its "
             "memory (InitBufPool(newPool, len, oldPool) before the Reset)",
             api, line_ref(p.reset, loc).c_str(), blk().idx);
    }
    fail("ub-overflow", loc,
         "%s on a TBufPool that has no memory, in block %d: give it memory with pipe.InitBufPool(pool, bytes) "
         "(or parentPool.InitBufPool(pool, bytes)) before its first InitBuffer",
         api, blk().idx);
}

// Takes num x bytes from the pool at its cur address; an InitBuffer that does not fit the pool
// stops here, at its line.
SAGE_SIM_OUTLINE uint32_t pool_take(PoolState& p, const char* api, int num, uint32_t bytes, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    pool_require_live(p, api, loc);
    uint64_t need = uint64_t(num) * bytes;
    uint64_t end = uint64_t(p.start) + p.len;
    if (p.cur + need > end) {
        std::string earlier;
        for (size_t i = 0; i < p.parts.size(); ++i) {
            if (i == 4) {
                earlier += ", ...";
                break;
            }
            earlier += format("%s%d x %u at %s", i ? ", " : "", p.parts[i].num, p.parts[i].bytes,
                              line_ref(p.parts[i].loc, loc).c_str());
        }
        fail("ub-overflow", loc,
             "%s of %d x %u bytes needs %llu bytes of %s, but earlier calls already hold %u of it (%s): %llu in "
             "all, past the pool's end by %llu bytes, in block %d. Give the pool more memory in its InitBufPool, "
             "or shrink the buffers",
             api, num, bytes, (unsigned long long)need, pool_origin(p, loc).c_str(), p.cur - p.start,
             earlier.empty() ? "none" : earlier.c_str(), (unsigned long long)(p.cur - p.start + need),
             (unsigned long long)(p.cur + need - end), blk().idx);
    }
    uint32_t at = p.cur;
    p.cur += uint32_t(need);
    p.parts.push_back({loc, num, bytes});
    return at;
}

SAGE_SIM_OUTLINE void pool_assign(PoolState& p, uint32_t start, uint32_t len, sage::sim::SrcLoc loc) {
    p.start = p.cur = start;
    p.len = len;
    p.bufs = 0;
    p.live = true;
    p.init = loc;
    p.parts.clear();
    p.slots.clear();
}

// Shares `share`'s memory: CANN gives the new pool the other's start and length.
SAGE_SIM_OUTLINE void pool_share(PoolState& p, const PoolState& share, uint32_t len, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    pool_require_live(share, api, loc);
    uint32_t bytes = round32(len);
    if (bytes > share.len) {
        fail("ub-overflow", loc,
             "%s of %u bytes sharing %s, which holds %u bytes, in block %d: a pool sharing another's memory must "
             "not be longer than it. Ask for at most %u bytes, or enlarge the shared pool",
             api, bytes, pool_origin(share, loc).c_str(), share.len, blk().idx, share.len);
    }
    pool_assign(p, share.start, share.len, loc);
}

// Reset: the pool's buffers go back (a tensor or queue from them used later is reported), and
// on the 910B the pool itself is emptied. CANN waits for each buffer's pending free event here;
// the trace records a full barrier so the missing-sync check sees the next pool's writes ordered
// after this pool's last reads of the same memory.
SAGE_SIM_OUTLINE void pool_reset(PoolState& p, const char* api, sage::sim::SrcLoc loc, bool traced) {
    using namespace sage::sim;
    if (traced) trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
    for (Slot* s : p.slots) {
        s->state = SlotState::Free;
        ++s->gen;
        s->freed = loc;
        s->pool_reset = true;
    }
    p.slots.clear();
    p.parts.clear();
    p.bufs = 0;
    p.reset = loc;
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    p.cur = p.start;  // the 950's Reset keeps the pool's memory and rewinds it
#else
    p.start = p.cur = p.len = 0;
    p.live = false;
#endif
}

// A custom pool's InitBufHandle: the buffer at `addr` must lie inside the pool, and its handle
// inside the pool's BUFID_SIZE handles.
SAGE_SIM_OUTLINE sage::sim::Slot* pool_place(PoolState& p, const char* api, uint32_t index, TBufHandle handle, uint32_t addr,
                                   uint32_t len, int owner, const char* kind, int count, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    pool_require_live(p, api, loc);
    if (p.handles && handle) {
        int64_t at = int64_t(handle - p.handles) + int64_t(index);
        if (at < 0 || at >= int64_t(p.handle_count)) {
            fail("ub-overflow", loc,
                 "%s for buffer handle %lld of a custom TBufPool declared with %u handles (EXTERN_IMPL_BUFPOOL's "
                 "BUFID_SIZE), in block %d: on the device a handle past the end overwrites the pool's other "
                 "members. Declare the pool with more handles, or give it fewer buffers",
                 api, (long long)at, p.handle_count, blk().idx);
        }
    }
    uint64_t end = uint64_t(p.start) + p.len;
    if (addr < p.start || addr + uint64_t(len) > end) {
        uint64_t past = addr + uint64_t(len) > end ? addr + uint64_t(len) - end : 0;
        fail("ub-overflow", loc,
             "%s places buffer %u (%u bytes) at UB bytes [%u, %llu), outside %s, in block %d%s. The pool's "
             "InitBuffer hands out more than InitBufPool gave it: give the pool more memory, or shrink the buffers",
             api, index, len, addr, (unsigned long long)(addr + uint64_t(len)), pool_origin(p, loc).c_str(),
             blk().idx, past ? format(" (%llu bytes past its end)", (unsigned long long)past).c_str() : "");
    }
    Slot* s = carve_at(addr, len, owner, kind, int(index), count, loc);
    p.slots.push_back(s);
    return s;
}

[[noreturn]] inline void pool_reset_use(const char* api, const sage::sim::Slot& s, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    fail("use-after-free", loc,
         "%s on %s after TBufPool::Reset at %s took the buffer back, in block %d: the pool's memory may hold "
         "another pool's buffers now. Finish with a pool's tensors before its Reset, and InitBuffer the "
         "queue or TBuf again (in a live pool) before using it after",
         api, slot_origin(s, loc).c_str(), line_ref(s.freed, loc).c_str(), blk().idx);
}
}  // namespace detail

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    __aicore__ TQueBind() : id_(sage::sim::blk().next_queue_id++) {}

    template <typename T>
    __aicore__ inline LocalTensor<T> AllocTensor(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        if (slots_.empty()) {
            fail("queue-deadlock", loc,
                 "AllocTensor on a %s that has no buffers, in block %d: give it memory with "
                 "pipe.InitBuffer(queue, num, bytes) before the first AllocTensor",
                 detail::queue_kind(src), blk().idx);
        }
        if (slots_[0]->pool_reset) detail::pool_reset_use("AllocTensor", *slots_[0], loc);
        // The device hands out a queue's buffers in a ring, so with BUFFER_NUM 2 consecutive
        // tiles land in different buffers (that is what lets the pipes overlap).
        for (size_t k = 0; k < slots_.size(); ++k) {
            size_t i = (next_alloc_ + k) % slots_.size();
            Slot* s = slots_[i];
            if (s->state == SlotState::Free) {
                s->state = SlotState::Allocated;
                ++s->gen;
                next_alloc_ = i + 1;
                s->alloc = s->held = loc;
                ub_clear({s->addr, s->bytes});
                trace_event(TraceKind::Alloc, detail::producer_pipe(src), "AllocTensor", loc, id_, int32_t(i),
                            {s->addr, s->bytes});
                return tensor_of<T>(s);
            }
        }
        fail("queue-deadlock", loc,
             "AllocTensor on %s, but all %zu of its buffers are in use (%s), in block %d: the device waits "
             "here forever. FreeTensor each tensor once done with it (a FreeTensor is missing?), or give the "
             "queue more buffers in InitBuffer",
             slot_origin(*slots_[0], loc).c_str(), slots_.size(), detail::holders(slots_, loc).c_str(), blk().idx);
    }

    template <typename T>
    __aicore__ inline bool EnQue(const LocalTensor<T>& tensor, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        Slot* s = own(tensor, "EnQue", loc);
        if (s->state == SlotState::Queued) {
            fail("queue-deadlock", loc,
                 "EnQue of a tensor that is already in %s (EnQue at %s), in block %d: each AllocTensor is "
                 "EnQue'd once, then DeQue'd",
                 slot_origin(*s, loc).c_str(), line_ref(s->held, loc).c_str(), blk().idx);
        }
        s->state = SlotState::Queued;
        s->held = loc;
        fifo_.push_back(s);
        trace_event(TraceKind::EnQue, detail::producer_pipe(src), "EnQue", loc, id_, index_of(s));
        return true;
    }

    template <typename T>
    __aicore__ inline LocalTensor<T> DeQue(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        if (fifo_.empty()) {
            const Slot* pending = nullptr;
            for (Slot* s : slots_)
                if (s->state == SlotState::Allocated && s->held.line == s->alloc.line && s->held.file == s->alloc.file)
                    pending = s;
            std::string hint = pending
                ? format("the tensor from AllocTensor at %s was never EnQue'd: EnQue it once it is filled",
                         line_ref(pending->alloc, loc).c_str())
                : std::string("an EnQue is missing, or this is one DeQue too many");
            if (slots_.empty()) hint = "it has no buffers either: InitBuffer it, then AllocTensor, fill and EnQue";
            fail("queue-deadlock", loc,
                 "DeQue on %s%s, which holds no tensor, in block %d: the device waits here forever; %s",
                 slots_.empty() ? "a " : "",
                 slots_.empty() ? detail::queue_kind(src) : slot_origin(*slots_[0], loc).c_str(), blk().idx,
                 hint.c_str());
        }
        Slot* s = fifo_.front();
        if (s->pool_reset) detail::pool_reset_use("DeQue", *s, loc);
        fifo_.pop_front();
        s->state = SlotState::Allocated;
        s->held = loc;
        trace_event(TraceKind::DeQue, detail::consumer_pipe(dst), "DeQue", loc, id_, index_of(s));
        return tensor_of<T>(s);
    }
    // CANN also lets DeQue/EnQue take the tensor type implicitly through these overloads.
    template <typename T>
    __aicore__ inline LocalTensor<T> DeQue(LocalTensor<T>& into, SAGE_LOC) {
        into = DeQue<T>(loc);
        return into;
    }

    template <typename T>
    __aicore__ inline void FreeTensor(LocalTensor<T>& tensor, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        Slot* s = own(tensor, "FreeTensor", loc);
        if (s->state == SlotState::Queued) {
            for (auto it = fifo_.begin(); it != fifo_.end(); ++it) {
                if (*it == s) {
                    fifo_.erase(it);
                    break;
                }
            }
        }
        s->state = SlotState::Free;
        s->freed = loc;
        ++s->gen;
        trace_event(TraceKind::Free, detail::consumer_pipe(dst), "FreeTensor", loc, id_, index_of(s));
    }

    __aicore__ inline bool VacantInQue() const { return int32_t(fifo_.size()) < depth; }
    __aicore__ inline bool HasTensorInQue() const { return !fifo_.empty(); }
    __aicore__ inline int32_t GetTensorCountInQue() const { return int32_t(fifo_.size()); }
    __aicore__ inline bool HasIdleBuffer() const {
        for (auto* s : slots_)
            if (s->state == sage::sim::SlotState::Free) return true;
        return false;
    }
    __aicore__ inline void FreeAllEvent() {}

    // A custom TBufPool (EXTERN_IMPL_BUFPOOL) places the queue's buffers itself: first the
    // handle and count, then each buffer's UB address, which must lie inside that pool.
    __aicore__ inline void InitStartBufHandle(TBufHandle startBufhandle, uint8_t num, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        (void)startBufhandle;
        (void)len;
        slots_.clear();
        fifo_.clear();
        next_alloc_ = 0;
        start_num_ = num;
    }
    template <typename P>
    __aicore__ inline void InitBufHandle(P* bufPool, uint32_t index, TBufHandle bufhandle, uint32_t curPoolAddr,
                                         uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        sage::sim::Slot* s = detail::pool_place(detail::PoolAccess::of(*bufPool), "InitBufHandle", index, bufhandle,
                                                curPoolAddr, len, id_, detail::queue_kind(src), start_num_, loc);
        slots_.push_back(s);
    }

    // ---- emulator internals ----
    std::vector<sage::sim::Slot*> slots_;
    std::deque<sage::sim::Slot*> fifo_;
    int id_;
    size_t next_alloc_ = 0;
    int start_num_ = 1;

private:
    template <typename T>
    LocalTensor<T> tensor_of(sage::sim::Slot* s) const {
        LocalTensor<T> t;
        t.addr_ = s->addr;
        t.size_ = s->bytes / uint32_t(sizeof(T));
        t.slot_ = s;
        t.gen_ = s->gen;
        return t;
    }
    int32_t index_of(sage::sim::Slot* s) const {
        for (size_t i = 0; i < slots_.size(); ++i)
            if (slots_[i] == s) return int32_t(i);
        return -1;
    }
    template <typename T>
    sage::sim::Slot* own(const LocalTensor<T>& t, const char* api, sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        if (!t.slot_) {
            fail("queue-deadlock", loc,
                 "%s on %s%s with a LocalTensor that no AllocTensor or DeQue produced, in block %d",
                 api, slots_.empty() ? "a " : "",
                 slots_.empty() ? detail::queue_kind(src) : slot_origin(*slots_[0], loc).c_str(), blk().idx);
        }
        if (index_of(t.slot_) < 0) {
            fail("queue-deadlock", loc,
                 "%s on %s%s with a tensor of %s, in block %d: EnQue, DeQue and FreeTensor a tensor on the queue "
                 "that allocated it",
                 api, slots_.empty() ? "a " : "",
                 slots_.empty() ? detail::queue_kind(src) : slot_origin(*slots_[0], loc).c_str(),
                 slot_origin(*t.slot_, loc).c_str(), blk().idx);
        }
        if (t.slot_->pool_reset) detail::pool_reset_use(api, *t.slot_, loc);
        if (t.slot_->gen != t.gen_ || t.slot_->state == SlotState::Free) {
            fail("use-after-free", loc,
                 "%s of a tensor whose buffer FreeTensor at %s already gave back to %s, in block %d: free each "
                 "tensor once, and take a fresh one with AllocTensor/DeQue",
                 api, line_ref(t.slot_->freed, loc).c_str(), slot_origin(*t.slot_, loc).c_str(), blk().idx);
        }
        return t.slot_;
    }
};

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

// A queue whose buffers are in L1 (TPosition::TSCM), filled from `pos` (GM): a Matmul's A or B
// staged in L1 by the kernel (the Matmul API's TSCM inputs).
template <TPosition pos, int32_t depth = 1, auto mask = 0>
using TSCM = TQueBind<pos, TPosition::TSCM, depth, mask>;

template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    __aicore__ TBuf() : id_(sage::sim::blk().next_queue_id++) {}

    template <typename T>
    __aicore__ inline LocalTensor<T> Get(SAGE_LOC) {
        return Get<T>(slot_ ? slot_->bytes / uint32_t(sizeof(T)) : 0, loc);
    }
    template <typename T>
    __aicore__ inline LocalTensor<T> Get(uint32_t len, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        if (!slot_) {
            fail("ub-out-of-bounds", loc,
                 "TBuf::Get before pipe.InitBuffer(buf, bytes) gave the buffer memory, in block %d", blk().idx);
        }
        if (slot_->pool_reset) detail::pool_reset_use("TBuf::Get", *slot_, loc);
        if (elem_bytes<T>(len) > slot_->bytes) {
            fail("ub-out-of-bounds", loc,
                 "TBuf::Get(%u) asks for %u elements of %u bytes = %llu bytes, but %s holds %u bytes (%u such "
                 "elements), in block %d. InitBuffer takes a length in bytes (elements * sizeof(T)), Get a "
                 "count of elements",
                 len, len, uint32_t(sizeof(T)), (unsigned long long)(uint64_t(len) * sizeof(T)),
                 slot_origin(*slot_, loc).c_str(), slot_->bytes, uint32_t(slot_->bytes / sizeof(T)), blk().idx);
        }
        LocalTensor<T> t;
        t.addr_ = slot_->addr;
        t.size_ = uint32_t(sage::sim::is_int4<T>() ? sage::sim::elem_bytes<T>(len) : len);  // int4b_t: bytes
        t.slot_ = slot_;
        t.gen_ = slot_->gen;
        return t;
    }
    template <typename T>
    __aicore__ inline LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, SAGE_LOC) {
        LocalTensor<T> t = Get<T>(loc);
        uint64_t at = uint64_t(t.addr_) + bufOffset;
        t.addr_ = at > UINT32_MAX ? UINT32_MAX : uint32_t(at);
        t.size_ = size;
        t.check("TBuf::GetWithOffset", size, loc, false);
        return t;
    }

    // The queue calls TBuf inherits from TQueBind, as the device library defines them for a
    // buffer with no queue: AllocTensor and DeQue are Get, EnQue and FreeTensor do nothing.
    template <typename T>
    __aicore__ inline LocalTensor<T> AllocTensor(SAGE_LOC) {
        return Get<T>(loc);
    }
    template <typename T>
    __aicore__ inline LocalTensor<T> DeQue(SAGE_LOC) {
        return Get<T>(loc);
    }
    template <typename T>
    __aicore__ inline void EnQue(const LocalTensor<T>& tensor, SAGE_LOC) {
        sage::sim::touch(loc);
        (void)tensor;
    }
    template <typename T>
    __aicore__ inline void FreeTensor(LocalTensor<T>& tensor, SAGE_LOC) {
        sage::sim::touch(loc);
        (void)tensor;
    }

    // A custom TBufPool places the buffer itself (num is 1 for a TBuf).
    __aicore__ inline void InitStartBufHandle(TBufHandle startBufhandle, uint8_t num, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        (void)startBufhandle;
        (void)num;
        (void)len;
        slot_ = nullptr;
    }
    template <typename P>
    __aicore__ inline void InitBufHandle(P* bufPool, uint32_t index, TBufHandle bufhandle, uint32_t curPoolAddr,
                                         uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        slot_ = detail::pool_place(detail::PoolAccess::of(*bufPool), "InitBufHandle", index, bufhandle, curPoolAddr,
                                   len, id_, "TBuf", 1, loc);
        slot_->state = sage::sim::SlotState::Scratch;
    }

    sage::sim::Slot* slot_ = nullptr;
    int id_;
};

// The buffer handles of a pool; a custom pool (EXTERN_IMPL_BUFPOOL) hands them out itself.
template <uint32_t bufIDSize>
struct TBufPoolImpl : detail::PoolState {
    TBufPoolImpl() {
        handles = buf_;
        handle_count = bufIDSize;
    }
    TBufPoolImpl(const TBufPoolImpl&) = delete;
    TBufPoolImpl& operator=(const TBufPoolImpl&) = delete;
    uint8_t buf_[bufIDSize ? bufIDSize : 1] = {};
};

namespace detail {
template <TPosition pos>
constexpr bool ub_position() {
    return pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC;
}
template <class P>
constexpr void check_pool_type() {
    static_assert(P::isTbufPool, "InitBufPool takes a TBufPool (or a class using EXTERN_IMPL_BUFPOOL)");
    static_assert(ub_position<P::poolPos>(),
                  "TBufPool: the emulator models Unified Buffer pools (VECIN/VECOUT/VECCALC) only; L1 pools "
                  "(A1/B1/C1) belong to the cube unit, which is not emulated");
}
}  // namespace detail

// A part of the Unified Buffer that TPipe::InitBufPool (or a parent pool) gives, carved into
// queues and TBufs by InitBuffer and into nested pools by InitBufPool; a second pool may share
// its memory, for stages that run one after the other (Reset the first before using the second).
template <TPosition pos, uint32_t bufIDSize = 4>
class TBufPool {
public:
    static constexpr TPosition poolPos = pos;
    static constexpr bool isTbufPool = true;

    __aicore__ inline TBufPool() { detail::check_pool_type<TBufPool>(); }

    template <TPosition src, TPosition dst, int32_t depth, auto mask>
    __aicore__ inline bool InitBuffer(TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        uint32_t bytes = detail::round32(len);
        uint32_t at = detail::pool_take(tBufPoolImpl, "TBufPool::InitBuffer", num, bytes, loc);
        que.slots_.clear();
        que.fifo_.clear();
        que.next_alloc_ = 0;
        for (uint8_t i = 0; i < num; ++i) {
            sage::sim::Slot* s = detail::carve_at(at + i * bytes, bytes, que.id_, detail::queue_kind(src), i, num, loc);
            tBufPoolImpl.slots.push_back(s);
            que.slots_.push_back(s);
        }
        return true;
    }
    template <TPosition bufPos>
    __aicore__ inline bool InitBuffer(TBuf<bufPos>& buf, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        uint32_t bytes = detail::round32(len);
        uint32_t at = detail::pool_take(tBufPoolImpl, "TBufPool::InitBuffer", 1, bytes, loc);
        buf.slot_ = detail::carve_at(at, bytes, buf.id_, "TBuf", 0, 1, loc);
        buf.slot_->state = sage::sim::SlotState::Scratch;
        tBufPoolImpl.slots.push_back(buf.slot_);
        return true;
    }
    // A nested pool carved from this one.
    template <class T>
    __aicore__ inline bool InitBufPool(T& bufPool, uint32_t len, SAGE_LOC) {
        detail::check_pool_type<T>();
        sage::sim::touch(loc);
        uint32_t bytes = detail::round32(len);
        uint32_t at = detail::pool_take(tBufPoolImpl, "TBufPool::InitBufPool", 1, bytes, loc);
        detail::pool_assign(detail::PoolAccess::of(bufPool), at, bytes, loc);
        return true;
    }
    // A pool sharing shareBuf's memory (its start and length).
    template <class T, class U>
    __aicore__ inline bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf, SAGE_LOC) {
        detail::check_pool_type<T>();
        detail::check_pool_type<U>();
        sage::sim::touch(loc);
        detail::pool_share(detail::PoolAccess::of(bufPool), detail::PoolAccess::of(shareBuf), len,
                           "TBufPool::InitBufPool", loc);
        return true;
    }
    __aicore__ inline void Reset(SAGE_LOC) {
        sage::sim::touch(loc);
        detail::pool_reset(tBufPoolImpl, "TBufPool::Reset", loc, true);
    }

protected:
    TBufPoolImpl<bufIDSize> tBufPoolImpl;

private:
    friend struct detail::PoolAccess;
};

class TPipe {
public:
    __aicore__ TPipe() { sage::sim::blk().tpipe = this; }
    // As on the device, a TPipe going out of scope gives its Unified Buffer back (Destroy), so
    // a kernel that runs phases with a TPipe each does not add them up.
    __aicore__ ~TPipe() {
        if (sage::sim::blk().tpipe == this) {
            if (!destroyed_) Destroy(sage::sim::rt().last);
            sage::sim::blk().tpipe = nullptr;
            sage::sim::blk().ub_used = 0;
        }
    }

    template <TPosition src, TPosition dst, int32_t depth, auto mask>
    __aicore__ inline bool InitBuffer(TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        constexpr sage::sim::Mem mem = detail::queue_mem(src, dst);
        // A queue given memory again (after Reset) holds only the new buffers, as on the device.
        que.slots_.clear();
        que.fifo_.clear();
        que.next_alloc_ = 0;
        if constexpr (mem != sage::sim::Mem::UB) {
            uint32_t at = cube_reserve(mem, num, len, loc);
            for (uint8_t i = 0; i < num; ++i)
                que.slots_.push_back(detail::carve_at(at + i * detail::round32(len), detail::round32(len), que.id_,
                                                      detail::queue_kind(src), i, num, loc));
            return true;
        }
        reserve(num, len, loc, "InitBuffer");
        for (uint8_t i = 0; i < num; ++i)
            que.slots_.push_back(carve(len, que.id_, detail::queue_kind(src), i, num, loc));
        return true;
    }
    template <TPosition pos>
    __aicore__ inline bool InitBuffer(TBuf<pos>& buf, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        constexpr sage::sim::Mem mem = detail::pos_mem(pos);
        if constexpr (mem != sage::sim::Mem::UB) {
            buf.slot_ = detail::carve_at(cube_reserve(mem, 1, len, loc), detail::round32(len), buf.id_, "TBuf", 0, 1,
                                         loc);
        } else {
            reserve(1, len, loc, "InitBuffer");
            buf.slot_ = carve(len, buf.id_, "TBuf", 0, 1, loc);
        }
        buf.slot_->state = sage::sim::SlotState::Scratch;
        return true;
    }
    // A TBufPool: `len` bytes of the Unified Buffer (rounded up to 32-byte blocks), taken like an
    // InitBuffer; the pool's own InitBuffer calls then carve it.
    template <class T>
    __aicore__ inline bool InitBufPool(T& bufPool, uint32_t len, SAGE_LOC) {
        using namespace sage::sim;
        detail::check_pool_type<T>();
        touch(loc);
        uint32_t bytes = detail::round32(len);
        reserve(1, bytes, loc, "InitBufPool");
        auto& b = blk();
        detail::pool_assign(detail::PoolAccess::of(bufPool), b.ub_used, bytes, loc);
        pools_.push_back({b.ub_used, bytes, loc});
        b.ub_used += bytes;
        return true;
    }
    // A pool sharing shareBuf's memory: CANN gives it shareBuf's start and length.
    template <class T, class U>
    __aicore__ inline bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf, SAGE_LOC) {
        detail::check_pool_type<T>();
        detail::check_pool_type<U>();
        sage::sim::touch(loc);
        detail::pool_share(detail::PoolAccess::of(bufPool), detail::PoolAccess::of(shareBuf), len,
                           "TPipe::InitBufPool", loc);
        return true;
    }

    // CANN's Reset drains MTE2 and MTE3 (and hands the buffers from V to MTE3) before the pool
    // is reused; Destroy ends with pipe_barrier(PIPE_ALL). The trace records them so the
    // missing-sync check sees the ordering a later TPipe relies on.
    __aicore__ inline void Reset(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        trace_event(TraceKind::Barrier, Pipe::MTE2, "TPipe::Reset", loc, int32_t(PIPE_MTE2), 0);
        trace_event(TraceKind::Barrier, Pipe::MTE3, "TPipe::Reset", loc, int32_t(PIPE_MTE3), 0);
        blk().ub_used = 0;
        pools_.clear();
        for (uint32_t& u : cube_used_) u = 0;
        for (MatmulShare& m : matmul_share_) m = {};
    }
    __aicore__ inline void Destroy(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        trace_event(TraceKind::Barrier, Pipe::ALL, "TPipe::Destroy", loc, int32_t(PIPE_ALL), 0);
        blk().ub_used = 0;
        pools_.clear();
        for (uint32_t& u : cube_used_) u = 0;
        for (MatmulShare& m : matmul_share_) m = {};
        destroyed_ = true;
    }
    __aicore__ inline void Init() {}

    template <HardEvent evt>
    __aicore__ inline TEventID FetchEventID() {
        int& next = sage::sim::blk().next_event_id[0];
        return TEventID(next++ % 8);
    }
    __aicore__ inline TEventID FetchEventID(HardEvent) { return FetchEventID<HardEvent::MAX>(); }
    template <HardEvent evt>
    __aicore__ inline TEventID AllocEventID() {
        return FetchEventID<evt>();
    }
    template <HardEvent evt>
    __aicore__ inline void ReleaseEventID(TEventID) {}

    // The cube buffers the pipe's Matmul objects take in turn (matmul.h): L0A, L0B, L0C and the
    // BiasTable hold an object's data only within its calls (or from an Iterate to its GetTensorC),
    // so a later object reuses the first one's when its own fit, as the device's objects, each of
    // which takes all of L0A and L0B, overlap there. `owner` is the object whose block L0C holds.
    struct MatmulShare {
        uint32_t addr = 0, bytes = 0;  // within the memory
        const void* owner = nullptr;
    };
    MatmulShare matmul_share_[4];
    // bytes of a cube memory that earlier InitBuffer calls left free
    uint32_t cube_room(sage::sim::Mem mem) const { return sage::sim::mem_bytes(mem) - cube_used_[int(mem)]; }

private:
    bool destroyed_ = false;
    uint32_t cube_used_[int(sage::sim::Mem::Count)] = {};  // bytes InitBuffer took from each cube memory

    // `num` buffers of `len` bytes (each rounded up to 32) from a cube memory (L1, L0A, L0B, L0C,
    // BiasTable), above what earlier InitBuffer calls took from it; past its size is a fault here.
    // Returns the first buffer's address in the block's local memory.
    SAGE_SIM_OUTLINE uint32_t cube_reserve(sage::sim::Mem mem, int num, uint32_t len, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        uint64_t need = uint64_t(num) * rounded(len);
        uint32_t& used = cube_used_[int(mem)];
        if (used + need > mem_bytes(mem)) {
            fail("cube-buffer-overflow", loc,
                 "InitBuffer of %d x %u bytes%s needs %llu bytes of %s, but earlier InitBuffer calls already hold "
                 "%u of it: %llu in all, past the %u bytes (%u KB) of %s on %s by %llu bytes, in block %d. Shrink "
                 "the base block (baseM/baseN/baseK), use fewer buffers, or split the work into more iterations",
                 num, len, rounded(len) != len ? format(" (%llu each, rounded to 32-byte blocks)",
                                                      (unsigned long long)rounded(len)).c_str() : "",
                 (unsigned long long)need, mem_name(mem), used, (unsigned long long)(used + need), mem_bytes(mem),
                 mem_bytes(mem) / 1024, mem_name(mem), chip_name(), (unsigned long long)(used + need - mem_bytes(mem)),
                 blk().idx);
        }
        uint32_t at = mem_base(mem) + used;
        used += uint32_t(need);
        return at;
    }
    struct PoolNote {
        uint32_t addr, bytes;
        sage::sim::SrcLoc init;
    };
    std::vector<PoolNote> pools_;  // InitBufPool reservations, for an overflow message
    static uint64_t rounded(uint32_t len) { return (uint64_t(len) + 31u) / 32u * 32u; }

    // The whole InitBuffer call must fit: `num` buffers of `len` bytes, each rounded up to a
    // 32-byte block, on top of what earlier InitBuffer and InitBufPool calls took.
    SAGE_SIM_OUTLINE void reserve(int num, uint32_t len, sage::sim::SrcLoc loc, const char* api) {
        using namespace sage::sim;
        auto& b = blk();
        uint64_t need = uint64_t(num) * rounded(len);
        uint64_t safe = rt().ub_bytes - rt().ub_reserved_bytes;
        if (uint64_t(b.ub_used) + need <= safe) return;
        if (uint64_t(b.ub_used) + need <= rt().ub_bytes) {
            report("ub-overflow", Severity::Warning, loc,
                   "%s brings the Unified Buffer to %llu bytes, into the top %zu KB of the %zu KB on %s, "
                   "which some CANN versions reserve (data placed there was seen corrupted). Staying under %llu "
                   "bytes is safe",
                   api, (unsigned long long)(b.ub_used + need), rt().ub_reserved_bytes / 1024, rt().ub_bytes / 1024,
                   chip_name(), (unsigned long long)safe);
            return;
        }
        // One entry per earlier InitBuffer call (its first buffer) or InitBufPool, in UB order;
        // buffers inside a pool are the pool's.
        std::vector<std::pair<uint32_t, std::string>> held;
        auto in_pool = [&](const Slot& s) {
            for (const PoolNote& p : pools_)
                if (s.addr >= p.addr && s.addr < p.addr + p.bytes) return true;
            return false;
        };
        for (const Slot& s : b.slots) {
            if (s.index != 0 || s.addr + s.bytes > b.ub_used || s.owner < 0 || in_pool(s)) continue;
            held.push_back({s.addr, format("%d x %u at %s", s.count, s.bytes, line_ref(s.init, loc).c_str())});
        }
        for (const PoolNote& p : pools_) {
            if (p.addr + p.bytes > b.ub_used) continue;
            held.push_back({p.addr, format("a TBufPool of %u at %s", p.bytes, line_ref(p.init, loc).c_str())});
        }
        std::stable_sort(held.begin(), held.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        std::string earlier;
        for (size_t i = 0; i < held.size(); ++i) {
            if (i == 4) {
                earlier += ", ...";
                break;
            }
            earlier += (i ? ", " : "") + held[i].second;
        }
        fail("ub-overflow", loc,
             "%s of %d x %u bytes%s needs %llu bytes of Unified Buffer, but earlier InitBuffer/InitBufPool calls "
             "already hold %u (%s): %llu in all, past the %zu bytes (%zu KB) usable on %s by %llu bytes, in block "
             "%d. Shrink the tile (more tiles per block), use fewer buffers, or spread the data over more blocks",
             api, num, len, rounded(len) != len ? format(" (%llu each, rounded to 32-byte blocks)",
                                                   (unsigned long long)rounded(len)).c_str() : "",
             (unsigned long long)need, b.ub_used, earlier.empty() ? "none" : earlier.c_str(),
             (unsigned long long)(b.ub_used + need), rt().ub_bytes, rt().ub_bytes / 1024, chip_name(),
             (unsigned long long)(b.ub_used + need - rt().ub_bytes), blk().idx);
    }
    SAGE_SIM_OUTLINE sage::sim::Slot* carve(uint32_t len, int owner, const char* kind, int index, int count, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        auto& b = blk();
        uint32_t bytes = uint32_t(rounded(len));
        b.slots.push_back(Slot{b.ub_used, bytes, 0, SlotState::Free, owner, kind, loc, index, count});
        b.ub_used += bytes;
        ub_clear({b.slots.back().addr, bytes});
        return &b.slots.back();
    }
};

__aicore__ inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(sage::sim::blk().tpipe); }

// PopStackBuffer<T, pos>(popLocal): a temporary tensor over all of `pos`'s memory that no buffer
// holds (the doc: "the whole remaining space of the position"). For the Unified Buffer positions
// that is from sage::sim::ub_free_base() to the end of the UB; its bytes are unwritten. False, and popLocal untouched, when nothing is left. The advanced APIs' forms
// without a sharedTmpBuffer take their scratch this way.
template <typename T, TPosition pos>
__aicore__ inline bool PopStackBuffer(LocalTensor<T>& popLocal, SAGE_LOC) {
    using namespace sage::sim;
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC,
                  "PopStackBuffer: only the Unified Buffer positions (VECIN, VECOUT, VECCALC/LCM) are emulated; "
                  "the cube unit's buffers (A1, B1, ...) are not");
    uint32_t from = ub_free_base();
    uint64_t count = (rt().ub_bytes - from) / sizeof(T);
    if (count == 0) return false;
    popLocal = LocalTensor<T>(pos, uint32_t(from), uint32_t(count), loc);
    return true;
}

}  // namespace AscendC

// CANN declares it at global scope; official samples call GetTPipePtr() unqualified.
using AscendC::GetTPipePtr;

// A user-defined TBufPool: the class places its queues' and TBufs' buffers itself (through
// GetBufHandle/GetCurAddr/SetCurAddr/GetCurBufSize/SetCurBufSize and the queues'
// InitStartBufHandle/InitBufHandle), inside the memory TPipe::InitBufPool gives it. Ends without
// a semicolon, as CANN's, so the class writes `EXTERN_IMPL_BUFPOOL(MyPool, pos, n);`.
#define EXTERN_IMPL_BUFPOOL(EXT_BUFPOOL, POSITION, BUFID_SIZE)                                                    \
public:                                                                                                           \
    static constexpr AscendC::TPosition poolPos = POSITION;                                                       \
    static constexpr int bufIDSize = BUFID_SIZE;                                                                  \
    static constexpr bool isTbufPool = true;                                                                      \
    __aicore__ inline ~EXT_BUFPOOL() { AscendC::detail::pool_reset(tBufPoolImpl, "TBufPool::Reset", {"", 0}, false); } \
    __aicore__ inline void Reset(SAGE_LOC) {                                                                      \
        sage::sim::touch(loc);                                                                                    \
        AscendC::detail::pool_reset(tBufPoolImpl, "TBufPool::Reset", loc, true);                                  \
    }                                                                                                             \
    __aicore__ inline void Init() {                                                                               \
        AscendC::detail::check_pool_type<EXT_BUFPOOL>();                                                          \
        tBufPoolImpl.start = tBufPoolImpl.cur = tBufPoolImpl.len = 0;                                             \
        tBufPoolImpl.bufs = 0;                                                                                    \
    }                                                                                                             \
    __aicore__ inline AscendC::TBufHandle GetBufHandle(uint8_t offset) { return tBufPoolImpl.buf_ + offset; }     \
    __aicore__ inline void SetCurAddr(uint32_t curAddr) { tBufPoolImpl.cur = curAddr; }                          \
    __aicore__ inline uint32_t GetCurAddr() { return tBufPoolImpl.cur; }                                         \
    __aicore__ inline void SetCurBufSize(uint8_t curBufSize) { tBufPoolImpl.bufs = curBufSize; }                 \
    __aicore__ inline uint8_t GetCurBufSize() { return tBufPoolImpl.bufs; }                                      \
                                                                                                                  \
protected:                                                                                                        \
    AscendC::TBufPoolImpl<BUFID_SIZE> tBufPoolImpl;                                                               \
                                                                                                                  \
private:                                                                                                          \
    friend struct AscendC::detail::PoolAccess
