// The C API's vector data movement (asc-devkit include/c_api/vector_datamove/vector_datamove.h)
// for 910B: GM -> UB on MTE2, UB -> GM on MTE3, UB -> UB, each as bursts of 32-byte blocks
//   asc_copy_gm2ub(dst, src, n_burst, len_burst, src_gap, dst_gap)   lengths and gaps in blocks
//   asc_copy_gm2ub(dst, src, size)                                   one burst of size bytes
//   asc_copy_gm2ub_sync(dst, src, size)                              then a barrier on every pipe
// and the byte-exact `_align` forms (DataCopyPad's instruction: byte bursts, UB rows padded to
// 32 bytes, left/right padding from the pad register asc_set_copy_pad_val writes).
// A size that is not whole 32-byte blocks loses its tail on the device (the instruction takes a
// block count), which is reported as unaligned-copy and reproduced.
#pragma once

#include "../../basic_api/kernel_operator_data_copy_intf.h"
#include "../../sage_sim/ubuf.h"
#include "../utils/union.h"

namespace sage {
namespace sim {
namespace capi {

template <typename T>
inline AscendC::GlobalTensor<T> gm_view(T* p) {
    AscendC::GlobalTensor<T> g;
    g.addr_ = p;
    g.gm_ = gm_home(p);
    return g;
}

// The blocks a size form moves: size / 32, reporting the bytes the device drops.
inline uint16_t size_blocks(uint32_t size, const char* api, SrcLoc loc) {
    if (size % 32 != 0) {
        report("unaligned-copy", Severity::Error, loc,
               "%s of %u bytes, not a multiple of 32, in block %d: the copy moves whole 32-byte blocks, so the "
               "device moves %u bytes and drops the last %u. Copy a multiple of 32 bytes, or use the _align form "
               "(%s_align) for a byte length",
               api, size, blk().idx, size / 32 * 32, size % 32, api);
    }
    return uint16_t(size / 32);
}

// n_burst bursts of len_burst blocks; a gap of src_gap/dst_gap blocks after each burst.
inline void copy_bursts(const char* api, Pipe pipe, void* dst, void* src, bool dst_ub, bool src_ub, uint16_t n_burst,
                        uint16_t len_burst, uint16_t src_gap, uint16_t dst_gap, SrcLoc loc) {
    touch(loc);
    uint64_t burst = uint64_t(len_burst) * 32;
    uint64_t src_span = n_burst ? (n_burst - 1) * (burst + src_gap * 32ull) + burst : 0;
    uint64_t dst_span = n_burst ? (n_burst - 1) * (burst + dst_gap * 32ull) + burst : 0;
    auto* d8 = static_cast<uint8_t*>(dst);
    auto* s8 = static_cast<uint8_t*>(src);
    AscendC::LocalTensor<uint8_t> du, su;
    if (dst_ub) (du = ub_view(d8, api, "dst", loc)).check(api, dst_span, loc);
    if (src_ub) (su = ub_view(s8, api, "src", loc)).check(api, src_span, loc);
    for (uint16_t i = 0; i < n_burst; ++i) {
        uint64_t so = i * (burst + src_gap * 32ull), dof = i * (burst + dst_gap * 32ull);
        if (dst_ub && src_ub) {
            UbRange r{su.addr_ + uint32_t(so), uint32_t(burst)}, w{du.addr_ + uint32_t(dof), uint32_t(burst)};
            ub_check_init(r, api, loc);
            memmove(blk().ub + w.addr, blk().ub + r.addr, burst);
            ub_mark(w);
        } else if (dst_ub) {
            AscendC::detail::gm_to_ub(du, gm_view(s8), so, burst, uint32_t(dof), api, loc);
        } else {
            AscendC::detail::ub_to_gm(gm_view(d8), su, dof, burst, uint32_t(so), api, loc);
        }
    }
    UbRange w = dst_ub ? du.range(dst_span) : UbRange{}, r = src_ub ? su.range(src_span) : UbRange{};
    trace_instr(pipe, api, "uint8", uint32_t(burst * n_burst), burst * n_burst, loc, w, r);
    if (!(dst_ub && src_ub)) trace_gm_shape(dst_ub ? src : dst, n_burst);
}

}  // namespace capi
}  // namespace sim
}  // namespace sage

// ---------------------------------------------------------------- GM -> UB

