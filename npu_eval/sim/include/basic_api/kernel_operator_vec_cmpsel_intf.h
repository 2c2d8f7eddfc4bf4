// Compare, Compares (CANN 8: CompareScalar) and Select (kernel_operator_vec_cmpsel_intf.h).
//
// Compare writes a bit mask: bit i of dst (byte i/8, bit i%8) is src0[i] OP src1[i]. The
// unit compares whole 256-byte repeats: the count form needs count * sizeof(T) to be a
// multiple of 256 bytes (it drops the tail otherwise), and the mask/repeat forms ignore
// their mask on A2 and 310P (Compare doc). Each repeat's bits follow the previous
// repeat's; the dst strides do not apply to a bit mask.
// Select reads such a mask: bit set -> src0, clear -> src1 (a tensor or a scalar).
//   VSEL_CMPMASK_SPR (0):        every repeat reuses the first 256/sizeof(T) bits
//   VSEL_TENSOR_SCALAR_MODE (1): bit i for element i, src1 a scalar
//   VSEL_TENSOR_TENSOR_MODE (2): bit i for element i, src1 a tensor
#pragma once

#include "../sage_sim/vec.h"

namespace sage {
namespace sim {

template <typename C>
inline bool compare_op(C a, C b, AscendC::CMPMODE m) {
    switch (m) {
        case AscendC::CMPMODE::LT: return a < b;
        case AscendC::CMPMODE::GT: return a > b;
        case AscendC::CMPMODE::EQ: return a == b;
        case AscendC::CMPMODE::LE: return a <= b;
        case AscendC::CMPMODE::GE: return a >= b;
        case AscendC::CMPMODE::NE: return a != b;
    }
    return false;
}

// int32 compares for equality only: the device issues vcmpv_eq whatever mode it is given.
template <typename T>
inline AscendC::CMPMODE compare_mode(const char* api, AscendC::CMPMODE m, SrcLoc loc) {
    if (std::is_same<T, int32_t>::value && m != AscendC::CMPMODE::EQ) {
        report("dtype-unsupported", Severity::Error, loc,
               "%s on int32_t supports only CMPMODE::EQ on %s; the device compares for equality whatever mode is "
               "given. Cast to float to order int32 values",
               api, SAGE_CHIP_LABEL);
        return AscendC::CMPMODE::EQ;
    }
    return m;
}

// A count form's whole repeats; a tail is dropped as on the device, and reported.
template <typename T>
inline uint64_t compare_count(const char* api, uint64_t count, SrcLoc loc) {
    constexpr uint64_t epr = elems_per_repeat<T>();
    if (count % epr) {
        report("unaligned-copy", Severity::Error, loc,
               "%s compares %llu %s elements, not a multiple of %llu (256 bytes): the vector unit compares whole "
               "256-byte repeats, so the last %llu elements get no result bits. Pad the count to a multiple of "
               "%llu",
               api, (unsigned long long)count, dtype_name<T>(), (unsigned long long)epr,
               (unsigned long long)(count % epr), (unsigned long long)epr);
    }
    return count / epr * epr;
}

// Writes bit f(r, k) for every element of `repeats` full repeats, as Compare does.
template <typename T, typename U, class F>
inline void write_bits(const char* api, const AscendC::LocalTensor<U>& dst, uint32_t repeats, SrcLoc loc, F f) {
    constexpr uint32_t epr = elems_per_repeat<T>();
    uint64_t bytes = uint64_t(repeats) * epr / 8;
    dst.check(api, (bytes + sizeof(U) - 1) / sizeof(U), loc);
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.data());
    for (uint32_t r = 0; r < repeats; ++r) {
        for (uint32_t j = 0; j < epr / 8; ++j) {
            uint8_t b = 0;
            for (uint32_t t = 0; t < 8; ++t) b |= uint8_t(f(r, j * 8 + t)) << t;
            d[uint64_t(r) * (epr / 8) + j] = b;
        }
    }
    ub_mark(UbRange{dst.addr_, uint32_t(bytes)});
}

inline bool mask_bit(const uint8_t* m, uint64_t i) { return (m[i >> 3] >> (i & 7)) & 1; }

}  // namespace sim
}  // namespace sage

