// What every vector instruction shares: operand checks (live buffer, bounds, 32-byte
// alignment, initialised sources), the dtype gate, the vector mask registers, the
// mask/repeat walk and the trace record. The API family headers (kernel_vec_*.h) are thin
// loops over these.
//
// The vector unit works in repeats of 256 bytes (128 half, 64 float). An instruction runs
// `repeatTime` repeats; in repeat r, element k (0 <= k < 256/sizeof(T)) of operand X sits at
//   X + ((r * XRepStride + (k / epb) * XBlkStride) * 32 bytes) + (k % epb) * sizeof(T)
// where epb = 32/sizeof(T) elements per block, and runs only if bit k of the mask is set.
// In Counter mode (SetMaskCount) the mask register holds an element count instead: the
// repeats are ceil(count / elements-per-repeat), all full but the last.
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>

#include "../basic_api/kernel_tensor.h"

// The chip family as diagnostics name it.
#if SAGE_CHIP_FAMILY == 310
#define SAGE_CHIP_LABEL "310P"
#else
#define SAGE_CHIP_LABEL "910B"
#endif

// Float overflow behaviour. Atlas A2 (910B) runs in Inf/NaN mode by default, IEEE 754
// results (CANN set_device_sat_mode: "Retain the default Inf/NaN mode"); the inference
// series (310P) only saturates, so a half result past 65504 becomes +-65504.
#ifndef SAGE_SAT_MODE
#if SAGE_CHIP_FAMILY == 310
#define SAGE_SAT_MODE 1
#else
#define SAGE_SAT_MODE 0
#endif
#endif

