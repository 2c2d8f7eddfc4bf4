// The vector mask registers (SetMaskCount/SetMaskNorm/SetVectorMask/ResetMask) and the
// vector ops that fill or spread data: Duplicate, Brcb, CreateVecIndex, Axpy.
#pragma once

#include "sage_sim/vec.h"

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

// The mask argument of an op called with isSetMask = false: the op then uses the mask
// registers as SetVectorMask left them.
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

// ---------------------------------------------------------------- mask registers

// Counter mode: SetVectorMask<T>(0, n) then makes the next isSetMask=false op process n
// elements in total, whatever its repeat argument says.
__aicore__ inline void SetMaskCount(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().counter = true;
}
__aicore__ inline void SetMaskNorm(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().counter = false;
}
__aicore__ inline void ResetMask(SAGE_LOC) {
    sage::sim::touch(loc);
    auto& r = sage::sim::vregs();
    r.mask_hi = r.mask_lo = ~0ull;
}

// Normal mode: maskLow selects elements 0..63 of each repeat, maskHigh 64..127. Counter
// mode: maskLow is the element count.
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ static inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow, SAGE_LOC) {
    sage::sim::touch(loc);
    auto& r = sage::sim::vregs();
    r.mask_hi = maskHigh;
    r.mask_lo = maskLow;
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ static inline void SetVectorMask(int32_t len, SAGE_LOC) {
    sage::sim::touch(loc);
    auto& r = sage::sim::vregs();
    if (mode == MaskMode::COUNTER || r.counter) {
        r.mask_hi = 0;
        r.mask_lo = uint64_t(len < 0 ? 0 : len);
    } else {
        sage::sim::continuous_bits(uint64_t(len < 0 ? 0 : len), sage::sim::elems_per_repeat<T>(), &r.mask_hi,
                                   &r.mask_lo);
    }
}

// ---------------------------------------------------------------- Duplicate

#define SAGE_DUP_OK                                                                                               \
    (::sage::sim::one_of<T, int16_t, uint16_t, half, int32_t, uint32_t, float>() ||                               \
     (SAGE_CHIP_FAMILY != 310 && std::is_same<T, bfloat16_t>::value))
#if SAGE_CHIP_FAMILY == 310
#define SAGE_DUP_LIST "int16_t, uint16_t, half, int32_t, uint32_t, float"
#else
#define SAGE_DUP_LIST "int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float"
#endif

namespace detail {
template <typename T>
inline void duplicate_masked(const LocalTensor<T>& dst, const T& value, const sage::sim::Repeats& m,
                             uint16_t dstBlockStride, uint8_t dstRepeatStride, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    Lay ld = lay<T>(dstBlockStride, dstRepeatStride);
    uint64_t ed = masked_check(dst, m, ld, "Duplicate", loc, "dst");
    T* d = dst.data();
    m.each([&](uint32_t r, uint32_t k) { d[ld.off(r, k)] = value; });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, "Duplicate", m, loc, {});
}
}  // namespace detail

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count, SAGE_LOC) {
    SAGE_DTYPE_GATE("Duplicate", T, SAGE_DUP_OK, SAGE_DUP_LIST)
    if constexpr (SAGE_DUP_OK) {
        using namespace sage::sim;
        touch(loc);
        uint64_t n = count_arg(count, "Duplicate", loc);
        vec_dst(dst, "Duplicate", n, loc);
        T* d = dst.data();
        const T v = scalarValue;
        for (uint64_t i = 0; i < n; ++i) d[i] = v;
        vec_done(dst, "Duplicate", n, loc, {});
        count_form_done();
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,
                                 const uint8_t repeatTime, const uint16_t dstBlockStride,
                                 const uint8_t dstRepeatStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("Duplicate", T, SAGE_DUP_OK, SAGE_DUP_LIST)
    if constexpr (SAGE_DUP_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        detail::duplicate_masked(dst, scalarValue, m, dstBlockStride, dstRepeatStride, loc);
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                                 const uint8_t repeatTime, const uint16_t dstBlockStride,
                                 const uint8_t dstRepeatStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("Duplicate", T, SAGE_DUP_OK, SAGE_DUP_LIST)
    if constexpr (SAGE_DUP_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        detail::duplicate_masked(dst, scalarValue, m, dstBlockStride, dstRepeatStride, loc);
    }
}
#undef SAGE_DUP_OK
#undef SAGE_DUP_LIST

// ---------------------------------------------------------------- Brcb

struct BrcbRepeatParams {
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint16_t dstBlkStride = 1;
    __aicore__ BrcbRepeatParams() = default;
    __aicore__ BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
};

// Each repeat reads 8 consecutive elements of src and fills one 32-byte block of dst with
// each: block j of repeat r at (r * dstRepStride + j * dstBlkStride) * 32 bytes.
template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                            const BrcbRepeatParams& repeatParams, SAGE_LOC) {
    constexpr bool ok = sizeof(T) == 2 || sizeof(T) == 4;
    SAGE_DTYPE_GATE("Brcb", T, ok, "16- or 32-bit types: half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        constexpr uint32_t epb = 32 / sizeof(T);
        // The documented special case: a block stride of 0 behaves as 1.
        uint32_t bs = repeatParams.dstBlkStride ? repeatParams.dstBlkStride : 1;
        uint32_t rs = repeatParams.dstRepStride;
        uint64_t n_src = uint64_t(repeatTime) * 8;
        uint64_t ext = 0;
        if (repeatTime) ext = (uint64_t(repeatTime - 1) * rs + 7ull * bs + 1) * epb;
        vec_src(src, "Brcb", n_src, loc);
        dst.check("Brcb", ext, loc);
        T* d = dst.data();
        const T* s = src.data();
        uint8_t* init = blk().ub_init + dst.addr_;
        for (uint32_t r = 0; r < repeatTime; ++r) {
            for (uint32_t j = 0; j < 8; ++j) {
                const T v = s[r * 8 + j];
                uint64_t base = (uint64_t(r) * rs + uint64_t(j) * bs) * epb;
                for (uint32_t e = 0; e < epb; ++e) d[base + e] = v;
                memset(init + base * sizeof(T), 1, 32);
            }
        }
        trace_instr(Pipe::V, "Brcb", dtype_name<T>(), uint32_t(n_src * epb), n_src * 32, loc, dst.range(ext),
                    src.range(n_src));
    }
}

// ---------------------------------------------------------------- CreateVecIndex

#define SAGE_IDX_OK (::sage::sim::one_of<T, half, float, int16_t, int32_t>())

// dst[i] = firstValue + i; in the mask/repeat forms i counts every element of every repeat.
template <typename T>
__aicore__ inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count, SAGE_LOC) {
    SAGE_DTYPE_GATE("CreateVecIndex", T, SAGE_IDX_OK, "half, float, int16_t, int32_t")
    if constexpr (SAGE_IDX_OK) {
        using namespace sage::sim;
        touch(loc);
        vec_dst(dst, "CreateVecIndex", count, loc);
        T* d = dst.data();
        auto f = up(firstValue);
        for (uint32_t i = 0; i < count; ++i) d[i] = down<T>(f + calc_t<T>(i));
        vec_done(dst, "CreateVecIndex", count, loc, {});
        count_form_done();
    }
}

