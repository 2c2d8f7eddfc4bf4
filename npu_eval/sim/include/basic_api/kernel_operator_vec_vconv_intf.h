// Cast: precision conversion with a RoundMode (kernel_operator_vec_vconv_intf.h), the
// count form and the two mask/repeat forms (half <-> int4b_t included, two elements a byte);
// SetDeqScale for int32 -> half; ScalarCast.
//
// Rounding follows the Cast documentation bit for bit: CAST_RINT rounds half to even,
// CAST_ROUND half away from zero, CAST_FLOOR/CEIL/TRUNC toward -inf/+inf/0, CAST_ODD sets
// the last kept bit when anything was dropped (float -> half), and CAST_NONE is CAST_RINT
// where the conversion loses precision. Integer results saturate, NaN becomes 0. Float
// results overflow to inf in Inf/NaN mode (910B) and to the largest finite value where
// the rounding direction points toward zero or in saturation mode (310P).
// In the mask/repeat forms a repeat holds 256 bytes of the wider type (64 elements for
// float <-> half); each operand steps through its own 32-byte blocks.
#pragma once

#include <cmath>
#include <limits>

#include "../sage_sim/vec.h"
#include "kernel_operator_sys_var_intf.h"  // int4b_t

namespace sage {
namespace sim {

using AscendC::int4b_t;
using AscendC::RoundMode;

enum : uint32_t {
    kModeNone = 1u << 0,
    kModeRint = 1u << 1,
    kModeFloor = 1u << 2,
    kModeCeil = 1u << 3,
    kModeRound = 1u << 4,
    kModeTrunc = 1u << 5,
    kModeOdd = 1u << 6,
    kModesR = kModeRint | kModeFloor | kModeCeil | kModeRound | kModeTrunc,
    kModesAny = 0x7f,
};

inline const char* round_mode_name(RoundMode m) {
    static const char* names[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL",
                                  "CAST_ROUND", "CAST_TRUNC", "CAST_ODD", "CAST_HYBRID"};
    unsigned i = unsigned(m);
    return i < sizeof(names) / sizeof(names[0]) ? names[i] : "an unknown RoundMode";
}

template <typename U, typename T, typename US, typename TD>
constexpr bool is_pair() {
    return std::is_same<U, US>::value && std::is_same<T, TD>::value;
}

// The RoundModes Cast accepts for src U -> dst T (Cast doc, tables for Atlas A2 and the
// inference series); 0 where the chip has no such conversion.
template <typename T, typename U>
constexpr uint32_t cast_modes() {
#if SAGE_CHIP_FAMILY == 310
    if (is_pair<U, T, half, float>()) return kModeNone;
    if (is_pair<U, T, half, int32_t>()) return kModesR;
    if (is_pair<U, T, half, int16_t>()) return kModeRint;
    if (is_pair<U, T, half, int4b_t>()) return kModeNone;
    if (is_pair<U, T, half, int8_t>() || is_pair<U, T, half, uint8_t>())
        return kModeNone | kModeFloor | kModeCeil | kModeRound | kModeTrunc;
    if (is_pair<U, T, float, half>()) return kModeNone | kModeOdd;
    if (is_pair<U, T, float, int32_t>()) return kModesR;
    if (is_pair<U, T, uint8_t, half>() || is_pair<U, T, int8_t, half>()) return kModeNone;
    if (is_pair<U, T, int16_t, half>()) return kModeNone;
    if (is_pair<U, T, int32_t, float>()) return kModeNone;
    if (is_pair<U, T, int32_t, int16_t>()) return kModeNone;
    if (is_pair<U, T, int32_t, half>()) return kModesAny;  // dequant: the RoundMode is ignored
    if (is_pair<U, T, float, int64_t>()) return kModesR;
    return 0;
#else
    if (is_pair<U, T, half, float>()) return kModeNone;
    if (is_pair<U, T, half, int32_t>() || is_pair<U, T, half, int16_t>()) return kModesR;
    if (is_pair<U, T, half, int8_t>() || is_pair<U, T, half, uint8_t>()) return kModeNone | kModesR;
    if (is_pair<U, T, half, int4b_t>()) return kModeNone | kModesR;
    if (is_pair<U, T, int4b_t, half>()) return kModeNone;
    if (is_pair<U, T, float, float>()) return kModesR;
    if (is_pair<U, T, float, half>()) return kModeNone | kModeOdd | kModesR;
    if (is_pair<U, T, float, int32_t>() || is_pair<U, T, float, int16_t>() || is_pair<U, T, float, int64_t>())
        return kModesR;
    if (is_pair<U, T, float, bfloat16_t>()) return kModesR;
    if (is_pair<U, T, bfloat16_t, float>()) return kModeNone;
    if (is_pair<U, T, bfloat16_t, int32_t>()) return kModesR;
    if (is_pair<U, T, uint8_t, half>() || is_pair<U, T, int8_t, half>()) return kModeNone;
    if (is_pair<U, T, int16_t, half>()) return kModeNone | kModesR;
    if (is_pair<U, T, int16_t, float>()) return kModeNone;
    if (is_pair<U, T, int32_t, float>()) return kModeNone | kModesR;
    if (is_pair<U, T, int32_t, int16_t>()) return kModeNone;
    if (is_pair<U, T, int32_t, half>()) return kModesAny;  // dequant: the RoundMode is ignored
    if (is_pair<U, T, int32_t, int64_t>() || is_pair<U, T, int64_t, int32_t>()) return kModeNone;
    if (is_pair<U, T, int64_t, float>()) return kModesR;
    return 0;
#endif
}

// A binary floating-point format: mantissa bits, exponent bits, largest exponent.
struct FloatFmt {
    int mbits, ebits, emax;
};
constexpr FloatFmt kHalfFmt{10, 5, 15};
constexpr FloatFmt kBf16Fmt{7, 8, 127};
constexpr FloatFmt kFloatFmt{23, 8, 127};

// Rounds the exact value (-1)^neg * M * 2^E (M > 0) into `f` with `mode`; returns its bits.
inline uint32_t round_bits(bool neg, uint64_t M, int E, FloatFmt f, RoundMode mode, bool sat) {
    const int emin = 1 - f.emax;
    const uint32_t sign = neg ? 1u << (f.mbits + f.ebits) : 0u;
    const uint32_t inf = ((1u << f.ebits) - 1) << f.mbits;
    if (M == 0) return sign;
    int msb = 63 - __builtin_clzll(M);
    int lead = msb + E;  // floor(log2 |value|)
    int qexp = (lead < emin ? emin : lead) - f.mbits;  // exponent of the last kept bit
    int shift = qexp - E;
    uint64_t N;
    bool gt = false, eq = false, inexact = false;
    if (shift <= 0) {
        N = M << (-shift);
    } else if (shift < 64) {
        N = M >> shift;
        uint64_t rem = M & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
        gt = rem > halfway;
        eq = rem == halfway;
        inexact = rem != 0;
    } else {
        N = 0;
        inexact = true;
        if (shift == 64) {
            gt = M > (1ull << 63);
            eq = M == (1ull << 63);
        }
    }
    switch (mode) {
        case RoundMode::CAST_ROUND: N += (gt || eq); break;
        case RoundMode::CAST_FLOOR: N += (neg && inexact); break;
        case RoundMode::CAST_CEIL: N += (!neg && inexact); break;
        case RoundMode::CAST_TRUNC: break;
        case RoundMode::CAST_ODD: N |= uint64_t(inexact); break;
        default: N += (gt || (eq && (N & 1))); break;  // CAST_RINT, CAST_NONE
    }
    if (N >> (f.mbits + 1)) {
        N >>= 1;
        ++qexp;
    }
    if (N < (1ull << f.mbits)) return sign | uint32_t(N);  // subnormal
    int biased = qexp + f.mbits + f.emax;
    if (biased >= (1 << f.ebits) - 1) {
        bool to_inf = !sat && (mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT ||
                               mode == RoundMode::CAST_ROUND || (mode == RoundMode::CAST_CEIL && !neg) ||
                               (mode == RoundMode::CAST_FLOOR && neg));
        return sign | (to_inf ? inf : inf - 1);
    }
    return sign | (uint32_t(biased) << f.mbits) | uint32_t(N - (1ull << f.mbits));
}

inline uint32_t float_to_fmt(float x, FloatFmt f, RoundMode mode, bool sat) {
    uint32_t u;
    memcpy(&u, &x, 4);
    bool neg = u >> 31;
    uint32_t e = (u >> 23) & 0xff, man = u & 0x7fffff;
    const uint32_t sign = neg ? 1u << (f.mbits + f.ebits) : 0u;
    const uint32_t inf = ((1u << f.ebits) - 1) << f.mbits;
    if (e == 0xff) {
        if (man) return sign | inf | (1u << (f.mbits - 1));  // quiet NaN
        return sign | (sat ? inf - 1 : inf);
    }
    if (e == 0) return round_bits(neg, man, -149, f, mode, sat);
    return round_bits(neg, man | 0x800000u, int(e) - 150, f, mode, sat);
}

inline uint32_t int_to_fmt(int64_t v, FloatFmt f, RoundMode mode, bool sat) {
    bool neg = v < 0;
    uint64_t M = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    return round_bits(neg, M, 0, f, mode, sat);
}

inline double round_integral(double x, RoundMode m) {
    switch (m) {
        case RoundMode::CAST_FLOOR: return std::floor(x);
        case RoundMode::CAST_CEIL: return std::ceil(x);
        case RoundMode::CAST_ROUND: return std::round(x);
        case RoundMode::CAST_TRUNC: return std::trunc(x);
        default: return std::nearbyint(x);  // half to even in the default FP environment
    }
}

template <typename I>
inline I float_to_int(float f, RoundMode m) {
    if (f != f) return I(0);
    double r = round_integral(double(f), m);
    constexpr I hi = std::numeric_limits<I>::max(), lo = std::numeric_limits<I>::min();
    if (r >= double(hi)) return hi;
    if (r <= double(lo)) return lo;
    return I(r);
}

template <typename I>
inline I saturate_int(int64_t v) {
    constexpr I hi = std::numeric_limits<I>::max(), lo = std::numeric_limits<I>::min();
    return v > int64_t(hi) ? hi : v < int64_t(lo) ? lo : I(v);
}

// One element of Cast<T, U>: src U -> dst T.
template <typename T, typename U>
inline T convert(U v, RoundMode m) {
    constexpr bool sat = SAGE_SAT_MODE;
    if constexpr (one_of<U, half, bfloat16_t, float>()) {
        float f = float(v);
        if constexpr (std::is_same<T, float>::value) {
            if constexpr (std::is_same<U, float>::value) return float(round_integral(double(f), m));
            return f;
        } else if constexpr (std::is_same<T, half>::value) {
            return half::from_bits(uint16_t(float_to_fmt(f, kHalfFmt, m, sat)));
        } else if constexpr (std::is_same<T, bfloat16_t>::value) {
            return bfloat16_t::from_bits(uint16_t(float_to_fmt(f, kBf16Fmt, m, sat)));
        } else {
            return float_to_int<T>(f, m);
        }
    } else {
        int64_t x = int64_t(v);
        if constexpr (std::is_same<T, float>::value) {
            uint32_t b = int_to_fmt(x, kFloatFmt, m, sat);
            float f;
            memcpy(&f, &b, 4);
            return f;
        } else if constexpr (std::is_same<T, half>::value) {
            if constexpr (std::is_same<U, int32_t>::value) return down<half>(float(x) * vregs().deq_scale);
            return half::from_bits(uint16_t(int_to_fmt(x, kHalfFmt, m, sat)));
        } else {
            return saturate_int<T>(x);
        }
    }
}

// A RoundMode the chip does not take for this pair: the device's result is unspecified,
// so say so and round as CAST_RINT.
template <typename T, typename U>
inline RoundMode cast_mode_checked(RoundMode m, SrcLoc loc) {
    uint32_t allowed = cast_modes<T, U>();
    if (unsigned(m) < 7 && (allowed & (1u << unsigned(m)))) return m;
    std::string list;
    for (unsigned i = 0; i < 7; ++i) {
        if (allowed & (1u << i)) list += std::string(list.empty() ? "" : ", ") + round_mode_name(RoundMode(i));
    }
    report("dtype-unsupported", Severity::Warning, loc,
           "Cast %s -> %s does not take %s on %s (it takes %s); the result is rounded as CAST_RINT",
           dtype_name<U>(), dtype_name<T>(), round_mode_name(m), SAGE_CHIP_LABEL, list.c_str());
    return RoundMode::CAST_RINT;
}

// ---------------------------------------------------------------- int4b_t

// int4b_t packs two elements per byte, element 2i in the low nibble; a LocalTensor<int4b_t> comes
// from ReinterpretCast of an int8_t tensor, so its bounds are counted in bytes here.
inline int int4_get(const uint8_t* b, uint64_t i) {
    int v = (b[i >> 1] >> ((i & 1) * 4)) & 0xF;
    return v >= 8 ? v - 16 : v;
}
inline void int4_set(uint8_t* b, uint64_t i, int v) {
    const int sh = int(i & 1) * 4;
    b[i >> 1] = uint8_t((b[i >> 1] & ~(0xF << sh)) | ((v & 0xF) << sh));
}
// half -> int4b_t rounds like any float -> integer Cast and saturates to [-8, 7]; NaN becomes 0.
inline int half_to_int4(half h, RoundMode m) {
    float f = float(h);
    if (f != f) return 0;
    double r = round_integral(double(f), m);
    return r > 7 ? 7 : r < -8 ? -8 : int(r);
}
template <typename T, typename U>
inline void int4_element(uint8_t* d4, half* dh, const uint8_t* s4, const half* sh, uint64_t di, uint64_t si,
                         RoundMode m) {
    if constexpr (std::is_same<T, int4b_t>::value) int4_set(d4, di, half_to_int4(sh[si], m));
    else dh[di] = half(float(int4_get(s4, si)));
}

// The Cast doc: with int4b_t the count, a continuous mask and Counter mode's count are even, and a
// bit mask sets both bits of each pair (an element pair shares a byte).
inline void int4_mask_check(const Repeats& r, SrcLoc loc) {
    bool odd = r.counter ? (r.count & 1) != 0
                         : (((r.bits[0] ^ (r.bits[0] >> 1)) | (r.bits[1] ^ (r.bits[1] >> 1))) & 0x5555555555555555ull) != 0;
    if (odd) {
        fail("crash", loc,
             "Cast with int4b_t and a mask that selects one element of a pair (%s), in block %d: two int4b_t share "
             "a byte, so the count or continuous mask must be even and a bit mask must set bits 2i and 2i+1 alike",
             r.counter ? "an odd count" : "bit 2i differs from bit 2i+1", blk().idx);
    }
}

// Cast between half and int4b_t, the count form.
template <typename T, typename U>
inline void cast_int4_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, RoundMode m,
                            int64_t count_in, SrcLoc loc) {
    const uint64_t count = count_arg(count_in, "Cast", loc);
    if (count & 1) {
        fail("crash", loc, "Cast with int4b_t and an odd count (%llu), in block %d: two int4b_t share a byte, so the "
             "count must be even", (unsigned long long)count, blk().idx);
    }
    constexpr bool to4 = std::is_same<T, int4b_t>::value;
    const uint64_t dn = to4 ? count / 2 : count, sn = to4 ? count : count / 2;
    vec_src(src, "Cast", sn, loc);
    vec_dst(dst, "Cast", dn, loc);
    auto* d = reinterpret_cast<uint8_t*>(dst.data());
    auto* s = reinterpret_cast<const uint8_t*>(src.data());
    for (uint64_t i = 0; i < count; ++i)
        int4_element<T, U>(d, reinterpret_cast<half*>(d), s, reinterpret_cast<const half*>(s), i, i, m);
    ub_mark(dst.range(dn));
    trace_instr(Pipe::V, "Cast", dtype_name<T>(), uint32_t(count), count * 2, loc, dst.range(dn),
                src.range(sn));
    count_form_done();
}

// The elements (int4b_t: bytes) an operand spans, checked against its buffer.
template <typename X>
inline uint64_t int4_side_check(const AscendC::LocalTensor<X>& t, const Repeats& r, Lay l, SrcLoc loc, bool src) {
    uint64_t ext = masked_extent(r, l);
    if (std::is_same<X, int4b_t>::value) ext = (ext + 1) / 2;
    t.check("Cast", ext, loc);
    if (src) ub_check_init(t.range(ext), "Cast", loc);
    return ext;
}

// Cast between half and int4b_t, the mask/repeat forms: a repeat is 128 elements (256 bytes of
// half); an int4b_t block of 32 bytes holds 64 elements, so the strides count those blocks.
template <typename T, typename U>
inline void cast_int4_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, RoundMode m,
                             const Repeats& r, const AscendC::UnaryRepeatParams& p, SrcLoc loc) {
    int4_mask_check(r, loc);
    constexpr bool to4 = std::is_same<T, int4b_t>::value;
    const Lay ld{to4 ? 6u : 4u, p.dstBlkStride, p.dstRepStride};
    const Lay ls{to4 ? 4u : 6u, p.srcBlkStride, p.srcRepStride};
    const uint64_t es = int4_side_check(src, r, ls, loc, true);
    const uint64_t ed = int4_side_check(dst, r, ld, loc, false);
    auto* d = reinterpret_cast<uint8_t*>(dst.data());
    auto* s = reinterpret_cast<const uint8_t*>(src.data());
    uint8_t* init = blk().ub_init + dst.addr_;
    r.each([&](uint32_t rep, uint32_t k) {
        const uint64_t di = ld.off(rep, k);
        int4_element<T, U>(d, reinterpret_cast<half*>(d), s, reinterpret_cast<const half*>(s), di, ls.off(rep, k), m);
        if (to4) init[di >> 1] = 1;
        else memset(init + di * 2, 1, 2);
    });
    trace_instr(Pipe::V, "Cast", dtype_name<T>(), uint32_t(r.active()), uint64_t(r.repeats) * 256, loc,
                dst.range(ed), src.range(es));
}

}  // namespace sim
}  // namespace sage

