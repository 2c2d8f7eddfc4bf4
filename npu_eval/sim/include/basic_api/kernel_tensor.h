// GlobalTensor and LocalTensor. A LocalTensor is a view into the block's Unified Buffer: a
// byte address, an element count and the buffer slot it came from (with the slot's
// generation, so a tensor used after FreeTensor is caught). And CANN 9's LocalMemAllocator,
// which hands out static LocalTensors, and ShapeInfo, the shape a tensor may carry.
#pragma once

#include "../utils/common_types.h"
#include "../sage_sim/dcache.h"
#include "../sage_sim/cube.h"

// The most dimensions a ShapeInfo holds; a kernel may define it (to 0, to save stack) before
// including kernel_operator.h, as CANN's headers allow.
#ifndef K_MAX_SHAPE_DIM
#define K_MAX_SHAPE_DIM 8
#endif

namespace AscendC {

namespace detail {
// The memory a position lives in on the 910B (CANN's positionHardMap for __NPU_ARCH__ 2201): L1
// for A1/B1/C1/TSCM, L0A for A2, L0B for B2, L0C for CO1, the BiasTable for C2, the Fixpipe
// Buffer for C2PIPE2GM; the vector positions are the Unified Buffer.
constexpr sage::sim::Mem pos_mem(TPosition pos) {
    using sage::sim::Mem;
    return pos == TPosition::A1 || pos == TPosition::B1 || pos == TPosition::C1 || pos == TPosition::TSCM ? Mem::L1
           : pos == TPosition::A2                                                                        ? Mem::L0A
           : pos == TPosition::B2                                                                        ? Mem::L0B
           : pos == TPosition::CO1                                                                       ? Mem::L0C
           : pos == TPosition::C2                                                                        ? Mem::BT
           : pos == TPosition::C2PIPE2GM                                                                 ? Mem::FB
                                                                                                         : Mem::UB;
}
constexpr sage::sim::Mem hard_mem(Hardware hard) {
    using sage::sim::Mem;
    return hard == Hardware::L1 ? Mem::L1 : hard == Hardware::L0A ? Mem::L0A : hard == Hardware::L0B ? Mem::L0B
           : hard == Hardware::L0C ? Mem::L0C : hard == Hardware::BIAS ? Mem::BT
           : hard == Hardware::FIXBUF ? Mem::FB : Mem::UB;
}
}  // namespace detail

#ifndef ASCC_ENUM_DATAFORMAT
#define ASCC_ENUM_DATAFORMAT
enum class DataFormat : uint8_t {
    ND = 0,
    NZ,
    NCHW,
    NC1HWC0,
    NHWC,
    NCDHW,
    NDC1HWC0,
    FRACTAL_Z_3D,
};
#endif  // ASCC_ENUM_DATAFORMAT

// A tensor's shape as the kernel records it (SetShapeInfo/GetShapeInfo): bookkeeping, read only by
// AscendAntiQuant (an offset's or scale's [G, N]). More than K_MAX_SHAPE_DIM dimensions is the fault CANN's assertion reports.
struct ShapeInfo {
    __aicore__ inline ShapeInfo() {}
    __aicore__ inline ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[],
                                const uint8_t inputOriginalShapeDim, const uint32_t inputOriginalShape[],
                                const DataFormat inputFormat, SAGE_LOC)
        : shapeDim(inputShapeDim), originalShapeDim(inputOriginalShapeDim), dataFormat(inputFormat) {
        dims_fit(inputShapeDim, loc);
        dims_fit(inputOriginalShapeDim, loc);
        for (int i = 0; i < shapeDim; ++i) shape[i] = inputShape[i];
        for (int i = 0; i < originalShapeDim; ++i) originalShape[i] = inputOriginalShape[i];
    }
    __aicore__ inline ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const DataFormat inputFormat,
                                SAGE_LOC)
        : shapeDim(inputShapeDim), originalShapeDim(inputShapeDim), dataFormat(inputFormat) {
        dims_fit(inputShapeDim, loc);
        for (int i = 0; i < shapeDim; ++i) shape[i] = originalShape[i] = inputShape[i];
    }
    __aicore__ inline ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], SAGE_LOC)
        : ShapeInfo(inputShapeDim, inputShape, DataFormat::ND, loc) {}

    uint8_t shapeDim = 0;
    uint8_t originalShapeDim = 0;
    uint32_t shape[K_MAX_SHAPE_DIM] = {};
    uint32_t originalShape[K_MAX_SHAPE_DIM] = {};
    DataFormat dataFormat = DataFormat::ND;