namespace detail {
template <typename T>
inline void vec_index_masked(const LocalTensor<T>& dst, const T& first, const sage::sim::Repeats& m, uint16_t bs,
                             uint8_t rs, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    Lay ld = lay<T>(bs, rs);
    uint64_t ed = masked_check(dst, m, ld, "CreateVecIndex", loc, "dst");
    T* d = dst.data();
    auto f = up(first);
    m.each([&](uint32_t r, uint32_t k) { d[ld.off(r, k)] = down<T>(f + calc_t<T>(uint64_t(r) * m.epr + k)); });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, "CreateVecIndex", m, loc, {});
}
}  // namespace detail

template <typename T>
__aicore__ inline void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, uint64_t mask,
                                      uint8_t repeatTime, uint16_t dstBlkStride, uint8_t dstRepStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("CreateVecIndex", T, SAGE_IDX_OK, "half, float, int16_t, int32_t")
    if constexpr (SAGE_IDX_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_len(sage::sim::elems_per_repeat<T>(), true, mask, repeatTime);
        detail::vec_index_masked(dst, firstValue, m, dstBlkStride, dstRepStride, loc);
    }
}
template <typename T>
__aicore__ inline void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, const uint64_t mask[],
                                      uint8_t repeatTime, uint16_t dstBlkStride, uint8_t dstRepStride, SAGE_LOC) {
    SAGE_DTYPE_GATE("CreateVecIndex", T, SAGE_IDX_OK, "half, float, int16_t, int32_t")
    if constexpr (SAGE_IDX_OK) {
        sage::sim::touch(loc);
        auto m = sage::sim::repeats_from_array(sage::sim::elems_per_repeat<T>(), true, mask, repeatTime);
        detail::vec_index_masked(dst, firstValue, m, dstBlkStride, dstRepStride, loc);
    }
}
#undef SAGE_IDX_OK

