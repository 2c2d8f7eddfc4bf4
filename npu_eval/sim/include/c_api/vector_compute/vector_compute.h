// The C API's vector compute (asc-devkit include/c_api/vector_compute/vector_compute.h), the
// element-wise families: binary (asc_add ...), unary (asc_exp ...), with a scalar
// (asc_add_scalar ...), asc_duplicate, asc_brcb, and the mask registers (asc_set_vector_mask,
// asc_set_mask_count/norm). Each op has the real forms:
//   asc_X(dst, src..., count)                     the first `count` elements (Counter mode)
//   asc_X(dst, src..., repeat, strides...)        `repeat` repeats under the current vector mask
//   asc_X_sync(dst, src..., count)                the count form, then a barrier on every pipe
//   asc_X(dst, src..., config)                    the repeat form, as the first C API spelled it
// The real header declares one overload per dtype; here one template per form, whose dtype gate
// names the dtypes the op takes on 910B. Operands are `__ubuf__` pointers (sage_sim/ubuf.h), run
// through the same engines, numerics and checks as the C++ API's Add, Exp, Adds, Duplicate.
#pragma once

#include <cmath>

#include "../../basic_api/kernel_operator_vec_brcb_intf.h"
#include "../../sage_sim/ubuf.h"
#include "../utils/union.h"
#include "../../sage_sim/vec.h"

namespace sage {
namespace sim {
namespace capi {

template <typename T, class F>
inline void binary_rep(const char* api, T* dst, T* src0, T* src1, uint8_t repeat, AscendC::BinaryRepeatParams p,
                       SrcLoc loc, F f) {
    touch(loc);
    auto d = ub_view(dst, api, "dst", loc), a = ub_view(src0, api, "src0", loc), b = ub_view(src1, api, "src1", loc);
    binary_masked(api, d, a, b, finish_repeats(elems_per_repeat<T>(), repeat), p, loc, f);
}

template <typename TD, typename TS, class F>
inline void unary_rep(const char* api, TD* dst, TS* src, uint8_t repeat, AscendC::UnaryRepeatParams p, SrcLoc loc,
                      F f) {
    touch(loc);
    auto d = ub_view(dst, api, "dst", loc);
    auto s = ub_view(src, api, "src", loc);
    constexpr uint32_t epr = elems_per_repeat<TD>() < elems_per_repeat<TS>() ? elems_per_repeat<TD>()
                                                                              : elems_per_repeat<TS>();
    unary_masked(api, d, s, finish_repeats(epr, repeat), p, loc, f);
}

template <typename T>
inline void duplicate_rep(const char* api, T* dst, T value, uint8_t repeat, uint16_t dst_block_stride,
                          uint16_t dst_repeat_stride, SrcLoc loc) {
    touch(loc);
    auto d = ub_view(dst, api, "dst", loc);
    Repeats m = finish_repeats(elems_per_repeat<T>(), repeat);
    Lay ld = lay<T>(dst_block_stride, dst_repeat_stride);
    uint64_t ed = masked_check(d, m, ld, api, loc, "dst");
    T* out = d.data();
    m.each([&](uint32_t r, uint32_t k) { out[ld.off(r, k)] = value; });
    masked_mark(d, m, ld);
    masked_trace(d, ed, api, m, loc, {});
}

}  // namespace capi
}  // namespace sim
}  // namespace sage

// ---------------------------------------------------------------- mask registers

__aicore__ inline void asc_set_mask_count(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().counter = true;
}
__aicore__ inline void asc_set_mask_norm(SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::vregs().counter = false;
}
// mask1 holds the bits of elements 64..127, mask0 those of 0..63 (in Counter mode, mask0 the count).
__aicore__ inline void asc_set_vector_mask(uint64_t mask1, uint64_t mask0, SAGE_LOC) {
    sage::sim::touch(loc);
    sage::sim::VecRegs& r = sage::sim::vregs();
    r.mask_hi = mask1;
    r.mask_lo = mask0;
}

// ---------------------------------------------------------------- binary