namespace AscendC {

#if SAGE_CHIP_FAMILY == 310
#define SAGE_CMP_OK (::sage::sim::one_of<T, half, float>())
#define SAGE_CMP_LIST "half, float"
#else
#define SAGE_CMP_OK (::sage::sim::one_of<T, half, float, int32_t>())
#define SAGE_CMP_LIST "half, float; int32_t with CMPMODE::EQ"
#endif
#define SAGE_CMP_DST_GATE(API)                                                                                  \
    static_assert(::sage::sim::one_of<U, uint8_t, int8_t>(),                                                      \
                  "[dtype-unsupported] " API " writes its bit mask to a uint8_t (or int8_t) LocalTensor");

namespace detail {
template <typename T, typename U>
inline void compare_tt(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                       CMPMODE mode, uint32_t repeats, const BinaryRepeatParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr uint32_t epr = elems_per_repeat<T>();
    CMPMODE m = compare_mode<T>("Compare", mode, loc);
    Repeats all;
    all.epr = epr;
    all.repeats = repeats;
    all.bits[0] = epr >= 64 ? ~0ull : (1ull << epr) - 1;
    all.bits[1] = epr > 64 ? ~0ull : 0;
    Lay l0 = lay<T>(p.src0BlkStride, p.src0RepStride), l1 = lay<T>(p.src1BlkStride, p.src1RepStride);
    uint64_t e0 = masked_check(src0, all, l0, "Compare", loc, "src0");
    uint64_t e1 = masked_check(src1, all, l1, "Compare", loc, "src1");
    masked_check_init(src0, all, l0, "Compare", loc);
    masked_check_init(src1, all, l1, "Compare", loc);
    const T* a = src0.data();
    const T* b = src1.data();
    write_bits<T>("Compare", dst, repeats, loc,
                  [&](uint32_t r, uint32_t k) { return compare_op(up(a[l0.off(r, k)]), up(b[l1.off(r, k)]), m); });
    uint64_t n = uint64_t(repeats) * epr;
    trace_instr(Pipe::V, "Compare", dtype_name<T>(), uint32_t(n), n * sizeof(T), loc, dst.range(n / 8 / sizeof(U)),
                src0.range(e0), src1.range(e1));
}

template <typename T, typename U>
inline void compare_ts(const char* api, const LocalTensor<U>& dst, const LocalTensor<T>& src0, T scalar,
                       CMPMODE mode, uint32_t repeats, const UnaryRepeatParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr uint32_t epr = elems_per_repeat<T>();
    CMPMODE m = compare_mode<T>(api, mode, loc);
    Repeats all;
    all.epr = epr;
    all.repeats = repeats;
    all.bits[0] = epr >= 64 ? ~0ull : (1ull << epr) - 1;
    all.bits[1] = epr > 64 ? ~0ull : 0;
    Lay l0 = lay<T>(p.srcBlkStride, p.srcRepStride);
    uint64_t e0 = masked_check(src0, all, l0, api, loc, "src0");
    masked_check_init(src0, all, l0, api, loc);
    const T* a = src0.data();
    auto s = up(scalar);
    write_bits<T>(api, dst, repeats, loc, [&](uint32_t r, uint32_t k) { return compare_op(up(a[l0.off(r, k)]), s, m); });
    uint64_t n = uint64_t(repeats) * epr;
    trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(n), n * sizeof(T), loc, dst.range(n / 8 / sizeof(U)),
                src0.range(e0));
}
}  // namespace detail

// ---------------------------------------------------------------- Compare

