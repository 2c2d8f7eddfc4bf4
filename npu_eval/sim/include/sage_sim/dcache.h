// A core's data cache (DCache), as far as asc-devkit's DataCacheCleanAndInvalid page describes it:
// the scalar unit reaches GM through a per-core cache of 64-byte lines, the DMA units
// (DataCopy) do not. So a scalar load (GlobalTensor::GetValue) of a line the core loaded before
// returns the cached bytes, even after another core or a DataCopy changed GM, until
// DataCacheCleanAndInvalid drops the line. A block spinning on such a stale line never sees the
// other block's flag: on the device it hangs, and here the cooperative runner reports it.
//
// Departure: a scalar store (SetValue) writes GM at once and updates the line the core holds;
// on the device it may stay in the cache until a clean or the end of the kernel.
#pragma once

#include <cstring>

#include "runtime.h"

namespace sage {
namespace sim {

// How many reads of one address, with the same value and no GM store in between, make a
// scalar load a poll point (the cooperative runner then lets the other blocks run), and how
// many fruitless polls of it make a deadlock.
constexpr uint32_t kSpinReads = 64;
constexpr int kSpinPolls = 4096;

inline uintptr_t dcache_line_of(const void* p) { return reinterpret_cast<uintptr_t>(p) & ~(kDcacheLine - 1); }

// The cached copy of the line holding [p, p + n), loaded from GM (within buffer `b`) on a miss.
inline const uint8_t* dcache_fill(const GmBuffer* b, const void* p, size_t n) {
    uintptr_t line = dcache_line_of(p);
    auto& lines = blk().dcache;
    auto it = lines.find(line);
    if (it == lines.end()) {
        DcacheLine l;
        uintptr_t base = reinterpret_cast<uintptr_t>(b->base), end = base + b->bytes;
        uintptr_t lo = std::max(line, base), hi = std::min(line + kDcacheLine, end);
        l.lo = uint8_t(lo - line);
        l.hi = uint8_t(hi - line);
        memcpy(l.bytes.data() + l.lo, reinterpret_cast<const void*>(lo), hi - lo);
        it = lines.emplace(line, l).first;
    }
    (void)n;
    return it->second.bytes.data() + (reinterpret_cast<uintptr_t>(p) - line);
}

// A scalar read of `bits` at address `a`: in the cooperative runner, reading the same address and
// value over and over with no GM store anywhere is a spin loop; every kSpinReads such reads it
// yields to the other blocks (`why()` says what it waits for), and when nothing can change the
// value any more it is a deadlock at this line.
template <typename Why>
inline void spin_read(uintptr_t a, uint64_t bits, SrcLoc loc, Why why) {
    BlockState& st = blk();
    if (a != st.spin_addr || bits != st.spin_bits || st.spin_epoch != rt().gm_epoch) {
        st.spin_addr = a, st.spin_bits = bits, st.spin_epoch = rt().gm_epoch, st.spin_count = 0;
    } else if (++st.spin_count % kSpinReads == 0 && rt().poll) {
        rt().poll(loc, why(), kSpinPolls);
    }
}

// A scalar GM load through the cache, a spin-read point (spin_read).
template <typename T>
inline T dcache_load(const GmBuffer* b, const T* p, SrcLoc loc) {
    T v;
    if (!b) return *p;  // not a buffer the host passed (reported by the caller's check)
    memcpy(&v, dcache_fill(b, p, sizeof(T)), sizeof(T));
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T) < sizeof bits ? sizeof(T) : sizeof bits);
    spin_read(reinterpret_cast<uintptr_t>(p), bits, loc, [&] {
        // GM holding another value than the cached line: the cache is why the loop never ends.
        bool stale = memcmp(p, &v, sizeof(T)) != 0;
        return stale ? std::string("reads a GM flag from the core's data cache again and again (a spin loop): "
                                   "GM has changed, but a scalar read sees it only after "
                                   "DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, "
                                   "DcciDst::CACHELINE_OUT> drops the line; call it before each read")
                     : std::string("reads the same GM value again and again (a spin loop), and no block "
                                   "writes it any more");
    });
    return v;
}

// A scalar GM store: GM at once, and the core's copy of the line when it holds one.
template <typename T>
inline void dcache_store(T* p, T v) {
    memcpy(p, &v, sizeof(T));
    auto& lines = blk().dcache;
    uintptr_t line = dcache_line_of(p);
    auto it = lines.find(line);
    if (it != lines.end()) memcpy(it->second.bytes.data() + (reinterpret_cast<uintptr_t>(p) - line), &v, sizeof(T));
}

// DataCacheCleanAndInvalid: drop the line holding `p` (the copy in GM is current: stores write
// through), or every line.
inline void dcache_invalidate(const void* p, bool entire) {
    if (entire) blk().dcache.clear();
    else blk().dcache.erase(dcache_line_of(p));
}

}  // namespace sim
}  // namespace sage
