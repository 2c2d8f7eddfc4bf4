// asc-devkit's `utils/debug/asc_dump.h` (asc_dump.md): asc_dump_gm / _ubuf / _l1buf / _cbuf and
// asc_dump print `dump_size` elements from a raw pointer into GM, the Unified Buffer, L1 or L0C,
// labelled `desc`, in DumpTensor's format with the memory as its position. On the CPU the address
// spaces (`__gm__`, `__ubuf__`, `__cbuf__`, `__cc__`) are one, so asc_dump tells them apart by
// where the address lies; the named forms check that it lies where their name says.
#pragma once

#include "../../kernel_operator.h"

namespace sage {
namespace sim {

// The local memory `p` lies in (its byte address in the block's local map in *addr), or Mem::Count
// when it lies in none (a GM address).
inline Mem local_mem_of(const void* p, uint32_t* addr) {
    auto q = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(blk().ub);
    if (!blk().ub || q < base || q >= base + local_bytes()) return Mem::Count;
    *addr = uint32_t(q - base);
    for (int m = 0; m < int(Mem::Count); ++m)
        if (*addr >= mem_base(Mem(m)) && *addr < mem_base(Mem(m)) + mem_bytes(Mem(m))) return Mem(m);
    return Mem::Count;
}
inline const char* dump_position(Mem m) {
    static const char* names[] = {"UB", "L1", "L0A", "L0B", "L0C", "BT", "FB", "GM"};
    return names[int(m)];
}

template <typename T>
inline void asc_dump_at(const T* input, uint32_t desc, uint32_t dump_size, Mem want, bool any, const char* api,
                        SrcLoc loc) {
    touch(loc);
    uint32_t addr = 0;
    const Mem m = local_mem_of(input, &addr);
    if (!any && m != want) {
        fail("api-misuse", loc, "%s is given an address in %s, not in %s, in block %d: use the form for that memory "
             "(asc_dump picks it by address)", api, m == Mem::Count ? "GM" : mem_name(m),
             want == Mem::Count ? "GM" : mem_name(want), blk().idx);
    }
    const uint64_t bytes = uint64_t(dump_size) * sizeof(T);
    if (m == Mem::Count) {
        gm_check(input, bytes, loc, false, api, sizeof(T));
        std::printf("DumpTensor: desc=%u, data_type=%s, position=GM, block=%d\n[", desc, dtype_name<T>(), blk().idx);
    } else {
        if (uint64_t(addr) + bytes > uint64_t(mem_base(m)) + mem_bytes(m)) {
            fail("ub-out-of-bounds", loc, "%s dumps %u elements from byte %u of the %s, past its %u bytes, in block %d",
                 api, dump_size, addr - mem_base(m), mem_name(m), mem_bytes(m), blk().idx);
        }
        std::printf("DumpTensor: desc=%u, addr=%u, data_type=%s, position=%s, block=%d\n[", desc,
                    addr - mem_base(m), dtype_name<T>(), dump_position(m), blk().idx);
    }
    for (uint32_t i = 0; i < dump_size; ++i) {
        if (i) std::printf(", ");
        AscendC::detail::print_value(input[i]);
    }
    std::printf("]\n");
}

}  // namespace sim
}  // namespace sage

template <typename T>
__aicore__ inline void asc_dump_gm(__gm__ T* input, uint32_t desc, uint32_t dump_size, SAGE_LOC) {
    sage::sim::asc_dump_at(input, desc, dump_size, sage::sim::Mem::Count, false, "asc_dump_gm", loc);
}
template <typename T>
__aicore__ inline void asc_dump_ubuf(__ubuf__ T* input, uint32_t desc, uint32_t dump_size, SAGE_LOC) {
    sage::sim::asc_dump_at(input, desc, dump_size, sage::sim::Mem::UB, false, "asc_dump_ubuf", loc);
}
template <typename T>
__aicore__ inline void asc_dump_l1buf(__cbuf__ T* input, uint32_t desc, uint32_t dump_size, SAGE_LOC) {
    sage::sim::asc_dump_at(input, desc, dump_size, sage::sim::Mem::L1, false, "asc_dump_l1buf", loc);
}
template <typename T>
__aicore__ inline void asc_dump_cbuf(__cc__ T* input, uint32_t desc, uint32_t dump_size, SAGE_LOC) {
    sage::sim::asc_dump_at(input, desc, dump_size, sage::sim::Mem::L0C, false, "asc_dump_cbuf", loc);
}
template <typename T>
__aicore__ inline void asc_dump(T* input, uint32_t desc, uint32_t dump_size, SAGE_LOC) {
    sage::sim::asc_dump_at(input, desc, dump_size, sage::sim::Mem::Count, true, "asc_dump", loc);
}