template <typename T, typename U>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, uint32_t count, SAGE_LOC) {
    SAGE_DTYPE_GATE("Compare", T, SAGE_CMP_OK, SAGE_CMP_LIST)
    SAGE_CMP_DST_GATE("Compare")
    if constexpr (SAGE_CMP_OK) {
        sage::sim::touch(loc);
        uint64_t n = sage::sim::compare_count<T>("Compare", count, loc);
        detail::compare_tt(dst, src0, src1, cmpMode, uint32_t(n / sage::sim::elems_per_repeat<T>()),
                           BinaryRepeatParams{}, loc);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,
                               const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_DTYPE_GATE("Compare", T, SAGE_CMP_OK, SAGE_CMP_LIST)
    SAGE_CMP_DST_GATE("Compare")
    if constexpr (SAGE_CMP_OK) {
        sage::sim::touch(loc);
        (void)mask;
        detail::compare_tt(dst, src0, src1, cmpMode, repeatTime, repeatParams, loc);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,
                               const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_DTYPE_GATE("Compare", T, SAGE_CMP_OK, SAGE_CMP_LIST)
    SAGE_CMP_DST_GATE("Compare")
    if constexpr (SAGE_CMP_OK) {
        sage::sim::touch(loc);
        (void)mask;
        detail::compare_tt(dst, src0, src1, cmpMode, repeatTime, repeatParams, loc);
    }
}

// Compare without dst: one repeat under the mask, the result goes to the CMPMASK register
// (read back with GetCmpMask, consumed by Select<T, SELMODE::VSEL_CMPMASK_SPR>).
namespace detail {
template <typename T>
inline void compare_to_cmpmask(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                               const sage::sim::Repeats& m0, const BinaryRepeatParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    Repeats m = m0;
    m.repeats = 1;
    if (m.counter) m.count = m.count < m.epr ? m.count : m.epr;
    Lay l0 = lay<T>(p.src0BlkStride, p.src0RepStride), l1 = lay<T>(p.src1BlkStride, p.src1RepStride);
    uint64_t e0 = masked_check(src0, m, l0, "Compare", loc, "src0");
    uint64_t e1 = masked_check(src1, m, l1, "Compare", loc, "src1");
    masked_check_init(src0, m, l0, "Compare", loc);
    masked_check_init(src1, m, l1, "Compare", loc);
    CMPMODE cm = compare_mode<T>("Compare", mode, loc);
    auto& regs = vregs();
    regs.cmpmask[0] = regs.cmpmask[1] = 0;
    const T* a = src0.data();
    const T* b = src1.data();
    m.each([&](uint32_t r, uint32_t k) {
        if (compare_op(up(a[l0.off(r, k)]), up(b[l1.off(r, k)]), cm)) regs.cmpmask[k >> 6] |= 1ull << (k & 63);
    });
    trace_instr(Pipe::V, "Compare", dtype_name<T>(), uint32_t(m.active()), 256, loc, {}, src0.range(e0),
                src1.range(e1));
}
}  // namespace detail

template <typename T, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                               const uint64_t mask[], const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_DTYPE_GATE("Compare", T, (::sage::sim::one_of<T, half, float>()), "half, float")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), isSetMask, mask, 1);
        detail::compare_to_cmpmask(src0, src1, cmpMode, m, repeatParams, loc);
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                               const uint64_t mask, const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_DTYPE_GATE("Compare", T, (::sage::sim::one_of<T, half, float>()), "half, float")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), isSetMask, mask, 1);
        detail::compare_to_cmpmask(src0, src1, cmpMode, m, repeatParams, loc);
    }
}

// CMPMASK as 128 bits (16 bytes) in UB.
template <typename T>
__aicore__ inline void GetCmpMask(const LocalTensor<T>& dst, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    uint64_t n = (16 + sizeof(T) - 1) / sizeof(T);
    dst.check("GetCmpMask", n, loc);
    memcpy(dst.data(), vregs().cmpmask, 16);
    ub_mark(UbRange{dst.addr_, 16});
    trace_instr(Pipe::V, "GetCmpMask", dtype_name<T>(), uint32_t(n), 16, loc, UbRange{dst.addr_, 16});
}
template <typename T>
__aicore__ inline void SetCmpMask(const LocalTensor<T>& src, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    uint64_t n = (16 + sizeof(T) - 1) / sizeof(T);
    src.check("SetCmpMask", n, loc);
    ub_check_init(UbRange{src.addr_, 16}, "SetCmpMask", loc);
    memcpy(vregs().cmpmask, src.data(), 16);
    trace_instr(Pipe::V, "SetCmpMask", dtype_name<T>(), uint32_t(n), 16, loc, {}, UbRange{src.addr_, 16});
}

