// CANN 9 additions for kernels in the static-tensor style (the official .asc samples):
// the block_idx/block_num built-ins, g_coreType, LocalMemAllocator, ascendc_assert,
// InitGlobalMemory and the cross-block barrier SyncAll.
#pragma once

#include <cassert>
#include <cstring>
#include <string>
#include <type_traits>

#include "sage_sim/coop.h"
#include "sage_sim/vec.h"

// ---------------------------------------------------------------- built-in variables

// The device compiler gives kernels block_idx and block_num as built-in variables, and CANN's
// CPU debug declares them `extern int64_t`. Here they are references to the running block's
// state, so they hold GetBlockIdx()/GetBlockNum() in every block with nothing to update, and a
// kernel's own local of the same name still shadows them.
inline const decltype(sage::sim::BlockState::idx)& block_idx = sage::sim::rt().block.idx;
inline const decltype(sage::sim::BlockState::num)& block_num = sage::sim::rt().block.num;
// Vector kernels run on AIV cores, one sub-block each in split mode.
inline const int32_t sub_block_idx = 0;
inline const int32_t g_coreType = AscendC::AIV;

namespace AscendC {

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

// CANN 9's static tensor allocation: a bump pointer over the Unified Buffer, no queues. Each
// Alloc takes the next tileSize elements; like the device it does not round up to 32 bytes,
// so a tile of an odd size leaves the next tensor unaligned (reported when a vector op or a
// DataCopy uses it). Only one allocator may own the UB at a time and it must not be mixed
// with TPipe (both carve the same UB from its start).
template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
public:
    static_assert(hard != Hardware::GM && hard != Hardware::MAX, "illegal hardware position GM or MAX");
    static_assert(hard == Hardware::UB,
                  "LocalMemAllocator: the emulator models the Unified Buffer only (vector kernels); L1/L0 "
                  "memories of the cube unit are not emulated");

    __aicore__ inline LocalMemAllocator(SAGE_LOC) {
        using namespace sage::sim;
        touch(loc);
        if (blk().ub_used != 0) {
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
        static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC,
                      "logic pos and hardware pos not matched: a UB allocator hands out VECIN/VECOUT/VECCALC");
        return take<DataType>(tileSize, loc);
    }
    template <TPosition pos, class DataType>
    __aicore__ inline LocalTensor<DataType> Alloc(uint32_t tileSize, SAGE_LOC) {
        static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC,
                      "logic pos and hardware pos not matched: a UB allocator hands out VECIN/VECOUT/VECCALC");
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
    template <class T>
    LocalTensor<T> take(uint32_t tileSize, sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        touch(loc);
        uint64_t bytes = uint64_t(tileSize) * sizeof(T);
        if (uint64_t(head_) + bytes > rt().ub_bytes) {
            fail("ub-overflow", loc,
                 "LocalMemAllocator::Alloc of %u elements of %u bytes (%llu bytes) from UB byte %u needs %llu bytes, "
                 "past the %zu bytes (%zu KB) of Unified Buffer on %s by %llu bytes, in block %d. Shrink the tiles "
                 "(more tiles per block) or spread the data over more blocks",
                 tileSize, uint32_t(sizeof(T)), (unsigned long long)bytes, head_,
                 (unsigned long long)(head_ + bytes), rt().ub_bytes, rt().ub_bytes / 1024, chip_name(),
                 (unsigned long long)(head_ + bytes - rt().ub_bytes), blk().idx);
        }
        if (uint64_t(head_) + bytes > rt().ub_bytes - rt().ub_reserved_bytes) {
            report("ub-overflow", Severity::Warning, loc,
                   "LocalMemAllocator::Alloc brings the Unified Buffer to %llu bytes, into the top %zu KB of the "
                   "%zu KB on %s, which some CANN versions reserve",
                   (unsigned long long)(head_ + bytes), rt().ub_reserved_bytes / 1024, rt().ub_bytes / 1024,
                   chip_name());
        }
        LocalTensor<T> t;
        t.addr_ = head_;
        t.size_ = tileSize;
        t.slot_ = detail::static_slot(head_, uint32_t(bytes), "static tensor (LocalMemAllocator)", loc);
        t.gen_ = 0;
        head_ += uint32_t(bytes);
        return t;
    }

    uint32_t head_ = 0;
};

// ---------------------------------------------------------------- InitGlobalMemory

