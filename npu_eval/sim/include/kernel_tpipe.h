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
inline const char* position_name(TPosition pos) {
    switch (pos) {
        case TPosition::VECIN: return "VECIN";
        case TPosition::VECOUT: return "VECOUT";
        case TPosition::VECCALC: return "VECCALC";
        case TPosition::GM: return "GM";
        default: return "other";
    }
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
                 "AllocTensor on %s queue %d, which has no buffers: call pipe.InitBuffer(queue, num, "
                 "bytes) first",
                 detail::position_name(src), id_);
        }
        for (Slot* s : slots_) {
            if (s->state == SlotState::Free) {
                s->state = SlotState::Allocated;
                ++s->gen;
                ub_clear({s->addr, s->bytes});
                trace_event(TraceKind::Alloc, detail::producer_pipe(src), "AllocTensor", loc, id_,
                            int32_t(s - slots_[0]), {s->addr, s->bytes});
                return tensor_of<T>(s);
            }
        }
        fail("queue-deadlock", loc,
             "AllocTensor on %s queue %d with all %zu buffers in use: the device waits here forever "
             "(a FreeTensor missing, or more tensors alive at once than InitBuffer gave it)",
             detail::position_name(src), id_, slots_.size());
    }

    template <typename T>
    __aicore__ inline bool EnQue(const LocalTensor<T>& tensor, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        Slot* s = own(tensor, "EnQue", loc);
        s->state = SlotState::Queued;
        fifo_.push_back(s);
        trace_event(TraceKind::EnQue, detail::producer_pipe(src), "EnQue", loc, id_, index_of(s));
        return true;
    }

    template <typename T>
    __aicore__ inline LocalTensor<T> DeQue(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        if (fifo_.empty()) {
            fail("queue-deadlock", loc,
                 "DeQue on %s queue %d, which holds no tensor: the device waits here forever (an EnQue "
                 "missing, or one DeQue too many)",
                 detail::position_name(src), id_);
        }
        Slot* s = fifo_.front();
        fifo_.pop_front();
        s->state = SlotState::Allocated;
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
        if (!t.slot_ || index_of(t.slot_) < 0) {
            fail("queue-deadlock", loc, "%s on queue %d with a tensor that belongs to another queue or buffer",
                 api, id_);
        }
        if (t.slot_->gen != t.gen_ || t.slot_->state == SlotState::Free) {
            fail("use-after-free", loc, "%s of a tensor whose buffer was already freed (queue %d)", api, id_);
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
        if (!slot_) fail("ub-out-of-bounds", loc, "TBuf::Get before pipe.InitBuffer(buf, bytes) gave the buffer memory");
        if (uint64_t(len) * sizeof(T) > slot_->bytes) {
            fail("ub-out-of-bounds", loc, "TBuf::Get(%u) asks for %llu bytes of a %u-byte buffer", len,
                 (unsigned long long)(uint64_t(len) * sizeof(T)), slot_->bytes);
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
        t.addr_ += bufOffset;
        t.size_ = size;
        t.check("GetWithOffset", size, loc, false);
        return t;
    }

    sage::sim::Slot* slot_ = nullptr;
    int id_;
};

class TPipe {
public:
    __aicore__ TPipe() { sage::sim::blk().tpipe = this; }
    __aicore__ ~TPipe() {
        if (sage::sim::blk().tpipe == this) sage::sim::blk().tpipe = nullptr;
    }

    template <TPosition src, TPosition dst, int32_t depth, auto mask>
    __aicore__ inline bool InitBuffer(TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        for (uint8_t i = 0; i < num; ++i) que.slots_.push_back(carve(len, que.id_, num, loc));
        return true;
    }
    template <TPosition pos>
    __aicore__ inline bool InitBuffer(TBuf<pos>& buf, uint32_t len, SAGE_LOC) {
        sage::sim::touch(loc);
        buf.slot_ = carve(len, buf.id_, 1, loc);
        buf.slot_->state = sage::sim::SlotState::Scratch;
        return true;
    }
    __aicore__ inline void Reset() { sage::sim::blk().ub_used = 0; }
    __aicore__ inline void Destroy() { sage::sim::blk().ub_used = 0; }
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
    sage::sim::Slot* carve(uint32_t len, int owner, int num, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        auto& b = blk();
        uint32_t bytes = (len + 31u) / 32u * 32u;
        uint64_t end = uint64_t(b.ub_used) + bytes;
        if (end > rt().ub_bytes) {
            fail("ub-overflow", loc,
                 "this InitBuffer brings the Unified Buffer to %llu bytes (%d x %u), past the %zu bytes "
                 "usable on %s: shrink the tile or the buffer count",
                 (unsigned long long)(uint64_t(b.ub_used) + uint64_t(bytes) * num), num, bytes, rt().ub_bytes,
                 chip_name());
        }
        b.slots.push_back(Slot{b.ub_used, bytes, 0, SlotState::Free, owner});
        b.ub_used = uint32_t(end);
        ub_clear({b.slots.back().addr, bytes});
        return &b.slots.back();
    }
};

__aicore__ inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(sage::sim::blk().tpipe); }

}  // namespace AscendC