// ---------------------------------------------------------------- Compares / CompareScalar

#define SAGE_COMPARES(NAME)                                                                                      \
    template <typename T, typename U>                                                                            \
    __aicore__ inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,       \
                                CMPMODE cmpMode, uint32_t count, SAGE_LOC) {                                     \
        SAGE_DTYPE_GATE(#NAME, T, SAGE_CMP_OK, SAGE_CMP_LIST)                                                    \
        SAGE_CMP_DST_GATE(#NAME)                                                                                 \
        if constexpr (SAGE_CMP_OK) {                                                                             \
            ::sage::sim::touch(loc);                                                                             \
            uint64_t n = ::sage::sim::compare_count<T>(#NAME, count, loc);                                       \
            detail::compare_ts(#NAME, dst, src0, src1Scalar, cmpMode,                                            \
                               uint32_t(n / ::sage::sim::elems_per_repeat<T>()), UnaryRepeatParams{}, loc);      \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, typename U, bool isSetMask = true>                                                     \
    __aicore__ inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,       \
                                CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,                      \
                                const UnaryRepeatParams& repeatParams, SAGE_LOC) {                               \
        SAGE_DTYPE_GATE(#NAME, T, SAGE_CMP_OK, SAGE_CMP_LIST)                                                    \
        SAGE_CMP_DST_GATE(#NAME)                                                                                 \
        if constexpr (SAGE_CMP_OK) {                                                                             \
            ::sage::sim::touch(loc);                                                                             \
            (void)mask;                                                                                          \
            detail::compare_ts(#NAME, dst, src0, src1Scalar, cmpMode, repeatTime, repeatParams, loc);            \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T, typename U, bool isSetMask = true>                                                     \
    __aicore__ inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,       \
                                CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,                        \
                                const UnaryRepeatParams& repeatParams, SAGE_LOC) {                               \
        SAGE_DTYPE_GATE(#NAME, T, SAGE_CMP_OK, SAGE_CMP_LIST)                                                    \
        SAGE_CMP_DST_GATE(#NAME)                                                                                 \
        if constexpr (SAGE_CMP_OK) {                                                                             \
            ::sage::sim::touch(loc);                                                                             \
            (void)mask;                                                                                          \
            detail::compare_ts(#NAME, dst, src0, src1Scalar, cmpMode, repeatTime, repeatParams, loc);            \
        }                                                                                                        \
    }

SAGE_COMPARES(Compares)
SAGE_COMPARES(CompareScalar)
#undef SAGE_COMPARES
#undef SAGE_CMP_DST_GATE
#undef SAGE_CMP_OK
#undef SAGE_CMP_LIST

// ---------------------------------------------------------------- Select

#define SAGE_SEL_GATE(API)                                                                                       \
    SAGE_DTYPE_GATE(API, T, (::sage::sim::one_of<T, half, float>()), "half, float")                              \
    static_assert(::sage::sim::one_of<U, uint8_t, uint16_t, uint32_t, uint64_t>(),                               \
                  "[dtype-unsupported] Select reads its mask from a uint8_t, uint16_t, uint32_t or uint64_t "    \
                  "LocalTensor");

namespace detail {
// dst = bit ? src0 : src1 over the active elements of `m`. `bit(r, k)` gives the select
// bit; `src1` is null for the scalar form.
template <typename T, typename U>
inline void select_run(const LocalTensor<T>& dst, const LocalTensor<U>* sel, const LocalTensor<T>& src0,
                       const LocalTensor<T>* src1, T scalar, SELMODE mode, const sage::sim::Repeats& m,
                       const BinaryRepeatParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const char* api = "Select";
    Lay ld = lay<T>(p.dstBlkStride, p.dstRepStride);
    Lay l0 = lay<T>(p.src0BlkStride, p.src0RepStride);
    Lay l1 = lay<T>(p.src1BlkStride, p.src1RepStride);
    const uint32_t epr = m.epr;
    const bool per_repeat = mode == SELMODE::VSEL_CMPMASK_SPR;
    // The mask bits this instruction reads.
    uint64_t bits = 0;
    m.each([&](uint32_t r, uint32_t k) {
        uint64_t b = (per_repeat ? k : uint64_t(r) * epr + k) + 1;
        if (b > bits) bits = b;
    });
    uint64_t e0 = masked_check(src0, m, l0, api, loc, "src0");
    uint64_t e1 = src1 ? masked_check(*src1, m, l1, api, loc, "src1") : 0;
    uint64_t ed = masked_check(dst, m, ld, api, loc, "dst");
    masked_check_init(src0, m, l0, api, loc);
    if (src1) masked_check_init(*src1, m, l1, api, loc);
    const uint8_t* sb = nullptr;
    uint8_t reg[16];
    if (sel) {
        uint64_t bytes = (bits + 7) / 8;
        sel->check(api, (bytes + sizeof(U) - 1) / sizeof(U), loc);
        ub_check_init(UbRange{sel->addr_, uint32_t(bytes)}, api, loc);
        sb = reinterpret_cast<const uint8_t*>(sel->data());
    } else {
        memcpy(reg, vregs().cmpmask, 16);
        sb = reg;
    }
    T* d = dst.data();
    const T* a = src0.data();
    const T* b = src1 ? src1->data() : nullptr;
    m.each([&](uint32_t r, uint32_t k) {
        bool take0 = mask_bit(sb, per_repeat ? k : uint64_t(r) * epr + k);
        d[ld.off(r, k)] = take0 ? a[l0.off(r, k)] : (b ? b[l1.off(r, k)] : scalar);
    });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, api, m, loc, src0.range(e0), src1 ? src1->range(e1) : UbRange{});
}

inline sage::sim::Repeats count_repeats(uint32_t epr, uint64_t count) {
    sage::sim::Repeats m;
    m.epr = epr;
    m.counter = true;
    m.count = count;
    m.repeats = uint32_t((count + epr - 1) / epr);
    return m;
}
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, SAGE_LOC) {
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        // The tensor-tensor API implements modes 0 and 2; with mode 1 the device writes nothing.
        if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
            auto m = detail::count_repeats(sage::sim::elems_per_repeat<T>(), count);
            detail::select_run(dst, &selMask, src0, &src1, T(), selMode, m, BinaryRepeatParams{}, loc);
        }
        sage::sim::count_form_done();
    }
}
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint32_t count, SAGE_LOC) {
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        (void)selMode;  // the scalar form always runs mode 1
        auto m = detail::count_repeats(sage::sim::elems_per_repeat<T>(), count);
        detail::select_run<T, U>(dst, &selMask, src0, nullptr, src1, SELMODE::VSEL_TENSOR_SCALAR_MODE, m,
                                 BinaryRepeatParams{}, loc);
        sage::sim::count_form_done();
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
            detail::select_run(dst, &selMask, src0, &src1, T(), selMode, m, repeatParams, loc);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
            detail::select_run(dst, &selMask, src0, &src1, T(), selMode, m, repeatParams, loc);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        (void)selMode;
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        detail::select_run<T, U>(dst, &selMask, src0, nullptr, src1, SELMODE::VSEL_TENSOR_SCALAR_MODE, m,
                                 repeatParams, loc);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        (void)selMode;
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        detail::select_run<T, U>(dst, &selMask, src0, nullptr, src1, SELMODE::VSEL_TENSOR_SCALAR_MODE, m,
                                 repeatParams, loc);
    }
}
// Mode 0 with the mask already in CMPMASK (from Compare without dst, or SetCmpMask); the
// vector mask registers select the elements, as SetVectorMask left them.
template <typename T, SELMODE selMode>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                              uint8_t repeatTime, const BinaryRepeatParams& repeatParams, SAGE_LOC) {
    using U = uint8_t;
    SAGE_SEL_GATE("Select")
    if constexpr (::sage::sim::one_of<T, half, float>()) {
        sage::sim::touch(loc);
        auto m = sage::sim::finish_repeats(sage::sim::elems_per_repeat<T>(), repeatTime);
        detail::select_run<T, U>(dst, nullptr, src0, &src1, T(), SELMODE::VSEL_CMPMASK_SPR, m, repeatParams, loc);
    }
}
#undef SAGE_SEL_GATE

}  // namespace AscendC