private:
    static void dims_fit(uint8_t dims, sage::sim::SrcLoc loc) {
        sage::sim::touch(loc);
        if (dims > K_MAX_SHAPE_DIM) {
            sage::sim::fail("crash", loc,
                            "ShapeInfo with %u dimensions: it holds at most K_MAX_SHAPE_DIM = %d (the arrays would "
                            "overflow); define K_MAX_SHAPE_DIM higher before including kernel_operator.h",
                            unsigned(dims), K_MAX_SHAPE_DIM);
        }
    }
};

// The element count of a shape: the product of its dimensions.
__aicore__ inline uint64_t GetShapeSize(const ShapeInfo& shapeInfo) {
    uint64_t size = 1;
    for (int i = 0; i < shapeInfo.shapeDim; ++i) size *= shapeInfo.shape[i];
    return size;
}

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ GlobalTensor() = default;

    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize, SAGE_LOC) {
        sage::sim::touch(loc);
        addr_ = buffer;
        size_ = bufferSize;
        gm_ = sage::sim::gm_home(buffer);
    }
    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, SAGE_LOC) {
        sage::sim::touch(loc);
        addr_ = buffer;
        size_ = 0;
        gm_ = sage::sim::gm_home(buffer);
    }
    __aicore__ inline GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor t = *this;
        t.addr_ = addr_ + (sage::sim::is_int4<T>() ? offset / 2 : offset);  // int4b_t: two a byte
        t.size_ = size_ > offset ? size_ - offset : 0;
        return t;
    }
    __aicore__ inline T GetValue(uint64_t offset, SAGE_LOC) const {
        sage::sim::touch(loc);
        auto* b = sage::sim::gm_check(addr_ + offset, sizeof(T), loc, false, "GetValue", sizeof(T), gm_);
        sage::sim::trace_instr(sage::sim::Pipe::S, "GlobalTensor::GetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc);
        return sage::sim::dcache_load(b, addr_ + offset, loc);  // through the core's data cache
    }
    __aicore__ inline void SetValue(uint64_t offset, T value, SAGE_LOC) {
        sage::sim::touch(loc);
        auto* b = sage::sim::gm_check(addr_ + offset, sizeof(T), loc, true, "SetValue", sizeof(T), gm_);
        sage::sim::trace_instr(sage::sim::Pipe::S, "GlobalTensor::SetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc);
        sage::sim::dcache_store(addr_ + offset, value);
        sage::sim::gm_wrote(b, addr_ + offset, sizeof(T), loc, "SetValue", sizeof(T));
    }
    // Element access by reference, a scalar access like GetValue. A reference cannot tell a read
    // from a write, so the emulator checks the bounds but records neither for its race checks:
    // prefer GetValue/SetValue where either alone is meant.
    __aicore__ inline __gm__ T& operator()(uint64_t offset, SAGE_LOC) const {
        sage::sim::touch(loc);
        sage::sim::gm_check(addr_ + offset, sizeof(T), loc, false, "GlobalTensor::operator()", sizeof(T), gm_);
        sage::sim::trace_instr(sage::sim::Pipe::S, "GlobalTensor::GetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc);
        return addr_[offset];
    }
    __aicore__ inline __gm__ T* GetPhyAddr() const { return addr_; }
    __aicore__ inline __gm__ T* GetPhyAddr(uint64_t offset) const {
        return addr_ + (sage::sim::is_int4<T>() ? offset / 2 : offset);
    }
    __aicore__ inline uint64_t GetSize() const { return size_; }
    __aicore__ inline void SetShapeInfo(const ShapeInfo& shapeInfo) { shapeInfo_ = shapeInfo; }
    __aicore__ inline ShapeInfo GetShapeInfo() const { return shapeInfo_; }
    // Whether copies of this tensor go through the L2 cache (default: they do). It changes no
    // value; the emulator keeps the mode, and the cost model has no L2 yet, so it costs the same.
    template <CacheRwMode rwMode = CacheRwMode::RW>
    __aicore__ inline void SetL2CacheHint(CacheMode mode) {
        cacheMode_ = mode;
    }

    // Emulator internals (public so the API families can reach them).
    T* addr_ = nullptr;
    uint64_t size_ = 0;
    int gm_ = -1;  // the host buffer addr_ points into (sage::sim::gm_home), -1 if unknown
    CacheMode cacheMode_ = CacheMode::CACHE_MODE_NORMAL;
    ShapeInfo shapeInfo_;
};

// The whole-tensor operators' expression (`src0 + src1`) and its right operand, which carries the
// expression's line: basic_api/kernel_operator_symbol_override.h.
enum class SymbolOp : uint8_t { Add, Sub, Mul, Div, And, Or, Compare };
template <typename T>
struct SymbolOperand;
template <typename T, SymbolOp OP>
class SymbolOverride;

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ LocalTensor() = default;

    // Whole-tensor operators (asc-devkit Add.md, Sub.md, Mul.md, Div.md, And.md, Or.md,
    // Compare.md: "整个tensor参与计算"): `dst = src0 + src1` runs the named API, so its checks and
    // costs apply. Defined in kernel_operator_symbol_override.h.
    template <typename E, typename = typename E::SageSymbolOverride>
    __aicore__ inline void operator=(const E& expr) {
        expr.AssignTo(*this);
    }
    __aicore__ inline SymbolOverride<T, SymbolOp::Add> operator+(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Sub> operator-(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Mul> operator*(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Div> operator/(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::And> operator&(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Or> operator|(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Compare> operator<(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Compare> operator>(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Compare> operator<=(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Compare> operator>=(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Compare> operator==(const SymbolOperand<T>& src1) const;
    __aicore__ inline SymbolOverride<T, SymbolOp::Compare> operator!=(const SymbolOperand<T>& src1) const;

    // CANN 9: a tensor at a fixed byte address `addr` of its position's memory (the Unified Buffer,
    // or for a cube position L1, L0A, L0B, L0C or the BiasTable), `tileSize` elements, no
    // allocator (the kernel places its tensors itself). Past the memory is a fault; an unaligned
    // address is reported by the first op that uses it.
    __aicore__ inline LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        const Mem mem = detail::pos_mem(pos);
        uint64_t bytes = elem_bytes<T>(tileSize);
        if (uint64_t(addr) + bytes > mem_bytes(mem)) {
            fail(mem == Mem::UB ? "ub-overflow" : "cube-buffer-overflow", loc,
                 "LocalTensor(pos, addr %u, tileSize %u) spans %s bytes %u..%llu, past the %u bytes (%u KB) of "
                 "%s on %s, in block %d: place it lower or make it smaller",
                 addr, tileSize, mem_name(mem), addr, (unsigned long long)(addr + bytes - 1), mem_bytes(mem),
                 mem_bytes(mem) / 1024, mem_name(mem), chip_name(), blk().idx);
        }
        auto& b = blk();
        const uint32_t at = mem_base(mem) + addr;
        b.slots.push_back(Slot{at, uint32_t(bytes), 0, SlotState::Scratch, -1,
                               mem == Mem::UB ? "LocalTensor at a fixed address" : "cube LocalTensor at a fixed address",
                               loc, 0, 1});
        ub_clear({at, uint32_t(bytes)});
        addr_ = at;
        size_ = is_int4<T>() ? uint32_t(bytes) : tileSize;
        slot_ = &b.slots.back();
        gen_ = 0;
    }

    // A view `offset` elements in. operator[] cannot take the caller's line, so a view past
    // the end is not reported here but by the API call that uses it, at that call's line. For
    // int4b_t the offset counts elements, two a byte, and size_ counts bytes.
    __aicore__ inline LocalTensor operator[](uint32_t offset) const {
        LocalTensor t = *this;
        if (sage::sim::is_int4<T>()) offset /= 2;
        uint64_t at = uint64_t(addr_) + uint64_t(offset) * sizeof(T);
        t.addr_ = at > UINT32_MAX ? UINT32_MAX : uint32_t(at);
        t.size_ = offset <= size_ ? size_ - offset : 0;
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
    // The value is converted to the element type, as CANN's SetValue<S> does (SetValue<half>(i, x)).
    template <typename S>
    __aicore__ inline void SetValue(uint32_t index, const S value, SAGE_LOC) const {
        sage::sim::touch(loc);
        check_scalar("SetValue", index, loc);
        sage::sim::UbRange w{addr_ + index * uint32_t(sizeof(T)), sizeof(T)};
        sage::sim::trace_instr(sage::sim::Pipe::S, "LocalTensor::SetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc, w);
        data()[index] = static_cast<T>(value);
        sage::sim::ub_mark(w);
    }
    // Element access by reference (what kernels index with t(i)): the bounds checks of
    // GetValue/SetValue and a scalar access on the S pipe. A reference cannot tell a read from
    // a write, so the element counts as written from here on (no uninitialized-read warning).
    __aicore__ inline __ubuf__ T& operator()(uint32_t offset, SAGE_LOC) const {
        sage::sim::touch(loc);
        check_scalar("LocalTensor::operator()", offset, loc);
        sage::sim::UbRange at{addr_ + offset * uint32_t(sizeof(T)), sizeof(T)};
        sage::sim::trace_instr(sage::sim::Pipe::S, "LocalTensor::GetValue", sage::sim::dtype_name<T>(), 1,
                               sizeof(T), loc, at, at);
        sage::sim::ub_mark(at);
        return data()[offset];
    }
    __aicore__ inline void SetShapeInfo(const ShapeInfo& shapeInfo) { shapeInfo_ = shapeInfo; }
    __aicore__ inline ShapeInfo GetShapeInfo() const { return shapeInfo_; }
    template <typename U>
    __aicore__ inline LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> t;
        t.addr_ = addr_;
        t.size_ = uint32_t(uint64_t(size_) * sizeof(T) / sizeof(U));
        t.slot_ = slot_;
        t.gen_ = gen_;
        return t;
    }
    __aicore__ inline uint32_t GetSize() const { return sage::sim::is_int4<T>() ? size_ * 2 : size_; }
    __aicore__ inline void SetSize(uint32_t size) {
        size_ = sage::sim::is_int4<T>() ? uint32_t(sage::sim::elem_bytes<T>(size)) : size;
    }
    __aicore__ inline uint32_t GetLength() const { return size_ * uint32_t(sizeof(T)); }
    __aicore__ inline __ubuf__ T* GetPhyAddr() const { return data(); }
    __aicore__ inline __ubuf__ T* GetPhyAddr(uint32_t offset) const {
        return data() + (sage::sim::is_int4<T>() ? offset / 2 : offset);
    }
    __aicore__ inline void SetUserTag(int32_t tag) { tag_ = tag; }
    __aicore__ inline int32_t GetUserTag() const { return tag_; }
    __aicore__ inline TPosition GetPosition() const { return TPosition::VECCALC; }

    // ---- emulator internals ----
    __aicore__ inline T* data() const { return reinterpret_cast<T*>(sage::sim::blk().ub + addr_); }
    sage::sim::UbRange range(uint64_t elems) const {
        return sage::sim::UbRange{addr_, uint32_t(elems * sizeof(T))};
    }
    // The checks every operand goes through: the tensor has a live buffer, the access stays
    // inside it, and (for vector and copy units) starts 32-byte aligned. Runs for every operand
    // of every op: the passing path is a few compares.
    void check(const char* api, uint64_t elems, sage::sim::SrcLoc loc, bool aligned = true) const {
        using namespace sage::sim;
        if (!slot_) {
            fail("ub-out-of-bounds", loc,
                 "%s uses a LocalTensor that no AllocTensor, DeQue or TBuf::Get produced (a default-constructed "
                 "tensor has no buffer): take it from its queue or buffer first",
                 api);
        }
        if (slot_->gen != gen_) use_after_free(api, loc);
        uint64_t room = uint64_t(slot_->addr) + slot_->bytes;
        room = addr_ < room ? room - addr_ : 0;  // bytes from this view to the end of its buffer
        if (elems > room / sizeof(T)) out_of_bounds(api, elems, loc);
        if (aligned && addr_ % 32 != 0) {
            report("unaligned-copy", Severity::Error, loc,
                   "%s on a UB operand that starts %u bytes past a 32-byte boundary (element %u of %s), in "
                   "block %d: vector and DataCopy operands must start 32-byte aligned. Offset views by "
                   "multiples of %u elements, or load the shifted data into its own buffer (GM addresses need "
                   "only element alignment)",
                   api, addr_ % 32, uint32_t((addr_ - slot_->addr) / sizeof(T)),
                   slot_origin(*slot_, loc).c_str(), blk().idx, uint32_t(32 / sizeof(T)));
        }
    }
    [[noreturn]] void use_after_free(const char* api, sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        std::string now = slot_->state == SlotState::Free
                              ? std::string("")
                              : format(", and the queue has since handed the buffer out again (%s at %s)",
                                       slot_->state == SlotState::Queued ? "EnQue" : "AllocTensor/DeQue",
                                       line_ref(slot_->held, loc).c_str());
        fail("use-after-free", loc,
             "%s uses a LocalTensor whose buffer FreeTensor at %s gave back to %s%s, in block %d: on the device "
             "another tile may already be in it. Use the tensor before its FreeTensor, or take a fresh one "
             "with AllocTensor/DeQue",
             api, line_ref(slot_->freed, loc).c_str(), slot_origin(*slot_, loc).c_str(), now.c_str(), blk().idx);
    }
    [[noreturn]] void out_of_bounds(const char* api, uint64_t elems, sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        uint64_t start = addr_ >= slot_->addr ? (uint64_t(addr_) - slot_->addr) / sizeof(T) : 0;
        uint64_t cap = slot_->bytes / sizeof(T);
        if (start >= cap) {
            fail("ub-out-of-bounds", loc,
                 "%s uses tensor[%llu], which starts past the end of %s, which holds %llu elements of %u bytes "
                 "(block %d): the index must stay below the buffer's element count",
                 api, (unsigned long long)start, slot_origin(*slot_, loc).c_str(), (unsigned long long)cap,
                 uint32_t(sizeof(T)), blk().idx);
        }
        if (elems >= (uint64_t(1) << 31)) {
            fail("ub-out-of-bounds", loc, "%s with a count of %llu elements (a negative count converted?), on %s "
                 "(block %d)", api, (unsigned long long)elems, slot_origin(*slot_, loc).c_str(), blk().idx);
        }
        fail("ub-out-of-bounds", loc,
             "%s touches %llu elements from element %llu of %s, which holds %llu elements of %u bytes: %llu "
             "elements past its end, in block %d. The count must fit the tensor: at most %llu elements from "
             "here (a count meant for the whole block or the total length?)",
             api, (unsigned long long)elems, (unsigned long long)start, slot_origin(*slot_, loc).c_str(),
             (unsigned long long)cap, uint32_t(sizeof(T)), (unsigned long long)(start + elems - cap), blk().idx,
             (unsigned long long)(cap - start));
    }
    void check_scalar(const char* api, uint32_t index, sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        check(api, 0, loc, false);
        uint64_t room = uint64_t(slot_->addr) + slot_->bytes;
        room = addr_ < room ? (room - addr_) / sizeof(T) : 0;
        if (index >= room) {
            fail("ub-out-of-bounds", loc,
                 "%s(%u) on a tensor with room for %llu elements before the end of %s, in block %d: the index "
                 "must stay below that",
                 api, index, (unsigned long long)room, slot_origin(*slot_, loc).c_str(), blk().idx);
        }
    }

    uint32_t addr_ = 0;  // byte offset in the block's UB
    uint32_t size_ = 0;  // elements from addr_ (int4b_t: bytes, GetSize() doubles them)
    sage::sim::Slot* slot_ = nullptr;
    uint32_t gen_ = 0;
    int32_t tag_ = 0;
    ShapeInfo shapeInfo_;
};

// ---------------------------------------------------------------- LocalMemAllocator

namespace detail {
inline sage::sim::Slot* static_slot(uint32_t addr, uint32_t bytes, const char* kind, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    auto& b = blk();
    b.slots.push_back(Slot{addr, bytes, 0, SlotState::Scratch, -1, kind, loc, 0, 1});
    ub_clear({addr, bytes});
    return &b.slots.back();
}
}  // namespace detail

// CANN 9's static tensor allocation: a bump pointer over one memory (the Unified Buffer by
// default; L1, L0A, L0B, L0C, the BiasTable or the Fixpipe Buffer for cube kernels), no queues. Each Alloc takes the
// next tileSize elements; like the device it does not round up to 32 bytes, so a tile of an odd
// size leaves the next tensor unaligned (reported when an op uses it). Only one allocator may
// own a memory at a time, and a UB allocator must not be mixed with TPipe (both carve the same
// UB from its start).
template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
public:
    static_assert(hard != Hardware::GM && hard != Hardware::MAX, "illegal hardware position GM or MAX");

    __aicore__ inline LocalMemAllocator(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        if (hard == Hardware::UB && blk().ub_used != 0) {
            report("ub-overflow", Severity::Warning, loc,
                   "LocalMemAllocator created while TPipe::InitBuffer has already carved %u bytes of the Unified "
                   "Buffer, in block %d: both start at the beginning of the UB, so their tensors overlap on the "
                   "device. Use either static tensors (LocalMemAllocator) or TPipe/TQue/TBuf, not both",
                   blk().ub_used, blk().idx);
        }
    }

    __aicore__ inline uint32_t GetCurAddr() const { return head_; }

    template <TPosition pos, class DataType, uint32_t tileSize>
    __aicore__ inline LocalTensor<DataType> Alloc(SAGE_LOC) {
        static_assert(detail::pos_mem(pos) == detail::hard_mem(hard),
                      "logic pos and hardware pos not matched: UB takes VECIN/VECOUT/VECCALC, L1 A1/B1/C1, L0A A2, "
                      "L0B B2, L0C CO1, BIAS C2, FIXBUF C2PIPE2GM");
        return take<DataType>(tileSize, loc);
    }
    template <TPosition pos, class DataType>
    __aicore__ inline LocalTensor<DataType> Alloc(uint32_t tileSize, SAGE_LOC) {
        static_assert(detail::pos_mem(pos) == detail::hard_mem(hard),
                      "logic pos and hardware pos not matched: UB takes VECIN/VECOUT/VECCALC, L1 A1/B1/C1, L0A A2, "
                      "L0B B2, L0C CO1, BIAS C2, FIXBUF C2PIPE2GM");
        return take<DataType>(tileSize, loc);
    }
    template <class DataType, uint32_t tileSize>
    __aicore__ inline LocalTensor<DataType> Alloc(SAGE_LOC) {
        return take<DataType>(tileSize, loc);
    }
    template <class DataType>
    __aicore__ inline LocalTensor<DataType> Alloc(uint32_t tileSize, SAGE_LOC) {
        return take<DataType>(tileSize, loc);
    }

private:
    static constexpr sage::sim::Mem mem_ = detail::hard_mem(hard);

    template <class T>
    LocalTensor<T> take(uint32_t tileSize, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        touch(loc);
        uint64_t bytes = elem_bytes<T>(tileSize);
        const uint32_t size = mem_bytes(mem_);
        if (uint64_t(head_) + bytes > size) {
            fail(mem_ == Mem::UB ? "ub-overflow" : "cube-buffer-overflow", loc,
                 "LocalMemAllocator::Alloc of %u elements of %u bytes (%llu bytes) from %s byte %u needs %llu bytes, "
                 "past the %u bytes (%u KB) of %s on %s by %llu bytes, in block %d. Shrink the tiles (more tiles "
                 "per block) or spread the data over more blocks",
                 tileSize, uint32_t(sizeof(T)), (unsigned long long)bytes, mem_name(mem_), head_,
                 (unsigned long long)(head_ + bytes), size, size / 1024, mem_name(mem_), chip_name(),
                 (unsigned long long)(head_ + bytes - size), blk().idx);
        }
        if (mem_ == Mem::UB && uint64_t(head_) + bytes > rt().ub_bytes - rt().ub_reserved_bytes) {
            report("ub-overflow", Severity::Warning, loc,
                   "LocalMemAllocator::Alloc brings the Unified Buffer to %llu bytes, into the top %zu KB of the "
                   "%zu KB on %s, which some CANN versions reserve",
                   (unsigned long long)(head_ + bytes), rt().ub_reserved_bytes / 1024, rt().ub_bytes / 1024,
                   chip_name());
        }
        LocalTensor<T> t;
        t.addr_ = mem_base(mem_) + head_;
        t.size_ = is_int4<T>() ? uint32_t(bytes) : tileSize;
        t.slot_ = detail::static_slot(t.addr_, uint32_t(bytes), mem_ == Mem::UB ? "static tensor (LocalMemAllocator)"
                                                                                : "static cube tensor (LocalMemAllocator)",
                                      loc);
        t.gen_ = 0;
        head_ += uint32_t(bytes);
        return t;
    }

    uint32_t head_ = 0;
};

}  // namespace AscendC