__aicore__ inline void asc_copy_gm2ub(__ubuf__ void* dst, __gm__ void* src, uint16_t n_burst, uint16_t len_burst,
                                      uint16_t src_gap, uint16_t dst_gap, SAGE_LOC) {
    using namespace sage::sim;
    capi::copy_bursts("asc_copy_gm2ub", Pipe::MTE2, dst, src, true, false, n_burst, len_burst, src_gap, dst_gap, loc);
}
__aicore__ inline void asc_copy_gm2ub(__ubuf__ void* dst, __gm__ void* src, uint32_t size, SAGE_LOC) {
    asc_copy_gm2ub(dst, src, 1, sage::sim::capi::size_blocks(size, "asc_copy_gm2ub", loc), 0, 0, loc);
}
// The first C API's spelling: the bursts in one configuration word.
__aicore__ inline void asc_copy_gm2ub(__ubuf__ void* dst, __gm__ void* src, const asc_copy_config& c, SAGE_LOC) {
    asc_copy_gm2ub(dst, src, uint16_t(c.n_burst), uint16_t(c.burst_len), uint16_t(c.src_gap), uint16_t(c.dst_gap), loc);
}
__aicore__ inline void asc_copy_gm2ub_sync(__ubuf__ void* dst, __gm__ void* src, uint32_t size, SAGE_LOC) {
    asc_copy_gm2ub(dst, src, 1, sage::sim::capi::size_blocks(size, "asc_copy_gm2ub_sync", loc), 0, 0, loc);
    sage::sim::capi_sync_all("asc_copy_gm2ub_sync", loc);
}

// ---------------------------------------------------------------- UB -> GM

__aicore__ inline void asc_copy_ub2gm(__gm__ void* dst, __ubuf__ void* src, uint16_t n_burst, uint16_t len_burst,
                                      uint16_t src_gap, uint16_t dst_gap, SAGE_LOC) {
    using namespace sage::sim;
    capi::copy_bursts("asc_copy_ub2gm", Pipe::MTE3, dst, src, false, true, n_burst, len_burst, src_gap, dst_gap, loc);
}
__aicore__ inline void asc_copy_ub2gm(__gm__ void* dst, __ubuf__ void* src, uint32_t size, SAGE_LOC) {
    asc_copy_ub2gm(dst, src, 1, sage::sim::capi::size_blocks(size, "asc_copy_ub2gm", loc), 0, 0, loc);
}
// The first C API's spelling: the bursts in one configuration word.
__aicore__ inline void asc_copy_ub2gm(__gm__ void* dst, __ubuf__ void* src, const asc_copy_config& c, SAGE_LOC) {
    asc_copy_ub2gm(dst, src, uint16_t(c.n_burst), uint16_t(c.burst_len), uint16_t(c.src_gap), uint16_t(c.dst_gap), loc);
}
__aicore__ inline void asc_copy_ub2gm_sync(__gm__ void* dst, __ubuf__ void* src, uint32_t size, SAGE_LOC) {
    asc_copy_ub2gm(dst, src, 1, sage::sim::capi::size_blocks(size, "asc_copy_ub2gm_sync", loc), 0, 0, loc);
    sage::sim::capi_sync_all("asc_copy_ub2gm_sync", loc);
}

// ---------------------------------------------------------------- UB -> UB

__aicore__ inline void asc_copy_ub2ub(__ubuf__ void* dst, __ubuf__ void* src, uint16_t n_burst, uint16_t len_burst,
                                      uint16_t src_gap, uint16_t dst_gap, SAGE_LOC) {
    using namespace sage::sim;
    capi::copy_bursts("asc_copy_ub2ub", Pipe::V, dst, src, true, true, n_burst, len_burst, src_gap, dst_gap, loc);
}
__aicore__ inline void asc_copy_ub2ub(__ubuf__ void* dst, __ubuf__ void* src, uint32_t size, SAGE_LOC) {
    asc_copy_ub2ub(dst, src, 1, sage::sim::capi::size_blocks(size, "asc_copy_ub2ub", loc), 0, 0, loc);
}
__aicore__ inline void asc_copy_ub2ub_sync(__ubuf__ void* dst, __ubuf__ void* src, uint32_t size, SAGE_LOC) {
    asc_copy_ub2ub(dst, src, 1, sage::sim::capi::size_blocks(size, "asc_copy_ub2ub_sync", loc), 0, 0, loc);
    sage::sim::capi_sync_all("asc_copy_ub2ub_sync", loc);
}

