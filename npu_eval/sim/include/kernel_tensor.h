// GlobalTensor and LocalTensor. A LocalTensor is a view into the block's Unified Buffer: a
// byte address, an element count and the buffer slot it came from (with the slot's
// generation, so a tensor used after FreeTensor is caught).
#pragma once

#include "kernel_common.h"

namespace AscendC {

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ GlobalTensor() = default;

    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize, SAGE_LOC) {
        sage::sim::touch(loc);
        addr_ = buffer;
        size_ = bufferSize;
    }
    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, SAGE_LOC) {
        sage::sim::touch(loc);
        addr_ = buffer;
        size_ = 0;
    }
    __aicore__ inline GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor t = *this;
        t.addr_ = addr_ + offset;
        t.size_ = size_ > offset ? size_ - offset : 0;
        return t;
    }
    __aicore__ inline T GetValue(uint64_t offset, SAGE_LOC) const {
        sage::sim::touch(loc);
        sage::sim::gm_check(addr_ + offset, sizeof(T), loc, false);
        sage::sim::trace_instr(sage::sim::Pipe::S, "GlobalTensor::GetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc);
        return addr_[offset];
    }
    __aicore__ inline void SetValue(uint64_t offset, T value, SAGE_LOC) {
        sage::sim::touch(loc);
        auto* b = sage::sim::gm_check(addr_ + offset, sizeof(T), loc, true);
        sage::sim::trace_instr(sage::sim::Pipe::S, "GlobalTensor::SetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc);
        addr_[offset] = value;
        sage::sim::gm_wrote(b, addr_ + offset, sizeof(T), loc);
    }
    __aicore__ inline __gm__ T* GetPhyAddr() const { return addr_; }
    __aicore__ inline __gm__ T* GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
    __aicore__ inline uint64_t GetSize() const { return size_; }
    template <typename... Args>
    __aicore__ inline void SetL2CacheHint(Args...) {}

    // Emulator internals (public so the API families can reach them).
    T* addr_ = nullptr;
    uint64_t size_ = 0;
};

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ LocalTensor() = default;

    __aicore__ inline LocalTensor operator[](uint32_t offset) const {
        LocalTensor t = *this;
        if (slot_ && offset > size_) {
            sage::sim::fail("ub-out-of-bounds", sage::sim::rt().last,
                            "tensor[%u] starts past the end of a %u-element tensor", offset, size_);
        }
        t.addr_ = addr_ + offset * uint32_t(sizeof(T));
        t.size_ = size_ - offset;
        return t;
    }
    __aicore__ inline T GetValue(uint32_t index, SAGE_LOC) const {
        sage::sim::touch(loc);
        check_scalar("GetValue", index, loc);
        sage::sim::ub_check_init(sage::sim::UbRange{addr_ + index * uint32_t(sizeof(T)), sizeof(T)},
                                 "GetValue", loc);
        sage::sim::trace_instr(sage::sim::Pipe::S, "LocalTensor::GetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc, {}, {addr_ + index * uint32_t(sizeof(T)), sizeof(T)});
        return data()[index];
    }
    __aicore__ inline void SetValue(uint32_t index, T value, SAGE_LOC) const {
        sage::sim::touch(loc);
        check_scalar("SetValue", index, loc);
        sage::sim::UbRange w{addr_ + index * uint32_t(sizeof(T)), sizeof(T)};
        sage::sim::trace_instr(sage::sim::Pipe::S, "LocalTensor::SetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc, w);
        data()[index] = value;
        sage::sim::ub_mark(w);
    }
    template <typename U>
    __aicore__ inline LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> t;
        t.addr_ = addr_;
        t.size_ = uint32_t(uint64_t(size_) * sizeof(T) / sizeof(U));
        t.slot_ = slot_;
        t.gen_ = gen_;
        return t;
    }
    __aicore__ inline uint32_t GetSize() const { return size_; }
    __aicore__ inline void SetSize(uint32_t size) { size_ = size; }
    __aicore__ inline uint32_t GetLength() const { return size_ * uint32_t(sizeof(T)); }
    __aicore__ inline __ubuf__ T* GetPhyAddr() const { return data(); }
    __aicore__ inline __ubuf__ T* GetPhyAddr(uint32_t offset) const { return data() + offset; }
    __aicore__ inline void SetUserTag(int32_t tag) { tag_ = tag; }
    __aicore__ inline int32_t GetUserTag() const { return tag_; }
    __aicore__ inline TPosition GetPosition() const { return TPosition::VECCALC; }

    // ---- emulator internals ----
    __aicore__ inline T* data() const { return reinterpret_cast<T*>(sage::sim::blk().ub + addr_); }
    sage::sim::UbRange range(uint64_t elems) const {
        return sage::sim::UbRange{addr_, uint32_t(elems * sizeof(T))};
    }
    // The checks every operand goes through: the tensor has a live buffer, the access stays
    // inside it, and (for vector and copy units) starts 32-byte aligned.
    void check(const char* api, uint64_t elems, sage::sim::SrcLoc loc, bool aligned = true) const {
        using namespace sage::sim;
        if (!slot_) fail("ub-out-of-bounds", loc, "%s uses a LocalTensor that no AllocTensor, DeQue or Get produced", api);
        if (slot_->gen != gen_) {
            fail("use-after-free", loc,
                 "%s uses a LocalTensor after FreeTensor released its buffer (queue %d); DeQue or "
                 "AllocTensor a fresh one",
                 api, slot_->owner);
        }
        uint64_t end = uint64_t(addr_) + elems * sizeof(T);
        if (end > uint64_t(slot_->addr) + slot_->bytes) {
            fail("ub-out-of-bounds", loc,
                 "%s touches %llu elements (%llu bytes) from byte %u of a %u-byte buffer: %llu bytes "
                 "past its end",
                 api, (unsigned long long)elems, (unsigned long long)(elems * sizeof(T)), addr_ - slot_->addr,
                 slot_->bytes, (unsigned long long)(end - slot_->addr - slot_->bytes));
        }
        if (aligned && addr_ % 32 != 0) {
            report("unaligned-copy", Severity::Error, loc,
                   "%s on a UB address %u bytes past a 32-byte boundary (offset %u elements into its "
                   "buffer); UB operands must start 32-byte aligned",
                   api, addr_ % 32, uint32_t((addr_ - slot_->addr) / sizeof(T)));
        }
    }
    void check_scalar(const char* api, uint32_t index, sage::sim::SrcLoc loc) const {
        check(api, uint64_t(index) + 1, loc, false);
    }

    uint32_t addr_ = 0;  // byte offset in the block's UB
    uint32_t size_ = 0;  // elements from addr_
    sage::sim::Slot* slot_ = nullptr;
    uint32_t gen_ = 0;
    int32_t tag_ = 0;
};

}  // namespace AscendC
