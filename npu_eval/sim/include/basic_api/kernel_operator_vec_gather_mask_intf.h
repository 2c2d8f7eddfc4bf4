// GatherMask: keep the elements a bit pattern selects, packed (the vreducev2 instruction).
// Gather and Gatherb are in kernel_operator_vec_gather_intf.h.
#pragma once

#include <vector>

#include "../sage_sim/vec.h"

namespace AscendC {

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
#if SAGE_CHIP_FAMILY == 310
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;
#else
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;
#endif
constexpr GatherMaskMode defaultGahterMaskMode = defaultGatherMaskMode;  // CANN's own (misspelt) name

// Strides count 32-byte blocks.
struct GatherMaskParams {
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
    __aicore__ GatherMaskParams() {}
    __aicore__ GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn,
                                const uint16_t src0RepeatStrideIn, const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
};

#define SAGE_GATHER_OK (::sage::sim::one_of<T, half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t>())
#define SAGE_GATHER_LIST "half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t"

namespace detail {

// The count the last GatherMask kept (GetGatherMaskRemainCount reads the same register).
inline uint64_t& gather_mask_count() {
    static uint64_t n = 0;
    return n;
}

// Elements per repeat are 256 bytes' worth; in Counter mode (reduceMode) Atlas A2 takes `mask`
// elements per repeat, repeatTimes repeats (the GatherMask doc's "configuration 1"), so a
// repeat may run past 8 blocks. pattern(r, k) tells whether element k of repeat r is kept.
template <typename T, class Pattern>
inline void gather_mask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, bool reduceMode, uint32_t mask,
                        const GatherMaskParams& p, uint64_t& rsvdCnt, sage::sim::SrcLoc loc, Pattern pattern,
                        sage::sim::UbRange src1_range) {
    using namespace sage::sim;
    const char* api = "GatherMask";
    constexpr uint32_t epr = elems_per_repeat<T>();
    if (reduceMode && mask == 0) {
        fail("ub-out-of-bounds", loc,
             "GatherMask with reduceMode = true (Counter mode) and mask 0, in block %d: in Counter mode mask is the "
             "number of elements each repeat processes, 1 or more (in Normal mode, reduceMode = false, it is "
             "ignored)",
             blk().idx);
    }
    const uint32_t per = reduceMode ? mask : epr;
    const uint32_t reps = p.repeatTimes;
    Lay ls = lay<T>(p.src0BlockStride, p.src0RepeatStride);
    uint64_t ext = 0;  // the last repeat reaches furthest
    for (uint32_t k = 0; reps && k < per; ++k) ext = std::max<uint64_t>(ext, ls.off(reps - 1, k) + 1);
    src0.check(api, ext, loc);
    dst.check(api, 0, loc);
    std::vector<T> out;
    out.reserve(size_t(reps) * per);
    const T* s = src0.data();
    const uint8_t* init = blk().ub_init + src0.addr_;
    bool uninit = false;
    uint64_t uninit_at = 0;
    for (uint32_t r = 0; r < reps; ++r) {
        for (uint32_t k = 0; k < per; ++k) {
            if (!pattern(r, k)) continue;
            uint64_t o = ls.off(r, k);
            if (!uninit) {
                for (uint32_t b = 0; b < sizeof(T); ++b)
                    if (!init[o * sizeof(T) + b]) uninit = true, uninit_at = o;
            }
            out.push_back(s[o]);
        }
    }
    if (uninit) {
        report("uninitialized-read", Severity::Warning, loc,
               "GatherMask keeps element %llu of src0 (UB byte %llu), which nothing wrote since its buffer was "
               "allocated (block %d): that lane of dst gets stale data",
               (unsigned long long)uninit_at, (unsigned long long)(src0.addr_ + uninit_at * sizeof(T)), blk().idx);
    }
    uint64_t n = out.size();
    dst.check(api, n, loc);
    if (n) memcpy(static_cast<void*>(dst.data()), out.data(), n * sizeof(T));
    ub_mark(dst.range(n));
    rsvdCnt = n;
    gather_mask_count() = n;
    // The instruction leaves Normal mode behind, with the vector mask register holding `mask`.
    VecRegs& vr = vregs();
    vr.counter = false;
    vr.mask_hi = 0;
    vr.mask_lo = mask;
    uint64_t bytes = uint64_t(reps) * ((uint64_t(per) * sizeof(T) + 255) / 256) * 256;
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(n), bytes, loc, dst.range(n), src0.range(ext), src1_range);
}