namespace AscendC {

// One static_assert per (src, dst) pair so the message names the pair the kernel used.
#define SAGE_CAST_DSTS(X, US)                                                                                   \
    X(US, half) X(US, bfloat16_t) X(US, float) X(US, int8_t) X(US, uint8_t) X(US, int16_t) X(US, uint16_t)      \
        X(US, int32_t) X(US, uint32_t) X(US, int64_t) X(US, int4b_t)
#define SAGE_CAST_ONE(US, TD)                                                                                   \
    static_assert(!::sage::sim::is_pair<U, T, US, TD>() || (::sage::sim::cast_modes<T, U>() != 0),              \
                  "[dtype-unsupported] Cast has no " #US " -> " #TD " conversion on " SAGE_CHIP_LABEL           \
                  " (chain two Casts through a supported type)");
#define SAGE_CAST_GATE()                                                                                         \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, half)                                                                          \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, bfloat16_t)                                                                    \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, float)                                                                         \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, int8_t)                                                                        \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, uint8_t)                                                                       \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, int16_t)                                                                       \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, uint16_t)                                                                      \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, int32_t)                                                                       \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, uint32_t)                                                                      \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, int64_t)                                                                       \
    SAGE_CAST_DSTS(SAGE_CAST_ONE, int4b_t)                                                                       \
    static_assert(((::sage::sim::is_named_dtype<T>() || std::is_same<T, int4b_t>::value) &&                       \
                   (::sage::sim::is_named_dtype<U>() || std::is_same<U, int4b_t>::value)) ||                     \
                      (::sage::sim::cast_modes<T, U>() != 0),                                                    \
                  "[dtype-unsupported] Cast has no conversion between these element types on " SAGE_CHIP_LABEL);

// Dequantisation scale for Cast int32_t -> half: dst = src * scale.
__aicore__ inline void SetDeqScale(half scale, SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().deq_scale = float(scale);
}

template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint32_t count, SAGE_LOC) {
    SAGE_CAST_GATE()
    if constexpr (sage::sim::cast_modes<T, U>() != 0) {
        using namespace sage::sim;
        touch(loc);
        RoundMode m = cast_mode_checked<T, U>(roundMode, loc);
        if constexpr (std::is_same<T, int4b_t>::value || std::is_same<U, int4b_t>::value) {
            cast_int4_count(dst, src, m, count, loc);
        } else {
            if constexpr (std::is_same<T, half>::value && std::is_same<U, float>::value && !SAGE_SAT_MODE) {
                if (m == RoundMode::CAST_NONE || m == RoundMode::CAST_RINT) {
                    // The common case at the speed of the conversion instruction: RNE is half(float).
                    unary_count("Cast", dst, src, count, loc, [](T& d, const U& s) { d = T(s); });
                    return;
                }
            }
            unary_count("Cast", dst, src, count, loc, [m](T& d, const U& s) { d = convert<T, U>(s, m); });
        }
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                            SAGE_LOC) {
    SAGE_CAST_GATE()
    if constexpr (sage::sim::cast_modes<T, U>() != 0) {
        using namespace sage::sim;
        touch(loc);
        RoundMode m = cast_mode_checked<T, U>(roundMode, loc);
        constexpr uint32_t epr = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
        auto r = repeats_from_array(epr, isSetMask, mask, repeatTime);
        if constexpr (std::is_same<T, int4b_t>::value || std::is_same<U, int4b_t>::value) {
            cast_int4_masked(dst, src, m, r, repeatParams, loc);
        } else {
            unary_masked("Cast", dst, src, r, repeatParams, loc, [m](T& d, const U& s) { d = convert<T, U>(s, m); });
        }
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                            SAGE_LOC) {
    SAGE_CAST_GATE()
    if constexpr (sage::sim::cast_modes<T, U>() != 0) {
        using namespace sage::sim;
        touch(loc);
        RoundMode m = cast_mode_checked<T, U>(roundMode, loc);
        constexpr uint32_t epr = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
        auto r = repeats_from_len(epr, isSetMask, mask, repeatTime);
        if constexpr (std::is_same<T, int4b_t>::value || std::is_same<U, int4b_t>::value) {
            cast_int4_masked(dst, src, m, r, repeatParams, loc);
        } else {
            unary_masked("Cast", dst, src, r, repeatParams, loc, [m](T& d, const U& s) { d = convert<T, U>(s, m); });
        }
    }
}

// A scalar conversion on the scalar unit (CANN 8 ScalarCast; CANN 9 spells it Cast).
template <typename T, typename U, RoundMode roundMode>
__aicore__ inline U ScalarCast(T valueIn, SAGE_LOC) {
    sage::sim::touch(loc);
    return sage::sim::convert<U, T>(valueIn, roundMode);
}
template <typename T, typename U, RoundMode roundMode>
__aicore__ inline U Cast(T valueIn, SAGE_LOC) {
    sage::sim::touch(loc);
    return sage::sim::convert<U, T>(valueIn, roundMode);
}

#undef SAGE_CAST_GATE
#undef SAGE_CAST_ONE
#undef SAGE_CAST_DSTS

}  // namespace AscendC