// ---------------------------------------------------------------- Axpy

// dst = dst + src * scalar, computed in float and rounded to T once. T/U pairs:
// half/half, float/float, and float/half (dst float, src half).
#define SAGE_AXPY_OK                                                                                              \
    ((std::is_same<T, U>::value && ::sage::sim::one_of<T, half, float>()) ||                                      \
     (std::is_same<T, float>::value && std::is_same<U, half>::value))
#define SAGE_AXPY_LIST "dst/src half/half, float/float or float/half"

namespace detail {
template <typename T, typename U>
inline auto axpy_fn(const U& scalar) {
    float a = float(scalar);
    return [a](T& d, const U& s) { d = sage::sim::down<T>(float(d) + float(s) * a); };
}
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            const int32_t& count, SAGE_LOC) {
    SAGE_DTYPE_GATE("Axpy", T, SAGE_AXPY_OK, SAGE_AXPY_LIST)
    if constexpr (SAGE_AXPY_OK) {
        sage::sim::unary_count("Axpy", dst, src, count, loc, detail::axpy_fn<T, U>(scalarValue), true);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                            SAGE_LOC) {
    SAGE_DTYPE_GATE("Axpy", T, SAGE_AXPY_OK, SAGE_AXPY_LIST)
    if constexpr (SAGE_AXPY_OK) {
        sage::sim::touch(loc);
        constexpr uint32_t epr = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
        auto m = sage::sim::repeats_from_array(epr, isSetMask, mask, repeatTime);
        sage::sim::unary_masked("Axpy", dst, src, m, repeatParams, loc, detail::axpy_fn<T, U>(scalarValue), true);
    }
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams,
                            SAGE_LOC) {
    SAGE_DTYPE_GATE("Axpy", T, SAGE_AXPY_OK, SAGE_AXPY_LIST)
    if constexpr (SAGE_AXPY_OK) {
        sage::sim::touch(loc);
        constexpr uint32_t epr = 256 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
        auto m = sage::sim::repeats_from_len(epr, isSetMask, mask, repeatTime);
        sage::sim::unary_masked("Axpy", dst, src, m, repeatParams, loc, detail::axpy_fn<T, U>(scalarValue), true);
    }
}
#undef SAGE_AXPY_OK
#undef SAGE_AXPY_LIST

// CANN 9 kernels start with InitSocState(): the core's mask and compare registers return to
// their reset state (the emulator also resets them at every block's start).
__aicore__ inline void InitSocState(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs() = sage::sim::VecRegs{};
    sage::sim::vregs().block = sage::sim::blk().idx;
}

}  // namespace AscendC
