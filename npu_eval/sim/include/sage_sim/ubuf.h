// The C API's Unified Buffer: where `__ubuf__` storage lives and how a `__ubuf__` pointer maps
// to a place in the block's UB.
//
// On the device a kernel's `__ubuf__ float x[256];` is not on a stack (the UB has none): the
// compiler gives each such declaration a fixed UB address. sage-npu rewrites the declaration
// (npu_eval/ubuf.py, on the same line) into `auto& x = ::sage::sim::ub_array<float[256]>("x");`,
// which does the same here: the first time a block reaches the declaration it is placed in the
// block's UB (32-byte aligned, from byte 0 up) as a slot named after the array, so the checks
// the C++ API's tensors get (bounds, alignment, uninitialized reads, pipe races in the trace)
// apply to it and name it. Reaching the declaration again (a loop) gives the same storage.
//
// A `__ubuf__ T*` the C API receives is an address in that space: a pointer into the block's
// UB, or a small integer (a raw UB byte address, as asc_get_phy_buf_addr-style code makes).
// Anything else (a GM pointer, a plain local array the rewrite did not see) is a fault at the
// call.
#pragma once

#include "../basic_api/kernel_tensor.h"
#include "vec.h"

namespace sage {
namespace sim {

// The storage of the `__ubuf__` array declared at `loc` with this name; `A` is its array type.
template <class A>
inline A& ub_array(const char* name, SAGE_LOC) {
    BlockState& b = blk();
    for (Slot* s : b.ubuf_slots) {
        if (s->name == name && s->init.line == loc.line && s->init.file == loc.file)
            return *reinterpret_cast<A*>(b.ub + s->addr);
    }
    uint64_t addr = (uint64_t(b.ubuf_used) + 31) / 32 * 32;
    uint64_t end = addr + sizeof(A);
    if (end > rt().ub_bytes) {
        fail("ub-overflow", loc,
             "__ubuf__ array '%s' (%zu bytes) does not fit: with the __ubuf__ arrays before it the block needs "
             "%llu bytes of Unified Buffer, past the %zu bytes (%zu KB) on %s by %llu bytes, in block %d. Make "
             "the arrays smaller (smaller tiles, more of them) or spread the data over more blocks",
             name, sizeof(A), (unsigned long long)end, rt().ub_bytes, rt().ub_bytes / 1024, chip_name(),
             (unsigned long long)(end - rt().ub_bytes), b.idx);
    }
    b.slots.push_back(Slot{uint32_t(addr), uint32_t(sizeof(A)), 0, SlotState::Scratch, -1, "__ubuf__ array", loc,
                           0, 1});
    Slot* s = &b.slots.back();
    s->name = name;
    b.ubuf_slots.push_back(s);
    b.ubuf_used = uint32_t(end);
    ub_clear({uint32_t(addr), uint32_t(sizeof(A))});
    memset(b.ub + addr, kUbStale, sizeof(A));  // stale, as the device leaves it
    return *reinterpret_cast<A*>(b.ub + addr);
}

// The whole UB as one slot: what a raw UB address with no array around it is checked against.
// Kept out of the block's slot list, so it never hides the array an address lies in.
inline Slot* ub_whole_slot() {
    Slot& w = blk().ub_whole;
    if (!w.bytes) w = Slot{0, uint32_t(rt().ub_bytes), 0, SlotState::Scratch, -1, "Unified Buffer", {"", 0}, 0, 1};
    return &w;
}

[[noreturn]] SAGE_SIM_OUTLINE void not_ub_address(const void* p, const char* api, const char* role, SrcLoc loc) {
    const GmBuffer* g = gm_find(p);
    std::string what = g ? format("it points into GM buffer '%s'", g->name.c_str())
                         : std::string("it is neither inside the block's Unified Buffer nor a UB byte address "
                                       "(a host or stack pointer?)");
    fail("ub-out-of-bounds", loc,
         "%s's %s is not a Unified Buffer address: %s, in block %d. A __ubuf__ operand must point into a "
         "`__ubuf__ T name[N];` array declared in the kernel (or be a UB byte address)",
         api, role, what.c_str(), blk().idx);
}

// A `__ubuf__ T*` as a view of the block's UB, for the emulator's checks and engines: from the
// address to the end of the `__ubuf__` array (or UB) holding it.
template <typename T>
inline AscendC::LocalTensor<T> ub_view(const volatile T* p, const char* api, const char* role, SrcLoc loc) {
    BlockState& b = blk();
    auto q = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(b.ub);
    uint64_t addr;
    if (q >= base && q < base + rt().ub_bytes) addr = q - base;
    else if (q < rt().ub_bytes) addr = q;
    else not_ub_address(const_cast<const T*>(p), api, role, loc);
    Slot* s = slot_at(uint32_t(addr));
    if (!s) s = ub_whole_slot();
    AscendC::LocalTensor<T> t;
    t.addr_ = uint32_t(addr);
    uint64_t end = uint64_t(s->addr) + s->bytes;
    t.size_ = uint32_t((end - addr) / sizeof(T));
    t.slot_ = s;
    t.gen_ = s->gen;
    return t;
}

// A C API scalar argument: takes the operand's type, converted from what the call passes (so
// `asc_add_scalar(x, x, 2, n)` on float arrays works as the real per-dtype overloads do).
template <typename T>
struct same {
    using type = T;
};
template <typename T>
using same_t = typename same<T>::type;

// The count form of a C API vector op, as asc-devkit implements it for 910B: Counter mode with the
// count in the mask register, the repeat form once with default strides, back to Normal mode.
// Normal mode then reads the mask register as bits, and it still holds (0, count): a later repeat
// form sees that mask unless the kernel sets one (asc_set_vector_mask, or asc_init's full mask).
template <class Run>
inline void capi_count(uint32_t count, Run&& run) {
    VecRegs& r = vregs();
    r.counter = true;
    r.mask_hi = 0;
    r.mask_lo = count;
    run();
    vregs().counter = false;
}

// A count form's operands hold `count` elements: checked up front, so an overrun names the array
// and the count the kernel passed (the repeat form's check would speak of repeats).
template <class... P>
inline void capi_count_check(const char* api, uint64_t count, SrcLoc loc, P*... ops) {
    static const char* roles3[] = {"dst", "src0", "src1"};
    static const char* roles2[] = {"dst", "src"};
    const char** roles = sizeof...(P) == 3 ? roles3 : roles2;
    int i = 0;
    (ub_view(ops, api, roles[i++], loc).check(api, count, loc, false), ...);
}

// The `_sync` forms: the op, then a barrier on every pipe (pipe_barrier(PIPE_ALL)).
inline void capi_sync_all(const char* api, SrcLoc loc) {
    trace_event(TraceKind::Barrier, Pipe::ALL, api, loc, int32_t(PIPE_ALL), 0);
}

}  // namespace sim
}  // namespace sage
