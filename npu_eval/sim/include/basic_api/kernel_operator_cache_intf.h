// DataCacheCleanAndInvalid: keeps a core's data cache (sage_sim/dcache.h) consistent with GM.
// Scalar GM reads (GlobalTensor::GetValue) are served from the cache once a line is loaded, so a
// block polling a flag that another block or a DataCopy writes must drop the line before each
// read. The form with dcciDst names the memory to be consistent with: CACHELINE_OUT (and
// CACHELINE_ALL, the same) GM, CACHELINE_UB the Unified Buffer (the emulator caches no UB),
// CACHELINE_ATOMIC only Ascend 950.
//
// In the cooperative block runner a DataCacheCleanAndInvalid of GM is where a polling block lets
// the others run (a poll loop calls it before each read).
#pragma once

#include "../sage_sim/dcache.h"
#include "kernel_tensor.h"

namespace AscendC {

enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

namespace detail {
template <typename T>
inline void dcci_gm(const GlobalTensor<T>& dst, CacheLine entireType, DcciDst dcciDst, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    touch(loc);
#if !(defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510 || __NPU_ARCH__ == 5102))
    if (dcciDst == DcciDst::CACHELINE_ATOMIC) {
        fail("api-misuse", loc, "DataCacheCleanAndInvalid with DcciDst::CACHELINE_ATOMIC, in block %d: only Ascend "
             "950 supports it (%s does not); use DcciDst::CACHELINE_OUT", blk().idx, chip_name());
    }
#endif
    bool entire = entireType == CacheLine::ENTIRE_DATA_CACHE;
    if (!entire) gm_check(dst.addr_, sizeof(T), loc, false, "DataCacheCleanAndInvalid", sizeof(T), dst.gm_);
    if (dcciDst != DcciDst::CACHELINE_UB) dcache_invalidate(dst.addr_, entire);
    trace_instr(Pipe::S, "DataCacheCleanAndInvalid", dtype_name<T>(), 1, entire ? 0 : kDcacheLine, loc);
    // A poll loop drops the line before each read: let the other blocks store meanwhile.
    if (rt().poll && dcciDst != DcciDst::CACHELINE_UB) {
        rt().poll(loc,
                  "polls GM through DataCacheCleanAndInvalid again and again, and no block stores to GM any more "
                  "(the flag it waits for is never written)",
                  sage::sim::kSpinPolls);
    }
}
}  // namespace detail

template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst, SAGE_LOC) {
    detail::dcci_gm(dst, entireType, dcciDst, loc);
}

// The DCache and the Unified Buffer: the emulator caches no UB, so only the instruction is counted.
template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const LocalTensor<T>& dst, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    dst.check("DataCacheCleanAndInvalid", 0, loc, false);
    trace_instr(Pipe::S, "DataCacheCleanAndInvalid", dtype_name<T>(), 1, 0, loc);
}

// The form without dcciDst: consistency with GM.
template <typename T, CacheLine entireType>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst, SAGE_LOC) {
    detail::dcci_gm(dst, entireType, DcciDst::CACHELINE_OUT, loc);
}

}  // namespace AscendC
