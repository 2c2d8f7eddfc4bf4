// TPipe, TQue and TBuf: the Unified Buffer's allocator and the queues that carry the
// synchronisation between pipes. Deadlocks the device would hang on (DeQue of an empty
// queue, AllocTensor with every buffer taken) stop the block here, at the user's line.
#pragma once

#include <deque>
#include <vector>

#include "kernel_tensor.h"

namespace AscendC {

namespace detail {
inline sage::sim::Pipe producer_pipe(TPosition pos) {
    return pos == TPosition::VECIN ? sage::sim::Pipe::MTE2 : sage::sim::Pipe::V;
}
inline sage::sim::Pipe consumer_pipe(TPosition pos) {
    return pos == TPosition::VECOUT ? sage::sim::Pipe::MTE3 : sage::sim::Pipe::V;
}
inline const char* queue_kind(TPosition pos) {
    switch (pos) {
        case TPosition::VECIN: return "VECIN queue";
        case TPosition::VECOUT: return "VECOUT queue";
        case TPosition::VECCALC: return "VECCALC queue";
        default: return "queue";
    }
}
// What each buffer of a queue is doing, for a deadlock message: "buffer 0 AllocTensor'd at
// line 41 and not yet EnQue'd; buffer 1 ...".
inline std::string holders(const std::vector<sage::sim::Slot*>& slots, sage::sim::SrcLoc from) {
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
    template <typename... Args>
    __aicore__ inline void InitBufHandle(Args...) {}

    // ---- emulator internals ----
    std::vector<sage::sim::Slot*> slots_;
    std::deque<sage::sim::Slot*> fifo_;
    int id_;
    size_t next_alloc_ = 0;

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
        if (uint64_t(len) * sizeof(T) > slot_->bytes) {
            fail("ub-out-of-bounds", loc,
                 "TBuf::Get(%u) asks for %u elements of %u bytes = %llu bytes, but %s holds %u bytes (%u such "
                 "elements), in block %d. InitBuffer takes a length in bytes (elements * sizeof(T)), Get a "
                 "count of elements",
                 len, len, uint32_t(sizeof(T)), (unsigned long long)(uint64_t(len) * sizeof(T)),
                 slot_origin(*slot_, loc).c_str(), slot_->bytes, uint32_t(slot_->bytes / sizeof(T)), blk().idx);
        }
        LocalTensor<T> t;
        t.addr_ = slot_->addr;
        t.size_ = len;
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

    sage::sim::Slot* slot_ = nullptr;
    int id_;
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
        reserve(num, len, loc);
        for (uint8_t i = 0; i < num; ++i)
            que.slots_.push_back(carve(len, que.id_, detail::queue_kind(src), i, num, loc));
        return true;
    }
    template <TPosition pos>
    __aicore__ inline bool InitBuffer(TBuf<pos>& buf, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        reserve(1, len, loc);
        buf.slot_ = carve(len, buf.id_, "TBuf", 0, 1, loc);
        buf.slot_->state = sage::sim::SlotState::Scratch;
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
    }
    __aicore__ inline void Destroy(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        trace_event(TraceKind::Barrier, Pipe::ALL, "TPipe::Destroy", loc, int32_t(PIPE_ALL), 0);
        blk().ub_used = 0;
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

private:
    bool destroyed_ = false;
    static uint64_t rounded(uint32_t len) { return (uint64_t(len) + 31u) / 32u * 32u; }

    // The whole InitBuffer call must fit: `num` buffers of `len` bytes, each rounded up to a
    // 32-byte block, on top of what earlier InitBuffer calls took.
    void reserve(int num, uint32_t len, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        auto& b = blk();
        uint64_t need = uint64_t(num) * rounded(len);
        uint64_t safe = rt().ub_bytes - rt().ub_reserved_bytes;
        if (uint64_t(b.ub_used) + need <= safe) return;
        if (uint64_t(b.ub_used) + need <= rt().ub_bytes) {
            report("ub-overflow", Severity::Warning, loc,
                   "InitBuffer brings the Unified Buffer to %llu bytes, into the top %zu KB of the %zu KB on %s, "
                   "which some CANN versions reserve (data placed there was seen corrupted). Staying under %llu "
                   "bytes is safe",
                   (unsigned long long)(b.ub_used + need), rt().ub_reserved_bytes / 1024, rt().ub_bytes / 1024,
                   chip_name(), (unsigned long long)safe);
            return;
        }
        std::string earlier;
        int shown = 0;
        for (const Slot& s : b.slots) {
            if (s.index != 0 || s.addr + s.bytes > b.ub_used) continue;  // one entry per InitBuffer call
            if (shown++ == 4) {
                earlier += ", ...";
                break;
            }
            earlier += format("%s%d x %u at %s", shown > 1 ? ", " : "", s.count, s.bytes,
                              line_ref(s.init, loc).c_str());
        }
        fail("ub-overflow", loc,
             "InitBuffer of %d x %u bytes%s needs %llu bytes of Unified Buffer, but earlier InitBuffer calls "
             "already hold %u (%s): %llu in all, past the %zu bytes (%zu KB) usable on %s by %llu bytes, in block "
             "%d. Shrink the tile (more tiles per block), use fewer buffers, or spread the data over more blocks",
             num, len, rounded(len) != len ? format(" (%llu each, rounded to 32-byte blocks)",
                                                   (unsigned long long)rounded(len)).c_str() : "",
             (unsigned long long)need, b.ub_used, earlier.empty() ? "none" : earlier.c_str(),
             (unsigned long long)(b.ub_used + need), rt().ub_bytes, rt().ub_bytes / 1024, chip_name(),
             (unsigned long long)(b.ub_used + need - rt().ub_bytes), blk().idx);
    }
    sage::sim::Slot* carve(uint32_t len, int owner, const char* kind, int index, int count, sage::sim::SrcLoc loc) {
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

}  // namespace AscendC

// CANN declares it at global scope; official samples call GetTPipePtr() unqualified.
using AscendC::GetTPipePtr;