inline bool builtin_pattern(uint8_t mode, uint32_t k) {
    switch (mode) {
        case 1: return k % 2 == 0;
        case 2: return k % 2 == 1;
        case 3: return k % 4 == 0;
        case 4: return k % 4 == 1;
        case 5: return k % 4 == 2;
        case 6: return k % 4 == 3;
        default: return true;
    }
}

}  // namespace detail

// User pattern: bit k of src1Pattern (U = uint16_t for 16-bit T, uint32_t for 32-bit T)
// keeps element k of a repeat; the bits run on within a repeat, and each repeat starts
// src1RepeatStride blocks further (0: every repeat reads the same bits).
template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                  const LocalTensor<U>& src1Pattern, const bool reduceMode, const uint32_t mask,
                                  const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt, SAGE_LOC) {
    SAGE_DTYPE_GATE("GatherMask", T, SAGE_GATHER_OK, SAGE_GATHER_LIST)
    static_assert(std::is_same<U, uint16_t>::value || std::is_same<U, uint32_t>::value ||
                      (sizeof(U) == sizeof(T) && SAGE_GATHER_OK),
                  "[dtype-unsupported] GatherMask's src1Pattern must be a uint16_t tensor (16-bit data) or a uint32_t "
                  "tensor (32-bit data)");
    static_assert(sizeof(U) == sizeof(T),
                  "[dtype-unsupported] GatherMask's src1Pattern must have the data's width: uint16_t for half, "
                  "bfloat16_t, int16_t, uint16_t; uint32_t for float, int32_t, uint32_t");
    if constexpr (SAGE_GATHER_OK && sizeof(U) == sizeof(T)) {
        using namespace sage::sim;
        touch(loc);
        constexpr uint32_t epr = elems_per_repeat<T>();
        const uint32_t per = reduceMode ? mask : epr;
        const uint32_t reps = gatherMaskParams.repeatTimes;
        const uint64_t rep_bytes = uint64_t(gatherMaskParams.src1RepeatStride) * 32;
        uint64_t pat_bytes = reps ? (reps - 1) * rep_bytes + (uint64_t(per) + 7) / 8 : 0;
        uint64_t pat_elems = (pat_bytes + sizeof(U) - 1) / sizeof(U);
        src1Pattern.check("GatherMask", pat_elems, loc);
        ub_check_init(src1Pattern.range(pat_elems), "GatherMask (src1Pattern)", loc);
        const uint8_t* bits = reinterpret_cast<const uint8_t*>(src1Pattern.data());
        auto pattern = [&](uint32_t r, uint32_t k) {
            return (bits[r * rep_bytes + k / 8] >> (k % 8)) & 1;
        };
        detail::gather_mask(dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, loc, pattern,
                            src1Pattern.range(pat_elems));
    }
}

// Built-in pattern, the same in every repeat: 1 even elements, 2 odd elements, 3..6 the
// first..fourth of every four, 7 all.
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                                  const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                                  uint64_t& rsvdCnt, SAGE_LOC) {
    SAGE_DTYPE_GATE("GatherMask", T, SAGE_GATHER_OK, SAGE_GATHER_LIST)
    if constexpr (SAGE_GATHER_OK) {
        using namespace sage::sim;
        touch(loc);
        if (src1Pattern < 1 || src1Pattern > 7) {
            fail("crash", loc,
                 "GatherMask with built-in src1Pattern %u, in block %d: the built-in patterns are 1 to 7 (1 even "
                 "elements, 2 odd, 3-6 one of every four, 7 all); pass a LocalTensor for a pattern of your own",
                 unsigned(src1Pattern), blk().idx);
        }
        auto pattern = [&](uint32_t, uint32_t k) { return detail::builtin_pattern(src1Pattern, k); };
        detail::gather_mask(dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, loc, pattern, {});
    }
}

__aicore__ inline int64_t GetGatherMaskRemainCount() { return int64_t(detail::gather_mask_count()); }

#undef SAGE_GATHER_OK
#undef SAGE_GATHER_LIST

}  // namespace AscendC