namespace sage {
namespace sim {

// ---------------------------------------------------------------- dtype gates

template <typename T, typename... A>
constexpr bool one_of() {
    return (std::is_same<T, A>::value || ...);
}

// The vector unit's dtypes per chip family. A kernel that asks for another gets a compile
// error tagged [dtype-unsupported], which the build stage reports with that code.
template <typename T>
constexpr bool is_vec_float() {
    return one_of<T, half, float>();
}
template <typename T>
constexpr bool is_vec_int() {
    return one_of<T, int16_t, int32_t, uint16_t, uint32_t>();
}
template <typename T>
constexpr bool is_named_dtype() {
    return one_of<T, half, bfloat16_t, float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                  int64_t, uint64_t>();
}

// One static_assert per dtype so the message names the dtype the kernel used: a static
// assertion's message must be a literal, so it cannot be composed from T.
#define SAGE_GATE_ONE(API, T, TY, OK, LIST)                                                                     \
    static_assert(!std::is_same<T, TY>::value || (OK),                                                          \
                  "[dtype-unsupported] " API " has no " #TY " overload on " SAGE_CHIP_LABEL " (it takes " LIST ")");
#define SAGE_DTYPE_GATE(API, T, OK, LIST)                                                                         \
    SAGE_GATE_ONE(API, T, half, OK, LIST)                                                                         \
    SAGE_GATE_ONE(API, T, bfloat16_t, OK, LIST)                                                                   \
    SAGE_GATE_ONE(API, T, float, OK, LIST)                                                                        \
    SAGE_GATE_ONE(API, T, double, OK, LIST)                                                                       \
    SAGE_GATE_ONE(API, T, int8_t, OK, LIST)                                                                       \
    SAGE_GATE_ONE(API, T, uint8_t, OK, LIST)                                                                      \
    SAGE_GATE_ONE(API, T, int16_t, OK, LIST)                                                                      \
    SAGE_GATE_ONE(API, T, uint16_t, OK, LIST)                                                                     \
    SAGE_GATE_ONE(API, T, int32_t, OK, LIST)                                                                      \
    SAGE_GATE_ONE(API, T, uint32_t, OK, LIST)                                                                     \
    SAGE_GATE_ONE(API, T, int64_t, OK, LIST)                                                                      \
    SAGE_GATE_ONE(API, T, uint64_t, OK, LIST)                                                                     \
    static_assert(::sage::sim::is_named_dtype<T>() || (OK),                                                       \
                  "[dtype-unsupported] " API " has no overload for this element type on " SAGE_CHIP_LABEL        \
                  " (it takes " LIST ")");

// ---------------------------------------------------------------- arithmetic types

// Each dtype computes in a wider type and rounds once per instruction: half in float (exact
// for + - * / sqrt, see kernel_dtypes.h), integers in a wider integer and wrap on the way back.
template <typename T> struct calc_of { using type = T; };
template <> struct calc_of<half> { using type = float; };
template <> struct calc_of<bfloat16_t> { using type = float; };
template <> struct calc_of<int8_t> { using type = int32_t; };
template <> struct calc_of<uint8_t> { using type = uint32_t; };
template <> struct calc_of<int16_t> { using type = int32_t; };
template <> struct calc_of<uint16_t> { using type = uint32_t; };
template <> struct calc_of<int32_t> { using type = int64_t; };
template <> struct calc_of<uint32_t> { using type = uint64_t; };
template <typename T>
using calc_t = typename calc_of<T>::type;

template <typename T>
inline calc_t<T> up(T v) {
    return calc_t<T>(v);
}

template <typename T, typename C>
inline T down(C v) {
    if constexpr (std::is_same<T, half>::value) {
#if SAGE_SAT_MODE
        float f = float(v);
        if (f > 65504.0f) f = 65504.0f;
        if (f < -65504.0f) f = -65504.0f;
        return half(f);
#else
        return half(float(v));
#endif
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t(float(v));
    } else if constexpr (std::is_integral<T>::value) {
        // Two's-complement wrap, as the integer ALU does.
        return T(typename std::make_unsigned<T>::type(uint64_t(int64_t(v))));
    } else {
        return T(v);
    }
}

// Rounds a float result to T as one vector instruction stores it.
template <typename T>
inline float round_as(float v) {
    return float(down<T>(v));
}

template <typename T>
constexpr uint32_t elems_per_repeat() {
    return 256 / sizeof(T);
}
template <typename T>
constexpr uint32_t blk_shift() {
    return sizeof(T) == 1 ? 5 : sizeof(T) == 2 ? 4 : sizeof(T) == 4 ? 3 : 2;
}

// Vector ops read and write 256 bytes per repeat; the cost model wants the repeat count.
template <typename T>
inline uint32_t repeats_of(uint64_t count) {
    return uint32_t((count * sizeof(T) + 255) / 256);
}

// ---------------------------------------------------------------- vector registers

// The per-core registers the mask/repeat forms read: the vector mask (bits in Normal mode,
// an element count in Counter mode), CMPMASK (Compare without dst, Select mode 0), the
// dequant scale (Cast int32->half) and the reduce special registers.
struct VecRegs {
    int block = -1;
    bool counter = false;
    uint64_t mask_hi = ~0ull, mask_lo = ~0ull;
    uint64_t cmpmask[2] = {0, 0};
    float deq_scale = 1.0f;
    double acc = 0;            // GetAccVal / GetReduceRepeatSumSpr
    float maxmin_value = 0;    // GetReduceMaxMinCount / GetReduceRepeatMaxMinSpr
    uint32_t maxmin_index = 0;
    // The line of an AscendCUtils::SetOverflow call that asked for the other float overflow mode
    // than the one this build emulates (SAGE_SAT_MODE); 0: none. Vector ops after it fault.
    int other_overflow_mode_line = 0;
};

// Blocks run one after another in this process; each starts with the reset state a core
// has after InitSocState.
inline VecRegs& vregs() {
    static VecRegs r;
    if (r.block != blk().idx) {
        r = VecRegs{};
        r.block = blk().idx;
    }
    return r;
}

// The count forms switch to Counter mode, run, and leave Normal mode with a full mask
// behind (the real implementation ends with set_mask_norm + set_vector_mask(-1, -1)).
inline void count_form_done() {
    VecRegs& r = vregs();
    r.counter = false;
    r.mask_hi = r.mask_lo = ~0ull;
}

inline void continuous_bits(uint64_t len, uint32_t epr, uint64_t* hi, uint64_t* lo) {
    if (len >= epr || len >= 128) {
        *hi = *lo = ~0ull;
    } else if (len >= 64) {
        *lo = ~0ull;
        *hi = len == 64 ? 0 : (1ull << (len - 64)) - 1;
    } else {
        *hi = 0;
        *lo = (1ull << len) - 1;
    }
}

// The elements one mask/repeat instruction touches.
struct Repeats {
    uint32_t epr = 0;      // elements per repeat
    uint32_t repeats = 0;
    bool counter = false;
    uint64_t count = 0;    // Counter mode: elements in total
    uint64_t bits[2] = {0, 0};

    void repeat_bits(uint32_t r, uint64_t* b0, uint64_t* b1) const {
        if (!counter) {
            *b0 = bits[0];
            *b1 = bits[1];
            return;
        }
        uint64_t left = count - uint64_t(r) * epr;
        continuous_bits(left < epr ? left : epr, epr, b1, b0);
        if (epr <= 64) *b1 = 0;
        if (epr < 64) *b0 &= (1ull << epr) - 1;
    }
    // f(r, k) for every active element k of every repeat r, in order.
    template <class F>
    void each(F&& f) const {
        for (uint32_t r = 0; r < repeats; ++r) {
            uint64_t w[2];
            repeat_bits(r, &w[0], &w[1]);
            for (uint32_t h = 0; h < 2; ++h) {
                uint64_t word = w[h];
                while (word) {
                    uint32_t k = uint32_t(__builtin_ctzll(word)) + 64 * h;
                    f(r, k);
                    word &= word - 1;
                }
            }
        }
    }
    uint64_t active() const {
        if (counter) return count;
        return uint64_t(repeats) * uint64_t(__builtin_popcountll(bits[0]) + __builtin_popcountll(bits[1]));
    }
};

inline Repeats finish_repeats(uint32_t epr, uint32_t repeat) {
    VecRegs& st = vregs();
    Repeats m;
    m.epr = epr;
    if (st.counter) {
        m.counter = true;
        m.count = st.mask_lo;
        m.repeats = uint32_t((m.count + epr - 1) / epr);
        return m;
    }
    m.repeats = repeat;
    m.bits[0] = st.mask_lo;
    m.bits[1] = epr > 64 ? st.mask_hi : 0;
    if (epr < 64) m.bits[0] &= (1ull << epr) - 1;
    return m;
}

// mask[] form: 16-bit elements read mask[0] (elements 0..63) and mask[1] (64..127); wider
// elements read mask[0] only, so a one-word array is fine for them.
inline Repeats repeats_from_array(uint32_t epr, bool isSetMask, const uint64_t* mask, uint32_t repeat) {
    VecRegs& st = vregs();
    if (isSetMask) {
        if (st.counter) {
            st.mask_hi = 0;
            st.mask_lo = mask[0];
        } else {
            st.mask_lo = mask[0];
            st.mask_hi = epr > 64 ? mask[1] : 0;
        }
    }
    return finish_repeats(epr, repeat);
}

// Continuous form: the first `len` elements of each repeat.
inline Repeats repeats_from_len(uint32_t epr, bool isSetMask, uint64_t len, uint32_t repeat) {
    VecRegs& st = vregs();
    if (isSetMask) {
        if (st.counter) {
            st.mask_hi = 0;
            st.mask_lo = len;
        } else {
            continuous_bits(len, epr, &st.mask_hi, &st.mask_lo);
        }
    }
    return finish_repeats(epr, repeat);
}

// Element offsets of one operand in a mask/repeat instruction.
struct Lay {
    uint32_t shift;     // log2(elements per 32-byte block)
    uint32_t blk, rep;  // strides in 32-byte blocks
    uint64_t off(uint32_t r, uint32_t k) const {
        return ((uint64_t(r) * rep + uint64_t(k >> shift) * blk) << shift) + (k & ((1u << shift) - 1));
    }
};
template <typename T>
inline Lay lay(uint32_t blkStride, uint32_t repStride) {
    return Lay{blk_shift<T>(), blkStride, repStride};
}

// ---------------------------------------------------------------- operand checks

template <typename T>
inline void vec_src(const AscendC::LocalTensor<T>& t, const char* api, uint64_t count, SrcLoc loc) {
    t.check(api, count, loc);
    ub_check_init(t.range(count), api, loc);
}
template <typename T>
inline void vec_dst(const AscendC::LocalTensor<T>& t, const char* api, uint64_t count, SrcLoc loc) {
    if (vregs().other_overflow_mode_line) {
        fail("not-emulated", loc,
             "%s after AscendCUtils::SetOverflow at line %d switched the float overflow mode to %s: sage-npu "
             "computes in " SAGE_CHIP_LABEL "'s default mode only; switch it back before vector work, or run this "
             "kernel with CANN", api, vregs().other_overflow_mode_line, SAGE_SAT_MODE ? "Inf/NaN" : "saturation");
    }
    t.check(api, count, loc);
}
template <typename T>
inline void vec_done(const AscendC::LocalTensor<T>& dst, const char* api, uint64_t count, SrcLoc loc, UbRange r0,
                     UbRange r1 = {}) {
    ub_mark(dst.range(count));
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(count), count * sizeof(T), loc, dst.range(count), r0, r1);
}

// A count form's element count: a negative int32 reaches the device as a huge unsigned count.
inline uint64_t count_arg(int64_t count, const char* api, SrcLoc loc) {
    if (count < 0) {
        fail("ub-out-of-bounds", loc, "%s with count %lld: the count must not be negative", api, (long long)count);
    }
    return uint64_t(count);
}

// The elements an operand spans under a mask/repeat instruction. Offsets grow with the
// repeat and every repeat selects the same elements, so the last repeat reaches furthest;
// in Counter mode the last repeat may be partial and the one before it full.
inline uint64_t masked_extent(const Repeats& m, Lay l) {
    uint64_t ext = 0;
    auto scan = [&](uint32_t r) {
        uint64_t w[2];
        m.repeat_bits(r, &w[0], &w[1]);
        for (uint32_t h = 0; h < 2; ++h) {
            for (uint64_t word = w[h]; word; word &= word - 1) {
                uint64_t e = l.off(r, uint32_t(__builtin_ctzll(word)) + 64 * h) + 1;
                if (e > ext) ext = e;
            }
        }
    };
    if (m.repeats) scan(m.repeats - 1);
    if (m.counter && m.repeats > 1) scan(m.repeats - 2);
    return ext;
}

// A live buffer, an aligned start, and room for every element the repeats reach.
template <typename T>
inline uint64_t masked_check(const AscendC::LocalTensor<T>& t, const Repeats& m, Lay l, const char* api, SrcLoc loc,
                             const char* role, bool aligned = true) {
    uint64_t ext = masked_extent(m, l);
    t.check(api, 0, loc, aligned);
    uint64_t end = uint64_t(t.slot_->addr) + t.slot_->bytes;
    uint64_t room = t.addr_ < end ? (end - t.addr_) / sizeof(T) : 0;
    if (ext > room) {
        fail("ub-out-of-bounds", loc,
             "%s's %u repeats (block stride %u, repeat stride %u blocks of 32 bytes) reach element %llu of %s, "
             "whose buffer has room for %llu elements from its start (block %d): lower repeatTime or the "
             "strides, or give %s a larger buffer",
             api, m.repeats, l.blk, l.rep, (unsigned long long)(ext - 1), role, (unsigned long long)room,
             blk().idx, role);
    }
    return ext;
}

// Reports the first active element of a source that nothing wrote since its allocation.
template <typename T>
inline void masked_check_init(const AscendC::LocalTensor<T>& t, const Repeats& m, Lay l, const char* api,
                              SrcLoc loc) {
    const uint8_t* init = blk().ub_init + t.addr_;
    bool found = false;
    uint64_t at = 0;
    m.each([&](uint32_t r, uint32_t k) {
        if (found) return;
        uint64_t o = l.off(r, k) * sizeof(T);
        for (uint32_t b = 0; b < sizeof(T); ++b) {
            if (!init[o + b] && !ub_adopt_scalar_writes(UbRange{uint32_t(t.addr_ + o + b), 1})) {
                found = true;
                at = o / sizeof(T);
                return;
            }
        }
    });
    if (found) {
        report("uninitialized-read", Severity::Warning, loc,
               "%s reads element %llu of a source operand (UB byte %llu) that nothing wrote since its buffer was "
               "allocated (block %d)",
               api, (unsigned long long)at, (unsigned long long)(t.addr_ + at * sizeof(T)), blk().idx);
    }
}

template <typename T>
inline void masked_mark(const AscendC::LocalTensor<T>& t, const Repeats& m, Lay l) {
    uint8_t* init = blk().ub_init + t.addr_;
    m.each([&](uint32_t r, uint32_t k) { memset(init + l.off(r, k) * sizeof(T), 1, sizeof(T)); });
}

// The unit spends a repeat's time on a repeat whatever its mask selects: the bytes recorded
// for the cost model are 256 per repeat, the elements the ones the mask selected.
template <typename T>
inline void masked_trace(const AscendC::LocalTensor<T>& dst, uint64_t dst_ext, const char* api, const Repeats& m,
                         SrcLoc loc, UbRange r0, UbRange r1 = {}) {
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(m.active()), uint64_t(m.repeats) * 256, loc,
                dst.range(dst_ext), r0, r1);
}

// ---------------------------------------------------------------- element-wise engines

// dst[i] = f(src0[i], src1[i]) for the first `count` elements (the count forms).
template <typename T, class F>
inline void binary_count(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                         const AscendC::LocalTensor<T>& src1, int64_t count_in, SrcLoc loc, F f) {
    touch(loc);
    uint64_t count = count_arg(count_in, api, loc);
    vec_src(src0, api, count, loc);
    vec_src(src1, api, count, loc);
    vec_dst(dst, api, count, loc);
    T* d = dst.data();
    const T* a = src0.data();
    const T* b = src1.data();
    for (uint64_t i = 0; i < count; ++i) d[i] = down<T>(f(up(a[i]), up(b[i])));
    vec_done(dst, api, count, loc, src0.range(count), src1.range(count));
    count_form_done();
}

// dst[i] = f(src[i]) for the first `count` elements; TD and TS differ for Cast and Axpy.
template <typename TD, typename TS, class F>
inline void unary_count(const char* api, const AscendC::LocalTensor<TD>& dst, const AscendC::LocalTensor<TS>& src,
                        int64_t count_in, SrcLoc loc, F f, bool dst_read = false) {
    touch(loc);
    uint64_t count = count_arg(count_in, api, loc);
    vec_src(src, api, count, loc);
    if (dst_read) {
        vec_src(dst, api, count, loc);
    } else {
        vec_dst(dst, api, count, loc);
    }
    TD* d = dst.data();
    const TS* s = src.data();
    for (uint64_t i = 0; i < count; ++i) f(d[i], s[i]);
    vec_done(dst, api, count, loc, src.range(count), dst_read ? dst.range(count) : UbRange{});
    count_form_done();
}

// The mask/repeat form of a binary op: f(dst element, src0 element, src1 element).
template <typename T, class F>
inline void binary_masked(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                          const AscendC::LocalTensor<T>& src1, const Repeats& m,
                          const AscendC::BinaryRepeatParams& p, SrcLoc loc, F f) {
    Lay ld = lay<T>(p.dstBlkStride, p.dstRepStride);
    Lay l0 = lay<T>(p.src0BlkStride, p.src0RepStride);
    Lay l1 = lay<T>(p.src1BlkStride, p.src1RepStride);
    uint64_t e0 = masked_check(src0, m, l0, api, loc, "src0");
    uint64_t e1 = masked_check(src1, m, l1, api, loc, "src1");
    uint64_t ed = masked_check(dst, m, ld, api, loc, "dst");
    masked_check_init(src0, m, l0, api, loc);
    masked_check_init(src1, m, l1, api, loc);
    T* d = dst.data();
    const T* a = src0.data();
    const T* b = src1.data();
    m.each([&](uint32_t r, uint32_t k) { d[ld.off(r, k)] = down<T>(f(up(a[l0.off(r, k)]), up(b[l1.off(r, k)]))); });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, api, m, loc, src0.range(e0), src1.range(e1));
}

// The mask/repeat form of a unary op: f(dst element ref, src element).
template <typename TD, typename TS, class F>
inline void unary_masked(const char* api, const AscendC::LocalTensor<TD>& dst, const AscendC::LocalTensor<TS>& src,
                         const Repeats& m, const AscendC::UnaryRepeatParams& p, SrcLoc loc, F f,
                         bool dst_read = false) {
    Lay ld = lay<TD>(p.dstBlkStride, p.dstRepStride);
    Lay ls = lay<TS>(p.srcBlkStride, p.srcRepStride);
    uint64_t es = masked_check(src, m, ls, api, loc, "src");
    uint64_t ed = masked_check(dst, m, ld, api, loc, "dst");
    masked_check_init(src, m, ls, api, loc);
    if (dst_read) masked_check_init(dst, m, ld, api, loc);
    TD* d = dst.data();
    const TS* s = src.data();
    m.each([&](uint32_t r, uint32_t k) { f(d[ld.off(r, k)], s[ls.off(r, k)]); });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, api, m, loc, src.range(es), dst_read ? dst.range(ed) : UbRange{});
}

}  // namespace sim
}  // namespace sage