#define SAGE_CAPI_BINARY(NAME, OK, LIST, EXPR)                                                                    \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,             \
                                uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride,  \
                                uint8_t dst_repeat_stride, uint8_t src0_repeat_stride,                           \
                                uint8_t src1_repeat_stride, SAGE_LOC) {                                          \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            AscendC::BinaryRepeatParams p(dst_block_stride, src0_block_stride, src1_block_stride,                \
                                          dst_repeat_stride, src0_repeat_stride, src1_repeat_stride);            \
            ::sage::sim::capi::binary_rep(#NAME, dst, src0, src1, repeat, p, loc,                                \
                                          [](auto a, auto b) { return EXPR; });                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count, SAGE_LOC) { \
        ::sage::sim::capi_count_check(#NAME, count, loc, dst, src0, src1);                                       \
        ::sage::sim::capi_count(count, [&] { NAME(dst, src0, src1, 1, 1, 1, 1, 8, 8, 8, loc); });                \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, const asc_binary_config& c, \
                                SAGE_LOC) {                                                                      \
        NAME(dst, src0, src1, uint8_t(c.repeat), uint8_t(c.dst_block_stride), uint8_t(c.src0_block_stride),      \
             uint8_t(c.src1_block_stride), uint8_t(c.dst_repeat_stride), uint8_t(c.src0_repeat_stride),          \
             uint8_t(c.src1_repeat_stride), loc);                                                                \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count,      \
                                       SAGE_LOC) {                                                               \
        NAME(dst, src0, src1, count, loc);                                                                       \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }

#define SAGE_CAPI_ARITH_OK (::sage::sim::one_of<T, half, float, int16_t, int32_t>())
#define SAGE_CAPI_ARITH_LIST "half, float, int16_t, int32_t"

SAGE_CAPI_BINARY(asc_add, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, a + b)
SAGE_CAPI_BINARY(asc_sub, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, a - b)
SAGE_CAPI_BINARY(asc_mul, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, a * b)
SAGE_CAPI_BINARY(asc_div, (::sage::sim::one_of<T, half, float>()), "half, float", a / b)
// A NaN operand wins, as in the C++ API's Max/Min.
SAGE_CAPI_BINARY(asc_max, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, ((a > b || a != a) ? a : b))
SAGE_CAPI_BINARY(asc_min, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, ((a < b || a != a) ? a : b))
SAGE_CAPI_BINARY(asc_and, (::sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t", a & b)
SAGE_CAPI_BINARY(asc_or, (::sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t", a | b)
SAGE_CAPI_BINARY(asc_add_relu, (::sage::sim::one_of<T, half, float, int16_t>()), "half, float, int16_t",
                 ((a + b) < 0 ? decltype(a + b)(0) : (a + b)))
SAGE_CAPI_BINARY(asc_sub_relu, (::sage::sim::one_of<T, half, float, int16_t>()), "half, float, int16_t",
                 ((a - b) < 0 ? decltype(a - b)(0) : (a - b)))

#undef SAGE_CAPI_BINARY

// ---------------------------------------------------------------- unary

#define SAGE_CAPI_UNARY(NAME, OK, LIST, EXPR)                                                                     \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, uint8_t repeat, uint16_t dst_block_stride,     \
                                uint16_t src_block_stride, uint16_t dst_repeat_stride,                           \
                                uint16_t src_repeat_stride, SAGE_LOC) {                                          \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            AscendC::UnaryRepeatParams p(dst_block_stride, src_block_stride, uint8_t(dst_repeat_stride),         \
                                         uint8_t(src_repeat_stride));                                            \
            ::sage::sim::capi::unary_rep(#NAME, dst, src, repeat, p, loc, [](T& d, const T& s) {                 \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, SAGE_LOC) {                    \
        ::sage::sim::capi_count_check(#NAME, count, loc, dst, src);                                              \
        ::sage::sim::capi_count(count, [&] { NAME(dst, src, 1, 1, 1, 8, 8, loc); });                             \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, const asc_unary_config& c, SAGE_LOC) {         \
        NAME(dst, src, uint8_t(c.repeat), uint16_t(c.dst_block_stride), uint16_t(c.src_block_stride),            \
             uint16_t(c.dst_repeat_stride), uint16_t(c.src_repeat_stride), loc);                                 \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, SAGE_LOC) {             \
        NAME(dst, src, count, loc);                                                                              \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }

#define SAGE_CAPI_FLOAT_OK (::sage::sim::one_of<T, half, float>())

// Half computes in float and rounds once, as the C++ API's Exp/Ln/... (basic_api unary header).
SAGE_CAPI_UNARY(asc_exp, SAGE_CAPI_FLOAT_OK, "half, float", std::exp(a))
SAGE_CAPI_UNARY(asc_log, SAGE_CAPI_FLOAT_OK, "half, float", std::log(a))
SAGE_CAPI_UNARY(asc_abs, SAGE_CAPI_FLOAT_OK, "half, float", std::fabs(a))
SAGE_CAPI_UNARY(asc_sqrt, SAGE_CAPI_FLOAT_OK, "half, float", std::sqrt(a))
SAGE_CAPI_UNARY(asc_rsqrt, SAGE_CAPI_FLOAT_OK, "half, float", 1.0f / std::sqrt(a))
SAGE_CAPI_UNARY(asc_rcp, SAGE_CAPI_FLOAT_OK, "half, float", 1.0f / a)
SAGE_CAPI_UNARY(asc_relu, (::sage::sim::one_of<T, half, float, int32_t>()), "half, float, int32_t",
                (a < 0 ? decltype(a)(0) : a))
SAGE_CAPI_UNARY(asc_not, (::sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t", ~a)

#undef SAGE_CAPI_UNARY

// ---------------------------------------------------------------- with a scalar

#define SAGE_CAPI_SCALAR(NAME, OK, LIST, EXPR)                                                                    \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, ::sage::sim::same_t<T> value, uint8_t repeat,  \
                                uint16_t dst_block_stride, uint16_t src_block_stride,                            \
                                uint16_t dst_repeat_stride, uint16_t src_repeat_stride, SAGE_LOC) {              \
        SAGE_DTYPE_GATE(#NAME, T, OK, LIST)                                                                      \
        if constexpr (OK) {                                                                                      \
            AscendC::UnaryRepeatParams p(dst_block_stride, src_block_stride, uint8_t(dst_repeat_stride),         \
                                         uint8_t(src_repeat_stride));                                            \
            auto b = ::sage::sim::up(value);                                                                     \
            ::sage::sim::capi::unary_rep(#NAME, dst, src, repeat, p, loc, [b](T& d, const T& s) {                \
                auto a = ::sage::sim::up(s);                                                                     \
                d = ::sage::sim::down<T>(EXPR);                                                                  \
            });                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, ::sage::sim::same_t<T> value, uint32_t count,  \
                                SAGE_LOC) {                                                                      \
        ::sage::sim::capi_count_check(#NAME, count, loc, dst, src);                                              \
        ::sage::sim::capi_count(count, [&] { NAME(dst, src, value, 1, 1, 1, 8, 8, loc); });                      \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, ::sage::sim::same_t<T> value,                  \
                                const asc_unary_config& c, SAGE_LOC) {                                           \
        NAME(dst, src, value, uint8_t(c.repeat), uint16_t(c.dst_block_stride), uint16_t(c.src_block_stride),     \
             uint16_t(c.dst_repeat_stride), uint16_t(c.src_repeat_stride), loc);                                 \
    }                                                                                                            \
    template <typename T>                                                                                        \
    __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src, ::sage::sim::same_t<T> value,           \
                                       uint32_t count, SAGE_LOC) {                                               \
        NAME(dst, src, value, count, loc);                                                                       \
        ::sage::sim::capi_sync_all(#NAME "_sync", loc);                                                          \
    }

SAGE_CAPI_SCALAR(asc_add_scalar, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, a + b)
SAGE_CAPI_SCALAR(asc_sub_scalar, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, a - b)
SAGE_CAPI_SCALAR(asc_mul_scalar, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, a * b)
SAGE_CAPI_SCALAR(asc_max_scalar, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, ((a > b || a != a) ? a : b))
SAGE_CAPI_SCALAR(asc_min_scalar, SAGE_CAPI_ARITH_OK, SAGE_CAPI_ARITH_LIST, ((a < b || a != a) ? a : b))
SAGE_CAPI_SCALAR(asc_leakyrelu, SAGE_CAPI_FLOAT_OK, "half, float", (a >= 0 ? a : a * b))

#undef SAGE_CAPI_SCALAR
#undef SAGE_CAPI_FLOAT_OK
#undef SAGE_CAPI_ARITH_OK
#undef SAGE_CAPI_ARITH_LIST

// ---------------------------------------------------------------- asc_duplicate

#define SAGE_CAPI_DUP_OK (::sage::sim::one_of<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>())

template <typename T>
__aicore__ inline void asc_duplicate(__ubuf__ T* dst, ::sage::sim::same_t<T> src, uint8_t repeat,
                                     uint16_t dst_block_stride, uint16_t dst_repeat_stride, SAGE_LOC) {
    SAGE_DTYPE_GATE("asc_duplicate", T, SAGE_CAPI_DUP_OK,
                    "int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float")
    if constexpr (SAGE_CAPI_DUP_OK) {
        ::sage::sim::capi::duplicate_rep<T>("asc_duplicate", dst, src, repeat, dst_block_stride, dst_repeat_stride,
                                            loc);
    }
}
template <typename T>
__aicore__ inline void asc_duplicate(__ubuf__ T* dst, ::sage::sim::same_t<T> src, uint32_t count, SAGE_LOC) {
    ::sage::sim::capi_count_check("asc_duplicate", count, loc, dst);
    ::sage::sim::capi_count(count, [&] { asc_duplicate(dst, src, 1, 1, 8, loc); });
}
template <typename T>
__aicore__ inline void asc_duplicate(__ubuf__ T* dst, ::sage::sim::same_t<T> src, const asc_duplicate_config& c,
                                     SAGE_LOC) {
    asc_duplicate(dst, src, uint8_t(c.repeat), uint16_t(c.dst_block_stride), uint16_t(c.dst_repeat_stride), loc);
}
template <typename T>
__aicore__ inline void asc_duplicate_sync(__ubuf__ T* dst, ::sage::sim::same_t<T> src, uint32_t count, SAGE_LOC) {
    asc_duplicate(dst, src, count, loc);
    ::sage::sim::capi_sync_all("asc_duplicate_sync", loc);
}

#undef SAGE_CAPI_DUP_OK

// ---------------------------------------------------------------- asc_brcb

// Each repeat spreads 8 consecutive src elements over 8 blocks of dst (the C++ API's Brcb).
template <typename T>
__aicore__ inline void asc_brcb(__ubuf__ T* dst, __ubuf__ T* src, uint16_t dst_block_stride,
                                uint16_t dst_repeat_stride, uint8_t repeat, SAGE_LOC) {
    SAGE_DTYPE_GATE("asc_brcb", T, (::sage::sim::one_of<T, uint16_t, uint32_t>()), "uint16_t, uint32_t")
    using namespace ::sage::sim;
    touch(loc);
    AscendC::Brcb(ub_view(dst, "asc_brcb", "dst", loc), ub_view(src, "asc_brcb", "src", loc), repeat,
                  AscendC::BrcbRepeatParams(dst_block_stride, dst_repeat_stride), loc);
}
template <typename T>
__aicore__ inline void asc_brcb_sync(__ubuf__ T* dst, __ubuf__ T* src, uint16_t dst_block_stride,
                                     uint16_t dst_repeat_stride, uint8_t repeat, SAGE_LOC) {
    asc_brcb(dst, src, dst_block_stride, dst_repeat_stride, repeat, loc);
    ::sage::sim::capi_sync_all("asc_brcb_sync", loc);
}

// The conversions, reductions, comparisons and select of the same real header, in files of their own.
#include "vconv.h"
#include "reduce.h"
#include "compare.h"
