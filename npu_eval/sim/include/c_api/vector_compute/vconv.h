// The C API's precision conversions (asc-devkit include/c_api/vector_compute/vector_compute.h,
// asc_<src>2<dst>[_<rounding>]) for 910B: the rounding suffix names Cast's RoundMode (_rd floor,
// _ru ceil, _rn to nearest even, _rna to nearest away from zero, _rz toward zero, _ro odd; none:
// CAST_NONE), and the numerics are Cast's (basic_api vconv header: bit-exact rounding, integer
// saturation, NaN to 0). A repeat holds 256 bytes of the wider type; the count form walks the
// narrower operand with a repeat stride of 8 blocks scaled by the size ratio, as asc-devkit does.
#pragma once

#include "../../basic_api/kernel_operator_vec_vconv_intf.h"
#include "../../sage_sim/ubuf.h"

namespace sage {
namespace sim {
namespace capi {

template <typename TD, typename TS>
inline void convert_rep(const char* api, TD* dst, TS* src, uint8_t repeat, uint16_t dst_block_stride,
                        uint16_t src_block_stride, uint16_t dst_repeat_stride, uint16_t src_repeat_stride,
                        AscendC::RoundMode mode, SrcLoc loc) {
    touch(loc);
    auto d = ub_view(dst, api, "dst", loc);
    auto s = ub_view(src, api, "src", loc);
    AscendC::UnaryRepeatParams p(dst_block_stride, src_block_stride, uint8_t(dst_repeat_stride),
                                 uint8_t(src_repeat_stride));
    constexpr uint32_t epr = 256 / (sizeof(TD) > sizeof(TS) ? sizeof(TD) : sizeof(TS));
    unary_masked(api, d, s, finish_repeats(epr, repeat), p, loc,
                 [mode](TD& o, const TS& i) { o = convert<TD, TS>(i, mode); });
}

// The count form's repeat stride of an operand: 8 blocks for the wider type, fewer for a narrower.
template <typename X, typename TD, typename TS>
constexpr uint16_t count_stride() {
    return uint16_t(8 * sizeof(X) / (sizeof(TD) > sizeof(TS) ? sizeof(TD) : sizeof(TS)));
}

}  // namespace capi
}  // namespace sim
}  // namespace sage

#define SAGE_CAPI_CONV(NAME, TD, TS, MODE)                                                                        \
    __aicore__ inline void NAME(__ubuf__ TD* dst, __ubuf__ TS* src, uint8_t repeat, uint16_t dst_block_stride,   \
                                uint16_t src_block_stride, uint16_t dst_repeat_stride, uint16_t src_repeat_stride, \
                                SAGE_LOC) {                                                                      \
        ::sage::sim::capi::convert_rep<TD, TS>(#NAME, dst, src, repeat, dst_block_stride, src_block_stride,       \
                                               dst_repeat_stride, src_repeat_stride, AscendC::RoundMode::MODE, loc); \
    }                                                                                                            \
    __aicore__ inline void NAME(__ubuf__ TD* dst, __ubuf__ TS* src, uint32_t count, SAGE_LOC) {                  \
        using namespace ::sage::sim::capi;                                                                       \
        ::sage::sim::capi_count_check(#NAME, count, loc, dst, src);                                              \
        ::sage::sim::capi_count(count, [&] {                                                                     \
            NAME(dst, src, 1, 1, 1, count_stride<TD, TD, TS>(), count_stride<TS, TD, TS>(), loc);                \
        });                                                                                                      \
    }                                                                                                            \
    __aicore__ inline void NAME##_sync(__ubuf__ TD* dst, __ubuf__ TS* src, uint32_t count, SAGE_LOC) {           \
        NAME(dst, src, count, loc);                                                                              \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }

// The five directed roundings of a conversion.
#define SAGE_CAPI_CONV_R(NAME, TD, TS)                                                                            \
    SAGE_CAPI_CONV(NAME##_rd, TD, TS, CAST_FLOOR)                                                                \
    SAGE_CAPI_CONV(NAME##_ru, TD, TS, CAST_CEIL)                                                                 \
    SAGE_CAPI_CONV(NAME##_rn, TD, TS, CAST_RINT)                                                                 \
    SAGE_CAPI_CONV(NAME##_rna, TD, TS, CAST_ROUND)                                                               \
    SAGE_CAPI_CONV(NAME##_rz, TD, TS, CAST_TRUNC)

SAGE_CAPI_CONV(asc_half2float, float, half, CAST_NONE)
SAGE_CAPI_CONV(asc_bfloat162float, float, bfloat16_t, CAST_NONE)
SAGE_CAPI_CONV_R(asc_bfloat162int32, int32_t, bfloat16_t)
SAGE_CAPI_CONV_R(asc_float2bfloat16, bfloat16_t, float)
SAGE_CAPI_CONV_R(asc_float2float, float, float)
SAGE_CAPI_CONV(asc_float2half, half, float, CAST_NONE)
SAGE_CAPI_CONV_R(asc_float2half, half, float)
SAGE_CAPI_CONV(asc_float2half_ro, half, float, CAST_ODD)
SAGE_CAPI_CONV_R(asc_float2int16, int16_t, float)
SAGE_CAPI_CONV_R(asc_float2int32, int32_t, float)
SAGE_CAPI_CONV_R(asc_float2int64, int64_t, float)
SAGE_CAPI_CONV_R(asc_half2int16, int16_t, half)
SAGE_CAPI_CONV_R(asc_half2int32, int32_t, half)
SAGE_CAPI_CONV(asc_half2int8, int8_t, half, CAST_NONE)
SAGE_CAPI_CONV_R(asc_half2int8, int8_t, half)
SAGE_CAPI_CONV(asc_half2uint8, uint8_t, half, CAST_NONE)
SAGE_CAPI_CONV_R(asc_half2uint8, uint8_t, half)
SAGE_CAPI_CONV(asc_int162float, float, int16_t, CAST_NONE)
SAGE_CAPI_CONV(asc_int162half, half, int16_t, CAST_NONE)
SAGE_CAPI_CONV_R(asc_int162half, half, int16_t)
SAGE_CAPI_CONV(asc_int322float, float, int32_t, CAST_NONE)
SAGE_CAPI_CONV_R(asc_int322float, float, int32_t)
SAGE_CAPI_CONV(asc_int322int16, int16_t, int32_t, CAST_NONE)
SAGE_CAPI_CONV(asc_int322int64, int64_t, int32_t, CAST_NONE)
SAGE_CAPI_CONV_R(asc_int642float, float, int64_t)
SAGE_CAPI_CONV(asc_int642int32, int32_t, int64_t, CAST_NONE)
SAGE_CAPI_CONV(asc_int82half, half, int8_t, CAST_NONE)
SAGE_CAPI_CONV(asc_uint82half, half, uint8_t, CAST_NONE)
// int32 -> half through the dequantisation scale asc_set_deq_scale(half) sets.
SAGE_CAPI_CONV(asc_deq_int322half, half, int32_t, CAST_NONE)

#undef SAGE_CAPI_CONV_R
#undef SAGE_CAPI_CONV

__aicore__ inline void asc_set_deq_scale(half scale, SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().deq_scale = float(scale);
}