// ---------------------------------------------------------------- byte-exact (_align) forms

#define SAGE_CAPI_ALIGN_OK                                                                                       \
    (::sage::sim::one_of<T, int8_t, uint8_t, half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t>())
#define SAGE_CAPI_ALIGN_LIST "int8_t, uint8_t, half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t"

// The pad register the _align GM -> UB forms fill left/right padding from (DataCopyPad's).
template <typename T>
__aicore__ inline void asc_set_copy_pad_val(T pad_value, SAGE_LOC) {
    SAGE_DTYPE_GATE("asc_set_copy_pad_val", T, SAGE_CAPI_ALIGN_OK, SAGE_CAPI_ALIGN_LIST)
    sage::sim::touch(loc);
    AscendC::detail::set_pad_register(pad_value);
}

// n_burst bursts of len_burst bytes, src_gap bytes apart in GM; each lands on a 32-byte UB row
// with left/right padding elements, rows dst_gap blocks apart.
template <typename T>
__aicore__ inline void asc_copy_gm2ub_align(__ubuf__ T* dst, __gm__ T* src, uint16_t n_burst, uint32_t len_burst,
                                            uint8_t left_padding_num, uint8_t right_padding_num, uint32_t src_gap,
                                            uint32_t dst_gap, SAGE_LOC) {
    SAGE_DTYPE_GATE("asc_copy_gm2ub_align", T, SAGE_CAPI_ALIGN_OK, SAGE_CAPI_ALIGN_LIST)
    using namespace sage::sim;
    touch(loc);
    auto d = ub_view(dst, "asc_copy_gm2ub_align", "dst", loc);
    AscendC::DataCopyPadExtParams<T> pad(false, left_padding_num, right_padding_num, T{});
    AscendC::DataCopyPad(d, capi::gm_view(src), AscendC::DataCopyExtParams(n_burst, len_burst, src_gap, dst_gap, 0),
                         pad, loc);
}
template <typename T>
__aicore__ inline void asc_copy_gm2ub_align(__ubuf__ T* dst, __gm__ T* src, uint32_t size, SAGE_LOC) {
    asc_copy_gm2ub_align(dst, src, 1, size, 0, 0, 0, 0, loc);
}
template <typename T>
__aicore__ inline void asc_copy_gm2ub_align_sync(__ubuf__ T* dst, __gm__ T* src, uint32_t size, SAGE_LOC) {
    asc_copy_gm2ub_align(dst, src, 1, size, 0, 0, 0, 0, loc);
    sage::sim::capi_sync_all("asc_copy_gm2ub_align_sync", loc);
}

// n_burst bursts of len_burst bytes from 32-byte UB rows (src_gap blocks apart) to GM, dst_gap
// bytes apart.
template <typename T>
__aicore__ inline void asc_copy_ub2gm_align(__gm__ T* dst, __ubuf__ T* src, uint16_t n_burst, uint32_t len_burst,
                                            uint8_t left_padding_num, uint8_t right_padding_num, uint32_t src_gap,
                                            uint32_t dst_gap, SAGE_LOC) {
    SAGE_DTYPE_GATE("asc_copy_ub2gm_align", T, SAGE_CAPI_ALIGN_OK, SAGE_CAPI_ALIGN_LIST)
    using namespace sage::sim;
    touch(loc);
    (void)left_padding_num, (void)right_padding_num;  // the UB -> GM instruction ignores them
    auto s = ub_view(src, "asc_copy_ub2gm_align", "src", loc);
    AscendC::DataCopyPad(capi::gm_view(dst), s, AscendC::DataCopyExtParams(n_burst, len_burst, src_gap, dst_gap, 0),
                         loc);
}
template <typename T>
__aicore__ inline void asc_copy_ub2gm_align(__gm__ T* dst, __ubuf__ T* src, uint32_t size, SAGE_LOC) {
    asc_copy_ub2gm_align(dst, src, 1, size, 0, 0, 0, 0, loc);
}
template <typename T>
__aicore__ inline void asc_copy_ub2gm_align_sync(__gm__ T* dst, __ubuf__ T* src, uint32_t size, SAGE_LOC) {
    asc_copy_ub2gm_align(dst, src, 1, size, 0, 0, 0, 0, loc);
    sage::sim::capi_sync_all("asc_copy_ub2gm_align_sync", loc);
}

#undef SAGE_CAPI_ALIGN_OK
#undef SAGE_CAPI_ALIGN_LIST
