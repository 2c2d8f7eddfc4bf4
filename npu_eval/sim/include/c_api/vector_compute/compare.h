// The C API's comparisons and selection (asc-devkit include/c_api/vector_compute/vector_compute.h)
// for 910B, on the C++ API's Compare/Select engines:
//   asc_eq/ne/gt/ge/lt/le(dst, src0, src1, repeat, strides...)   a bit per element into dst
//                                                                (whole repeats: the mask is ignored)
//   asc_eq/...(src0, src1, repeat, strides...)                   one repeat under the vector mask
//                                                                into the CMPMASK register
//   asc_eq_scalar/...(dst, src, value, repeat, strides...)       against a scalar, into dst
//   asc_set_cmp_mask(sel_mask) / asc_get_cmp_mask(dst)           CMPMASK from / to 16 UB bytes
//   asc_select(dst, src0, src1, count | repeat, strides...)      CMPMASK bit k set: src0, else src1;
//                                                                every repeat reads bits 0..epr-1
#pragma once

#include "../../basic_api/kernel_operator_vec_cmpsel_intf.h"
#include "../../sage_sim/ubuf.h"

namespace sage {
namespace sim {
namespace capi {

template <typename T>
inline void compare_rep(const char* api, AscendC::CMPMODE mode, uint8_t* dst, T* src0, T* src1, uint8_t repeat,
                        AscendC::BinaryRepeatParams p, SrcLoc loc) {
    touch(loc);
    auto a = ub_view(src0, api, "src0", loc), b = ub_view(src1, api, "src1", loc);
    if (dst) {
        AscendC::detail::compare_tt(ub_view(dst, api, "dst", loc), a, b, mode, repeat, p, loc);
    } else {
        AscendC::detail::compare_to_cmpmask(a, b, mode, finish_repeats(elems_per_repeat<T>(), 1), p, loc);
    }
}

template <typename T>
inline void compare_scalar_rep(const char* api, AscendC::CMPMODE mode, uint8_t* dst, T* src, T value,
                               uint8_t repeat, AscendC::UnaryRepeatParams p, SrcLoc loc) {
    touch(loc);
    AscendC::detail::compare_ts(api, ub_view(dst, api, "dst", loc), ub_view(src, api, "src", loc), value, mode,
                                repeat, p, loc);
}

template <typename T>
inline void select_rep(const char* api, T* dst, T* src0, T* src1, uint8_t repeat, AscendC::BinaryRepeatParams p,
                       SrcLoc loc) {
    touch(loc);
    auto d = ub_view(dst, api, "dst", loc), a = ub_view(src0, api, "src0", loc), b = ub_view(src1, api, "src1", loc);
    Repeats m = finish_repeats(elems_per_repeat<T>(), repeat);
    Lay ld = lay<T>(p.dstBlkStride, p.dstRepStride), l0 = lay<T>(p.src0BlkStride, p.src0RepStride),
        l1 = lay<T>(p.src1BlkStride, p.src1RepStride);
    uint64_t e0 = masked_check(a, m, l0, api, loc, "src0"), e1 = masked_check(b, m, l1, api, loc, "src1");
    uint64_t ed = masked_check(d, m, ld, api, loc, "dst");
    masked_check_init(a, m, l0, api, loc);
    masked_check_init(b, m, l1, api, loc);
    const uint64_t* sel = vregs().cmpmask;
    T* o = d.data();
    const T* x = a.data();
    const T* y = b.data();
    m.each([&](uint32_t r, uint32_t k) {
        o[ld.off(r, k)] = ((sel[k >> 6] >> (k & 63)) & 1) ? x[l0.off(r, k)] : y[l1.off(r, k)];
    });
    masked_mark(d, m, ld);
    masked_trace(d, ed, api, m, loc, a.range(e0), b.range(e1));
}

}  // namespace capi
}  // namespace sim
}  // namespace sage

#define SAGE_CAPI_CMP_OK(MODE)                                                                                   \
    (::sage::sim::one_of<T, half, float>() ||                                                                   \
     (AscendC::CMPMODE::MODE == AscendC::CMPMODE::EQ && std::is_same<T, int32_t>::value))