// Fills `size` elements of GM with `value` (the device stages them through UB and writes them
// with DataCopyPad on MTE3).
template <typename T>
__aicore__ inline void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value,
                                        SAGE_LOC) {
    constexpr bool ok = sage::sim::one_of<T, uint16_t, int16_t, half, float, uint32_t, int32_t>();
    SAGE_DTYPE_GATE("InitGlobalMemory", T, ok, "uint16_t, int16_t, half, float, uint32_t, int32_t")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        T* p = gmWorkspaceAddr.addr_;
        GmBuffer* b = gm_check(p, size * sizeof(T), loc, true, "InitGlobalMemory", sizeof(T), gmWorkspaceAddr.gm_);
        for (uint64_t i = 0; i < size; ++i) p[i] = value;
        gm_wrote(b, p, size * sizeof(T), loc, "InitGlobalMemory", sizeof(T));
        trace_instr(Pipe::MTE3, "InitGlobalMemory", dtype_name<T>(), uint32_t(size), size * sizeof(T), loc);
        trace_gm_shape(p, 1);
    }
}

// ---------------------------------------------------------------- SyncAll

namespace detail {
inline void sync_all(int need, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
    trace_event(TraceKind::Barrier, Pipe::ALL, "SyncAll", loc, int32_t(PIPE_ALL), need);
    if (need <= 1) return;
    if (!coop().active) {
        fail("crash", loc,
             "SyncAll across %d blocks, but this run executes the blocks one after another (block %d has run to "
             "its end before block %d starts), so a barrier between them cannot be honoured. The build switches "
             "to the cooperative block runner when the kernel file names SyncAll; call it from the kernel file "
             "(not only from a header), or build with -DSAGE_SIM_COOP=1",
             need, blk().idx > 0 ? blk().idx - 1 : 0, blk().idx + 1);
    }
    fiber_wait(loc, need);
}
}  // namespace detail

// The hardware all-core barrier: every block waits until all blocks of the launch reach it.
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll(SAGE_LOC) {
    detail::sync_all(sage::sim::blk().num, loc);
}

// The software barrier through a GM workspace (each core writes a flag and polls the others'):
// usedCores blocks take part, all of them when 0. The workspaces need 32 bytes per core.
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                               const int32_t usedCores = 0, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    int need = usedCores > 0 ? usedCores : blk().num;
    uint64_t elems = uint64_t(need) * 8;  // 32 bytes of int32 per core
    gm_check(gmWorkspace.addr_, elems * sizeof(int32_t), loc, true, "SyncAll's gmWorkspace", sizeof(int32_t),
             gmWorkspace.gm_);
    ubWorkspace.check("SyncAll's ubWorkspace", elems, loc);
    detail::sync_all(need, loc);
}

}  // namespace AscendC

// ---------------------------------------------------------------- ascendc_assert

namespace sage {
namespace sim {

// The device printf prints any integer width with %d/%u/%x and half with %f; on the host every
// integer goes out as a 64-bit value and every conversion is rewritten to take one.
template <typename A>
inline auto assert_arg(const A& a) {
    if constexpr (std::is_same<A, half>::value || std::is_same<A, bfloat16_t>::value) {
        return double(float(a));
    } else if constexpr (std::is_floating_point<A>::value) {
        return double(a);
    } else if constexpr (std::is_integral<A>::value && std::is_signed<A>::value) {
        return (long long)a;
    } else if constexpr (std::is_integral<A>::value) {
        return (unsigned long long)a;
    } else if constexpr (std::is_enum<A>::value) {
        return (long long)a;
    } else {
        return a;
    }
}

inline std::string widen_format(const char* fmt) {
    std::string out;
    for (const char* c = fmt; *c; ++c) {
        out += *c;
        if (*c != '%') continue;
        if (c[1] == '%') {
            out += *++c;
            continue;
        }
        while (c[1] && std::strchr("-+ #0123456789.*", c[1])) out += *++c;
        while (c[1] && std::strchr("hlLqjzt", c[1])) ++c;  // the width comes from assert_arg
        if (c[1] && std::strchr("diuxXo", c[1])) out += "ll";
    }
    return out;
}

// A failed device assert stops the kernel (the device traps); the finding names the
// assert's own line.
inline void kernel_assert(SrcLoc loc, const char* text, bool cond) {
    touch(loc);
    if (cond) return;
    fail("assert-failed", loc, "assertion failed in block %d: ascendc_assert(%s)", blk().idx, text);
}
template <typename... Args>
inline void kernel_assert(SrcLoc loc, const char* text, bool cond, const char* fmt, const Args&... args) {
    touch(loc);
    if (cond) return;
    std::string msg = format(widen_format(fmt).c_str(), assert_arg(args)...);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    fail("assert-failed", loc, "assertion failed in block %d: ascendc_assert(%s): %s", blk().idx, text, msg.c_str());
}

}  // namespace sim
}  // namespace sage

#define ascendc_assert(...) ::sage::sim::kernel_assert(::sage::sim::SrcLoc{__FILE__, __LINE__}, #__VA_ARGS__, __VA_ARGS__)
// Kernel headers redefine assert the same way on the device (with ASCENDC_DUMP on, the default).
#undef assert
#define assert(...) ascendc_assert(__VA_ARGS__)