#define SAGE_CAPI_COMPARE(NAME, MODE)                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ uint8_t* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,       \
                                uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride,  \
                                uint8_t dst_repeat_stride, uint8_t src0_repeat_stride,                           \
                                uint8_t src1_repeat_stride, SAGE_LOC) {                                          \
        SAGE_DTYPE_GATE(#NAME, T, SAGE_CAPI_CMP_OK(MODE), "half, float (and int32_t for asc_eq)")                \
        AscendC::BinaryRepeatParams p(dst_block_stride, src0_block_stride, src1_block_stride, dst_repeat_stride, \
                                      src0_repeat_stride, src1_repeat_stride);                                   \
        ::sage::sim::capi::compare_rep(#NAME, AscendC::CMPMODE::MODE, dst, src0, src1, repeat, p, loc);          \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat, uint8_t dst_block_stride,    \
                                uint8_t src0_block_stride, uint8_t src1_block_stride, uint8_t dst_repeat_stride, \
                                uint8_t src0_repeat_stride, uint8_t src1_repeat_stride, SAGE_LOC) {              \
        SAGE_DTYPE_GATE(#NAME, T, (::sage::sim::one_of<T, half, float>()), "half, float")                        \
        AscendC::BinaryRepeatParams p(dst_block_stride, src0_block_stride, src1_block_stride, dst_repeat_stride, \
                                      src0_repeat_stride, src1_repeat_stride);                                   \
        ::sage::sim::capi::compare_rep<T>(#NAME, AscendC::CMPMODE::MODE, nullptr, src0, src1, repeat, p, loc);   \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_sync(__ubuf__ uint8_t* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat, \
                                       uint8_t dbs, uint8_t s0bs, uint8_t s1bs, uint8_t drs, uint8_t s0rs,       \
                                       uint8_t s1rs, SAGE_LOC) {                                                 \
        NAME(dst, src0, src1, repeat, dbs, s0bs, s1bs, drs, s0rs, s1rs, loc);                                    \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_sync(__ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat, uint8_t dbs,          \
                                       uint8_t s0bs, uint8_t s1bs, uint8_t drs, uint8_t s0rs, uint8_t s1rs,      \
                                       SAGE_LOC) {                                                               \
        NAME(src0, src1, repeat, dbs, s0bs, s1bs, drs, s0rs, s1rs, loc);                                         \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_scalar(__ubuf__ uint8_t* dst, __ubuf__ T* src, ::sage::sim::same_t<T> value,   \
                                         uint8_t repeat, uint16_t dst_block_stride, uint16_t src_block_stride,   \
                                         uint16_t dst_repeat_stride, uint16_t src_repeat_stride, SAGE_LOC) {     \
        SAGE_DTYPE_GATE(#NAME "_scalar", T, SAGE_CAPI_CMP_OK(MODE), "half, float (and int32_t for asc_eq)")      \
        AscendC::UnaryRepeatParams p(dst_block_stride, src_block_stride, uint8_t(dst_repeat_stride),             \
                                     uint8_t(src_repeat_stride));                                                \
        ::sage::sim::capi::compare_scalar_rep<T>(#NAME "_scalar", AscendC::CMPMODE::MODE, dst, src, value,       \
                                                 repeat, p, loc);                                                \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_scalar_sync(__ubuf__ uint8_t* dst, __ubuf__ T* src, ::sage::sim::same_t<T> value, \
                                              uint8_t repeat, uint16_t dbs, uint16_t sbs, uint16_t drs,          \
                                              uint16_t srs, SAGE_LOC) {                                          \
        NAME##_scalar(dst, src, value, repeat, dbs, sbs, drs, srs, loc);                                         \
        ::sage::sim::capi_sync_all(#NAME "_scalar_sync", loc);                                                   \
    }

SAGE_CAPI_COMPARE(asc_eq, EQ)
SAGE_CAPI_COMPARE(asc_ne, NE)
SAGE_CAPI_COMPARE(asc_gt, GT)
SAGE_CAPI_COMPARE(asc_ge, GE)
SAGE_CAPI_COMPARE(asc_lt, LT)
SAGE_CAPI_COMPARE(asc_le, LE)

#undef SAGE_CAPI_COMPARE
#undef SAGE_CAPI_CMP_OK

// CMPMASK from 16 UB bytes (an 8-byte mask is enough for float: only its first 64 bits are read).
__aicore__ inline void asc_set_cmp_mask(__ubuf__ void* sel_mask, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    auto m = ub_view(static_cast<uint8_t*>(sel_mask), "asc_set_cmp_mask", "sel_mask", loc);
    uint32_t room = m.size_ < 16 ? m.size_ : 16;
    m.check("asc_set_cmp_mask", room, loc);
    ub_check_init(UbRange{m.addr_, room}, "asc_set_cmp_mask", loc);
    uint64_t bits[2] = {0, 0};
    memcpy(bits, m.data(), room);
    vregs().cmpmask[0] = bits[0];
    vregs().cmpmask[1] = bits[1];
    trace_instr(Pipe::V, "asc_set_cmp_mask", "uint8", room, room, loc, {}, UbRange{m.addr_, room});
}
__aicore__ inline void asc_get_cmp_mask(__ubuf__ void* dst, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    auto d = ub_view(static_cast<uint8_t*>(dst), "asc_get_cmp_mask", "dst", loc);
    d.check("asc_get_cmp_mask", 16, loc);
    memcpy(d.data(), vregs().cmpmask, 16);
    ub_mark(UbRange{d.addr_, 16});
    trace_instr(Pipe::V, "asc_get_cmp_mask", "uint8", 16, 16, loc, UbRange{d.addr_, 16});
}

template <typename T>
__aicore__ inline void asc_select(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,
                                  uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride,
                                  uint8_t dst_repeat_stride, uint8_t src0_repeat_stride, uint8_t src1_repeat_stride,
                                  SAGE_LOC) {
    SAGE_DTYPE_GATE("asc_select", T, (::sage::sim::one_of<T, half, float>()), "half, float")
    AscendC::BinaryRepeatParams p(dst_block_stride, src0_block_stride, src1_block_stride, dst_repeat_stride,
                                  src0_repeat_stride, src1_repeat_stride);
    ::sage::sim::capi::select_rep("asc_select", dst, src0, src1, repeat, p, loc);
}
template <typename T>
__aicore__ inline void asc_select(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count, SAGE_LOC) {
    ::sage::sim::capi_count_check("asc_select", count, loc, dst, src0, src1);
    ::sage::sim::capi_count(count, [&] { asc_select(dst, src0, src1, 1, 1, 1, 1, 8, 8, 8, loc); });
}
template <typename T>
__aicore__ inline void asc_select_sync(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count,
                                       SAGE_LOC) {
    asc_select(dst, src0, src1, count, loc);
    ::sage::sim::capi_sync_all("asc_select_sync", loc);
}
