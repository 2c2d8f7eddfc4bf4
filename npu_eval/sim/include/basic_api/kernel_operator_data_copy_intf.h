// DataCopy and DataCopyPad: the MTE2 (GM -> UB) and MTE3 (UB -> GM) transfers.
// DataCopy moves whole 32-byte blocks: a length that is not a multiple of 32 bytes is
// truncated by the hardware, which we report and reproduce. DataCopyPad takes byte lengths.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "../sage_sim/vec.h"
#include "kernel_tensor.h"

namespace AscendC {

namespace detail {

using sage::sim::Pipe;
using sage::sim::SrcLoc;
using sage::sim::UbRange;

// The bytes DataCopy really moves for `count` elements; reports a length the hardware
// would truncate.
template <typename T>
inline uint64_t whole_blocks(uint32_t count, const char* dir, SrcLoc loc) {
    uint64_t bytes = uint64_t(count) * sizeof(T);
    if (bytes % 32 != 0) {
        constexpr uint64_t per = 32 / sizeof(T);
        sage::sim::report("unaligned-copy", sage::sim::Severity::Error, loc,
                          "DataCopy %s of %u %s elements = %llu bytes, not a multiple of 32, in block %d: the "
                          "count form moves whole 32-byte blocks, so the device copies only %llu elements and "
                          "drops the last %llu. Make the count a multiple of %llu (e.g. %llu), or use "
                          "DataCopyPad with a byte length",
                          dir, count, sage::sim::dtype_name<T>(), (unsigned long long)bytes, sage::sim::blk().idx,
                          (unsigned long long)(bytes / 32 * 32 / sizeof(T)),
                          (unsigned long long)(count - bytes / 32 * 32 / sizeof(T)), (unsigned long long)per,
                          (unsigned long long)((count + per - 1) / per * per));
    }
    return bytes / 32 * 32;
}

// GM -> UB: `bytes` from `src` + gm_off (bytes) into dst + ub_off (bytes).
template <typename T>
inline void gm_to_ub(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint64_t gm_off, uint64_t bytes,
                     uint32_t ub_off, const char* api, SrcLoc loc) {
    if (!bytes) return;
    const uint8_t* g = reinterpret_cast<const uint8_t*>(src.addr_) + gm_off;
    const auto* b = sage::sim::gm_check(g, bytes, loc, false, api, sizeof(T), src.gm_);
    sage::sim::gm_order_read(b, g, bytes, loc, api, sizeof(T));  // another core's store needs a flag before
    UbRange w{dst.addr_ + ub_off, uint32_t(bytes)};
    memcpy(sage::sim::blk().ub + w.addr, g, bytes);
    sage::sim::ub_mark(w);
}

// UB -> GM: `bytes` from src + ub_off (bytes) to `dst` + gm_off (bytes); accumulates under
// SetAtomicAdd.
template <typename T>
inline void ub_to_gm(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint64_t gm_off, uint64_t bytes,
                     uint32_t ub_off, const char* api, SrcLoc loc) {
    if (!bytes) return;
    uint8_t* g = reinterpret_cast<uint8_t*>(dst.addr_) + gm_off;
    auto* b = sage::sim::gm_check(g, bytes, loc, true, api, sizeof(T), dst.gm_);
    UbRange r{src.addr_ + ub_off, uint32_t(bytes)};
    sage::sim::ub_check_init(r, api, loc);
    const uint8_t* u = sage::sim::blk().ub + r.addr;
    bool identical = false;
    if (const int op = sage::sim::blk().atomic_op) {
        for (uint64_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) {
            T a, v;
            memcpy(&a, g + i, sizeof(T));
            memcpy(&v, u + i, sizeof(T));
            if (op == sage::sim::AtomicAddOp) a = T(a + v);
            else if (op == sage::sim::AtomicMaxOp) a = (v > a) ? v : a;
            else a = (v < a) ? v : a;
            memcpy(g + i, &a, sizeof(T));
        }
    } else {
        identical = b && b->tracked && memcmp(g, u, bytes) == 0;
        memcpy(g, u, bytes);
    }
    sage::sim::gm_wrote(b, g, bytes, loc, api, sizeof(T), identical);
}

}  // namespace detail

// GM -> UB, `count` elements.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count,
                                SAGE_LOC) {
    sage::sim::touch(loc);
    uint64_t bytes = detail::whole_blocks<T>(count, "GM->UB", loc);
    dst.check("DataCopy", bytes / sizeof(T), loc);
    detail::gm_to_ub(dst, src, 0, bytes, 0, "DataCopy", loc);
    sage::sim::trace_instr(detail::Pipe::MTE2, "DataCopy", sage::sim::dtype_name<T>(), count, bytes, loc,
                           dst.range(bytes / sizeof(T)));
    sage::sim::trace_gm_shape(src.addr_, 1, uint32_t(bytes));
}

// UB -> GM, `count` elements.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
                                SAGE_LOC) {
    sage::sim::touch(loc);
    uint64_t bytes = detail::whole_blocks<T>(count, "UB->GM", loc);
    src.check("DataCopy", bytes / sizeof(T), loc);
    detail::ub_to_gm(dst, src, 0, bytes, 0, "DataCopy", loc);
    sage::sim::trace_instr(detail::Pipe::MTE3, "DataCopy", sage::sim::dtype_name<T>(), count, bytes, loc, {},
                           src.range(bytes / sizeof(T)));
    sage::sim::trace_gm_shape(dst.addr_, 1, uint32_t(bytes));
}

namespace detail {
// L1 (C1) -> Fixpipe Buffer (C2PIPE2GM) on the FIX pipe, the per-column quantisation words (the
// DataCopy L1ToFixpipe-Buffer page): blockLen counts 128-byte blocks; with more than one block,
// srcGap (32-byte units) and dstGap (128-byte units) are head-to-head distances, so 0 repeats
// the first block. dst 128-byte aligned, src 32-byte aligned, both uint64_t.
template <typename T>
inline void l1_to_fixpipe_buffer(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint16_t blocks,
                                 uint64_t burst, uint64_t src_step, uint64_t dst_step, SrcLoc loc) {
    using namespace sage::sim;
    const uint32_t at_src = src.addr_ - mem_base(Mem::L1), at_dst = dst.addr_ - mem_base(Mem::FB);
    if (!std::is_same_v<T, uint64_t> || at_dst % 128 || at_src % 32) {
        fail("api-misuse", loc,
             "DataCopy L1 -> Fixpipe Buffer of %s from L1 byte %u to Fixpipe Buffer byte %u, in block %d: it moves "
             "uint64_t quantisation words, the source 32-byte and the destination 128-byte aligned",
             dtype_name<T>(), at_src, at_dst, blk().idx);
    }
    for (uint16_t i = 0; i < blocks; ++i) {
        LocalTensor<T> d = dst, s = src;
        d.addr_ += uint32_t(i * dst_step);
        s.addr_ += uint32_t(i * src_step);
        d.check("DataCopy", burst / sizeof(T), loc, false);
        s.check("DataCopy", burst / sizeof(T), loc);
        // no unwritten-read check here: a kernel copies whole 128-byte blocks past its n words; the
        // bytes keep their written state and the Fixpipe checks the words it reads
        memmove(d.data(), s.data(), burst);
        memmove(blk().ub_init + d.addr_, blk().ub_init + s.addr_, burst);
    }
    trace_instr(Pipe::FIX, "DataCopy", dtype_name<T>(), uint32_t(burst * blocks / sizeof(T)), burst * blocks, loc,
                {dst.addr_, uint32_t(burst * blocks)}, {src.addr_, uint32_t(burst * blocks)});
}
}  // namespace detail

// UB -> UB, `count` elements (L1 -> Fixpipe Buffer above).
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
                                SAGE_LOC) {
    sage::sim::touch(loc);
    if (sage::sim::mem_at(dst.addr_) == sage::sim::Mem::FB && sage::sim::mem_at(src.addr_) == sage::sim::Mem::L1)
        return detail::l1_to_fixpipe_buffer(dst, src, 1, uint64_t(count) * sizeof(T) / 32 * 32, 0, 0, loc);
    uint64_t bytes = detail::whole_blocks<T>(count, "UB->UB", loc);
    dst.check("DataCopy", bytes / sizeof(T), loc);
    src.check("DataCopy", bytes / sizeof(T), loc);
    sage::sim::ub_check_init(src.range(bytes / sizeof(T)), "DataCopy", loc);
    memmove(dst.data(), src.data(), bytes);
    sage::sim::ub_mark(dst.range(bytes / sizeof(T)));
    sage::sim::trace_instr(detail::Pipe::V, "DataCopy", sage::sim::dtype_name<T>(), count, bytes, loc,
                           dst.range(bytes / sizeof(T)), src.range(bytes / sizeof(T)));
}

// Strided forms: blockCount bursts of blockLen 32-byte blocks, gaps of srcStride/dstStride
// blocks between bursts.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                const DataCopyParams& p, SAGE_LOC) {
    sage::sim::touch(loc);
    uint64_t burst = uint64_t(p.blockLen) * 32;
    uint64_t ub_span = p.blockCount ? (p.blockCount - 1) * (burst + p.dstStride * 32ull) + burst : 0;
    dst.check("DataCopy", ub_span / sizeof(T), loc);
    for (uint16_t i = 0; i < p.blockCount; ++i) {
        detail::gm_to_ub(dst, src, i * (burst + p.srcStride * 32ull), burst,
                         uint32_t(i * (burst + p.dstStride * 32ull)), "DataCopy", loc);
    }
    sage::sim::trace_instr(detail::Pipe::MTE2, "DataCopy", sage::sim::dtype_name<T>(),
                           uint32_t(burst * p.blockCount / sizeof(T)), burst * p.blockCount, loc,
                           dst.range(ub_span / sizeof(T)));
    sage::sim::trace_gm_shape(src.addr_, p.blockCount, uint32_t(burst), p.srcStride * 32u);
}

template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                const DataCopyParams& p, SAGE_LOC) {
    sage::sim::touch(loc);
    uint64_t burst = uint64_t(p.blockLen) * 32;
    uint64_t ub_span = p.blockCount ? (p.blockCount - 1) * (burst + p.srcStride * 32ull) + burst : 0;
    src.check("DataCopy", ub_span / sizeof(T), loc);
    for (uint16_t i = 0; i < p.blockCount; ++i) {
        detail::ub_to_gm(dst, src, i * (burst + p.dstStride * 32ull), burst,
                         uint32_t(i * (burst + p.srcStride * 32ull)), "DataCopy", loc);
    }
    sage::sim::trace_instr(detail::Pipe::MTE3, "DataCopy", sage::sim::dtype_name<T>(),
                           uint32_t(burst * p.blockCount / sizeof(T)), burst * p.blockCount, loc, {},
                           src.range(ub_span / sizeof(T)));
    sage::sim::trace_gm_shape(dst.addr_, p.blockCount, uint32_t(burst), p.dstStride * 32u);
}

namespace detail {
// L1 (C1) -> BiasTable (C2) on the MTE1 pipe: on the 910B its blockLen counts 64-byte blocks
// (the DataCopy L1ToBiasTable doc page; the mmad sample copies biasSizeAlign / 64), the strides
// 32-byte blocks.
template <typename T>
inline void l1_to_bias_table(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                             SrcLoc loc) {
    uint64_t burst = uint64_t(p.blockLen) * 64;
    for (uint16_t i = 0; i < p.blockCount; ++i) {
        LocalTensor<T> d = dst, s = src;
        d.addr_ += uint32_t(i * (burst + p.dstStride * 32ull));
        s.addr_ += uint32_t(i * (burst + p.srcStride * 32ull));
        d.check("DataCopy", burst / sizeof(T), loc, false);
        s.check("DataCopy", burst / sizeof(T), loc);
        // no unwritten-read check: kernels pad the bias to 64 bytes past what they loaded
        memmove(d.data(), s.data(), burst);
        sage::sim::ub_mark(d.range(burst / sizeof(T)));
    }
    sage::sim::trace_instr(Pipe::MTE1, "DataCopy", sage::sim::dtype_name<T>(),
                           uint32_t(burst * p.blockCount / sizeof(T)), burst * p.blockCount, loc,
                           {dst.addr_, uint32_t(burst * p.blockCount)}, {src.addr_, uint32_t(burst * p.blockCount)});
}
}  // namespace detail

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                                SAGE_LOC) {
    sage::sim::touch(loc);
    if (sage::sim::mem_at(dst.addr_) == sage::sim::Mem::BT && sage::sim::mem_at(src.addr_) == sage::sim::Mem::L1)
        return detail::l1_to_bias_table(dst, src, p, loc);
    if (sage::sim::mem_at(dst.addr_) == sage::sim::Mem::FB && sage::sim::mem_at(src.addr_) == sage::sim::Mem::L1)
        return detail::l1_to_fixpipe_buffer(dst, src, p.blockCount, p.blockLen * 128ull,
                                            p.blockCount > 1 ? p.srcStride * 32ull : 0,
                                            p.blockCount > 1 ? p.dstStride * 128ull : 0, loc);
    uint64_t burst = uint64_t(p.blockLen) * 32;
    for (uint16_t i = 0; i < p.blockCount; ++i) {
        LocalTensor<T> d = dst, s = src;
        d.addr_ += uint32_t(i * (burst + p.dstStride * 32ull));
        s.addr_ += uint32_t(i * (burst + p.srcStride * 32ull));
        d.check("DataCopy", burst / sizeof(T), loc);
        s.check("DataCopy", burst / sizeof(T), loc);
        sage::sim::ub_check_init(s.range(burst / sizeof(T)), "DataCopy", loc);
        memmove(d.data(), s.data(), burst);
        sage::sim::ub_mark(d.range(burst / sizeof(T)));
    }
    sage::sim::trace_instr(detail::Pipe::V, "DataCopy", sage::sim::dtype_name<T>(),
                           uint32_t(burst * p.blockCount / sizeof(T)), burst * p.blockCount, loc);
}

// DataCopyPad's pad register, as the device keeps it: SetPadValue writes it, and so does every
// DataCopyPad with isPad (CANN calls set_mov_pad_val(paddingValue) only when isPad is true).
// The copy itself always takes its left/right padding from the register, so isPad = false
// pads with the last SetPadValue (or the last isPad copy's value); the register holds the
// value's bits and a copy reads the low sizeof(T) bytes.
namespace detail {
template <typename T>
inline void set_pad_register(T value) {
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    sage::sim::blk().pad_bits = bits;
    sage::sim::blk().pad_set = true;
}
template <typename T>
inline T pad_register() {
    T v;
    uint64_t bits = sage::sim::blk().pad_bits;
    memcpy(&v, &bits, sizeof(T));
    return v;
}
}  // namespace detail

template <typename T, TPosition pos = TPosition::MAX>
__aicore__ inline void SetPadValue(T paddingValue, SAGE_LOC) {
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::MAX,
                  "SetPadValue: the pad value applies to GM->VECIN/VECOUT copies; pos must be VECIN, VECOUT or "
                  "MAX (the default)");
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "[dtype-unsupported] SetPadValue takes a 1, 2 or 4-byte type, the element type of the "
                  "DataCopyPad it prepares");
    sage::sim::touch(loc);
    detail::set_pad_register(paddingValue);
}

// DataCopyPad GM -> UB: blockCount bursts of blockLen bytes; each burst lands at a 32-byte
// boundary in UB, after leftPadding elements and before rightPadding ones, and the unit writes
// whole 32-byte blocks. With left/right padding, the padding and the alignment fill after it
// hold the pad register's value (paddingValue with isPad, else the last SetPadValue); a kernel
// that never set the register gets undefined padding, left unwritten here so a read of it is
// reported. Without left/right padding, isPad fills the alignment with paddingValue and
// otherwise the fill repeats the burst's first element (the DataCopyPad doc, as summarised in
// research/ascendc-api.md 6.2), so a vector op over the whole last block reads written data.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad, SAGE_LOC) {
    sage::sim::touch(loc);
    if (pad.isPad) detail::set_pad_register(pad.paddingValue);
    uint64_t data_at = pad.leftPadding * sizeof(T);
    uint64_t ub_burst = (uint64_t(p.blockLen) + data_at + pad.rightPadding * sizeof(T) + 31) / 32 * 32;
    uint64_t ub_step = ub_burst + uint64_t(p.dstStride) * 32;
    uint64_t ub_span = p.blockCount ? (p.blockCount - 1) * ub_step + ub_burst : 0;
    dst.check("DataCopyPad", ub_span / sizeof(T), loc);
    bool padded = pad.leftPadding || pad.rightPadding;
    bool fill_pad = pad.isPad || (padded && sage::sim::blk().pad_set);
    bool fill_first = !fill_pad && !padded && p.blockLen >= sizeof(T);
    const T pad_value = detail::pad_register<T>();
    for (uint16_t i = 0; i < p.blockCount; ++i) {
        uint32_t at = uint32_t(i * ub_step);
        T* row = reinterpret_cast<T*>(sage::sim::blk().ub + dst.addr_ + at);
        if (fill_pad) {
            for (uint64_t k = 0; k < ub_burst / sizeof(T); ++k) row[k] = pad_value;
            sage::sim::ub_mark({dst.addr_ + at, uint32_t(ub_burst)});
        }
        detail::gm_to_ub(dst, src, i * (uint64_t(p.blockLen) + p.srcStride), p.blockLen,
                         at + uint32_t(data_at), "DataCopyPad", loc);
        if (fill_first && ub_burst > p.blockLen) {
            for (uint64_t k = (p.blockLen + sizeof(T) - 1) / sizeof(T); k < ub_burst / sizeof(T); ++k) row[k] = row[0];
            sage::sim::ub_mark({dst.addr_ + at + p.blockLen, uint32_t(ub_burst - p.blockLen)});
        }
    }
    sage::sim::trace_instr(detail::Pipe::MTE2, "DataCopyPad", sage::sim::dtype_name<T>(),
                           uint32_t(uint64_t(p.blockLen) * p.blockCount / sizeof(T)),
                           uint64_t(p.blockLen) * p.blockCount, loc, dst.range(ub_span / sizeof(T)));
    sage::sim::trace_gm_shape(src.addr_, p.blockCount, p.blockLen, p.srcStride);
}

// DataCopyPad UB -> GM: blockCount bursts of blockLen bytes from 32-byte aligned UB rows.
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& p, SAGE_LOC) {
    sage::sim::touch(loc);
    uint64_t ub_step = (uint64_t(p.blockLen) + 31) / 32 * 32 + uint64_t(p.srcStride) * 32;
    uint64_t ub_span = p.blockCount ? (p.blockCount - 1) * ub_step + p.blockLen : 0;
    src.check("DataCopyPad", (ub_span + sizeof(T) - 1) / sizeof(T), loc);
    for (uint16_t i = 0; i < p.blockCount; ++i) {
        detail::ub_to_gm(dst, src, i * (uint64_t(p.blockLen) + p.dstStride), p.blockLen, uint32_t(i * ub_step),
                         "DataCopyPad", loc);
    }
    sage::sim::trace_instr(detail::Pipe::MTE3, "DataCopyPad", sage::sim::dtype_name<T>(),
                           uint32_t(uint64_t(p.blockLen) * p.blockCount / sizeof(T)),
                           uint64_t(p.blockLen) * p.blockCount, loc, {}, src.range(ub_span / sizeof(T)));
    sage::sim::trace_gm_shape(dst.addr_, p.blockCount, p.blockLen, p.dstStride);
}

// The CANN 8 spellings with DataCopyParams (blockLen in bytes for DataCopyPad).
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                                   const DataCopyPadParams& pad, SAGE_LOC) {
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
                DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, T(pad.paddingValue)), loc);
}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                                   SAGE_LOC) {
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0), loc);
}

// ---- Copy: UB -> UB on the vector pipe, the mask/repeat forms ----
// Per repeat r and active element k (block k / elements-per-block of the repeat):
//   dst[(r * dstRepeatSize + block * dstStride) * epb + k % epb] = src[(r * srcRepeatSize + block * srcStride) * epb + ...]
// with epb the elements of a 32-byte block. In Normal mode the mask selects elements of each
// 256-byte repeat, as for the vector ops. In Counter mode (SetMaskCount) Copy differs from
// the other ops: the mask is the element count of *each* repeat (which may span more than 8
// blocks) and repeatTime applies (Copy's doc page, "Counter mode with high-dimensional
// splitting"). repeatTime 0 is a no-op on 910B. Values are moved bit for bit.
namespace detail {

constexpr uint32_t kCopyMaxRepeatSize = 4095;

template <typename T>
__aicore__ inline void copy_repeats(const LocalTensor<T>& dst, const LocalTensor<T>& src, const sage::sim::Repeats& m,
                                    sage::sim::Lay ld, sage::sim::Lay ls, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    uint64_t es = masked_check(src, m, ls, "Copy", loc, "src");
    uint64_t ed = masked_check(dst, m, ld, "Copy", loc, "dst");
    masked_check_init(src, m, ls, "Copy", loc);
    T* d = dst.data();
    const T* s = src.data();
    m.each([&](uint32_t r, uint32_t k) { d[ld.off(r, k)] = s[ls.off(r, k)]; });
    masked_mark(dst, m, ld);
    masked_trace(dst, ed, "Copy", m, loc, src.range(es));
}

__aicore__ inline void copy_params_check(const CopyRepeatParams& p, sage::sim::SrcLoc loc) {
    if (p.dstRepeatSize > kCopyMaxRepeatSize || p.srcRepeatSize > kCopyMaxRepeatSize) {
        sage::sim::fail("ub-out-of-bounds", loc,
                        "Copy with dstRepeatSize %u / srcRepeatSize %u: repeat strides are limited to [0, %u] "
                        "blocks of 32 bytes (CopyRepeatParams)",
                        p.dstRepeatSize, p.srcRepeatSize, kCopyMaxRepeatSize);
    }
}

// Counter mode: `per` elements in each of `repeat` repeats. A repeat's elements run on over
// its blocks, so it is one counter-mode pass whose 256-byte steps advance 8 block strides.
template <typename T>
__aicore__ inline void copy_counter(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t per,
                                    uint32_t repeat, const CopyRepeatParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr uint32_t epr = elems_per_repeat<T>();
    constexpr uint32_t epb = 32 / sizeof(T);
    Repeats m;
    m.epr = epr;
    m.counter = true;
    m.count = per;
    m.repeats = uint32_t((per + epr - 1) / epr);
    for (uint32_t r = 0; r < repeat; ++r) {
        copy_repeats(dst[uint32_t(uint64_t(r) * p.dstRepeatSize * epb)], src[uint32_t(uint64_t(r) * p.srcRepeatSize * epb)],
                     m, lay<T>(p.dstStride, 8u * p.dstStride), lay<T>(p.srcStride, 8u * p.srcStride), loc);
    }
}

// Both mask forms: Counter mode takes `counted` elements per repeat; Normal mode the repeats
// `normal()` makes from the mask (the forms differ only there).
template <typename T, class Normal>
__aicore__ inline void copy_forms(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t counted,
                                  uint8_t repeatTime, const CopyRepeatParams& p, sage::sim::SrcLoc loc, Normal normal) {
    using namespace sage::sim;
    touch(loc);
    copy_params_check(p, loc);
    if (vregs().counter) {
        copy_counter(dst, src, counted, repeatTime, p, loc);
        return;
    }
    copy_repeats(dst, src, normal(), lay<T>(p.dstStride, p.dstRepeatSize), lay<T>(p.srcStride, p.srcRepeatSize), loc);
}

}  // namespace detail

#define SAGE_COPY_OK (::sage::sim::one_of<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>())
#define SAGE_COPY_TYPES "int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float"

template <typename T, bool isSetMask = true>
__aicore__ inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                            const uint8_t repeatTime, const CopyRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_DTYPE_GATE("Copy", T, SAGE_COPY_OK, SAGE_COPY_TYPES)
    if constexpr (SAGE_COPY_OK) {
        using namespace sage::sim;
        detail::copy_forms(dst, src, isSetMask ? mask[0] : vregs().mask_lo, repeatTime, repeatParams, loc, [&] {
            return repeats_from_array(elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        });
    }
}

template <typename T, bool isSetMask = true>
__aicore__ inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask,
                            const uint8_t repeatTime, const CopyRepeatParams& repeatParams, SAGE_LOC) {
    SAGE_DTYPE_GATE("Copy", T, SAGE_COPY_OK, SAGE_COPY_TYPES)
    if constexpr (SAGE_COPY_OK) {
        using namespace sage::sim;
        detail::copy_forms(dst, src, isSetMask ? mask : vregs().mask_lo, repeatTime, repeatParams, loc, [&] {
            return repeats_from_len(elems_per_repeat<T>(), isSetMask, mask, repeatTime);
        });
    }
}

#undef SAGE_COPY_OK
#undef SAGE_COPY_TYPES

// ---------------------------------------------------------------- DataCopy with SliceInfo

// One dimension of a slice copy: elements startIndex..endIndex (inclusive) of a dimension of
// shapeValue elements, taken in pieces of burstLen 32-byte blocks (dimension 0; 1 row above it)
// with `stride` elements skipped between pieces.
struct SliceInfo {
    __aicore__ SliceInfo() {}
    __aicore__ SliceInfo(const uint32_t startIndexIn, const uint32_t endIndexIn, const uint32_t strideIn,
                         const uint32_t burstLenIn, const uint32_t shapeValueIn = 0)
        : startIndex(startIndexIn), endIndex(endIndexIn), stride(strideIn), burstLen(burstLenIn),
          shapeValue(shapeValueIn) {}
    uint32_t startIndex = 0;
    uint32_t endIndex = 32 - 1;
    uint32_t stride = 0;
    uint32_t burstLen = 32;
    uint32_t shapeValue = 0;
};
constexpr int32_t K_MAX_DIM = 8;

namespace detail {

// The doc page's constraints on one side's SliceInfo list.
template <typename T>
inline void slice_check(const SliceInfo* si, const SliceInfo* other, uint32_t dims, const char* side, SrcLoc loc) {
    using sage::sim::fail;
    const char* api = "DataCopy with SliceInfo";
    for (uint32_t d = 0; d < dims; ++d) {
        const SliceInfo& s = si[d];
        if (s.shapeValue == 0)
            fail("api-misuse", loc, "%s: %s[%u].shapeValue is 0; the emulator's tensors carry no ShapeInfo, so give "
                 "each dimension's length in shapeValue", api, side, d);
        if (!(s.startIndex < s.endIndex && s.endIndex <= s.shapeValue))
            fail("api-misuse", loc, "%s: %s[%u] = {start %u, end %u, shape %u} breaks startIndex < endIndex <= "
                 "shapeValue", api, side, d, s.startIndex, s.endIndex, s.shapeValue);
        if (d > 0 && s.burstLen != 1)
            fail("api-misuse", loc, "%s: %s[%u].burstLen is %u; above dimension 0 it must be 1 (one row)", api, side,
                 d, s.burstLen);
        if (s.burstLen != other[d].burstLen)
            fail("api-misuse", loc, "%s: dstSliceInfo[%u].burstLen and srcSliceInfo[%u].burstLen differ (%u, %u); "
                 "they must be equal", api, d, d, s.burstLen, other[d].burstLen);
        uint64_t piece = d == 0 ? uint64_t(s.burstLen) * 32 / sizeof(T) : 1;
        uint64_t span = uint64_t(s.endIndex) - s.startIndex + 1 + s.stride;
        if (piece == 0 || span % (piece + s.stride) != 0)
            fail("api-misuse", loc, "%s: %s[%u] = {start %u, end %u, stride %u, burstLen %u}: endIndex - startIndex "
                 "+ 1 must be (N-1)*stride + N*%llu for a whole N (pieces of %llu elements)", api, side, d,
                 s.startIndex, s.endIndex, s.stride, s.burstLen, (unsigned long long)piece, (unsigned long long)piece);
    }
}

// Element offsets of the first piece of every row group, as the device lists them (dimension 1
// fastest), from the first selected element.
inline std::vector<uint64_t> slice_rows(const SliceInfo* si, uint32_t dims, uint64_t* start) {
    std::vector<uint64_t> rows{0};
    uint64_t size = 1;
    *start = si[0].startIndex;
    for (uint32_t d = 1; d < dims; ++d) {
        size *= si[d - 1].shapeValue;
        *start += size * si[d].startIndex;
        uint64_t count = (uint64_t(si[d].endIndex) - si[d].startIndex + 1 + si[d].stride) / (1 + si[d].stride);
        size_t before = rows.size();
        for (uint64_t it = 1; it < count; ++it)
            for (size_t k = 0; k < before; ++k) rows.push_back(rows[k] + it * (1 + si[d].stride) * size);
    }
    return rows;
}

// The pieces of a slice copy: (GM element offset, UB element offset) of each, and the piece
// length in elements. Strides on the UB side count whole 32-byte blocks (the device truncates).
template <typename T>
inline std::vector<std::pair<uint64_t, uint64_t>> slice_pieces(const SliceInfo* gm, const SliceInfo* ub,
                                                               const SliceInfo* src, uint32_t dims,
                                                               uint64_t* piece, SrcLoc loc) {
    constexpr uint64_t c0 = 32 / sizeof(T);
    *piece = uint64_t(src[0].burstLen) * c0;
    uint64_t count = (uint64_t(src[0].endIndex) - src[0].startIndex + 1 + src[0].stride) / (*piece + src[0].stride);
    uint64_t gm_start = 0, ub_start = 0;
    std::vector<uint64_t> gm_rows = slice_rows(gm, dims, &gm_start), ub_rows = slice_rows(ub, dims, &ub_start);
    const std::vector<uint64_t>& src_rows = src == gm ? gm_rows : ub_rows;
    if ((src == gm ? ub_rows : gm_rows).size() < src_rows.size())
        sage::sim::fail("api-misuse", loc, "DataCopy with SliceInfo: the source selects %zu row groups but the "
                        "destination only %zu; select as many on both sides", src_rows.size(),
                        (src == gm ? ub_rows : gm_rows).size());
    uint64_t gm_step = *piece + gm[0].stride, ub_step = *piece + ub[0].stride * sizeof(T) / 32 * c0;
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (size_t r = 0; r < src_rows.size(); ++r)
        for (uint64_t i = 0; i < count; ++i)
            out.emplace_back(gm_start + gm_rows[r] + i * gm_step, ub_start + ub_rows[r] + i * ub_step);
    return out;
}

template <typename T>
inline void slice_dims(uint32_t dims, SrcLoc loc) {
    if (dims < 1 || dims > uint32_t(K_MAX_DIM))
        sage::sim::fail("api-misuse", loc, "DataCopy with SliceInfo: dimValue %u; it must be 1..8", dims);
}

}  // namespace detail

// GM -> UB: the slices srcSliceInfo selects, into the places dstSliceInfo selects.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const SliceInfo dstSliceInfo[],
                                const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, SAGE_LOC) {
    sage::sim::touch(loc);
    detail::slice_dims<T>(dimValue, loc);
    detail::slice_check<T>(srcSliceInfo, dstSliceInfo, dimValue, "srcSliceInfo", loc);
    detail::slice_check<T>(dstSliceInfo, srcSliceInfo, dimValue, "dstSliceInfo", loc);
    uint64_t piece = 0;
    auto pieces = detail::slice_pieces<T>(srcSliceInfo, dstSliceInfo, srcSliceInfo, dimValue, &piece, loc);
    uint64_t end = 0;
    for (auto& p : pieces) end = std::max(end, p.second + piece);
    dst.check("DataCopy", end, loc);
    for (auto& p : pieces)
        detail::gm_to_ub(dst, src, p.first * sizeof(T), piece * sizeof(T), uint32_t(p.second * sizeof(T)),
                         "DataCopy", loc);
    sage::sim::trace_instr(detail::Pipe::MTE2, "DataCopy", sage::sim::dtype_name<T>(),
                           uint32_t(piece * pieces.size()), piece * pieces.size() * sizeof(T), loc, dst.range(end));
    sage::sim::trace_gm_shape(src.addr_ + (pieces.empty() ? 0 : pieces[0].first), uint32_t(pieces.size()));
}

// UB -> GM: the slices srcSliceInfo selects in UB, to the places dstSliceInfo selects in GM.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const SliceInfo dstSliceInfo[],
                                const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, SAGE_LOC) {
    sage::sim::touch(loc);
    detail::slice_dims<T>(dimValue, loc);
    detail::slice_check<T>(srcSliceInfo, dstSliceInfo, dimValue, "srcSliceInfo", loc);
    detail::slice_check<T>(dstSliceInfo, srcSliceInfo, dimValue, "dstSliceInfo", loc);
    uint64_t piece = 0;
    auto pieces = detail::slice_pieces<T>(dstSliceInfo, srcSliceInfo, srcSliceInfo, dimValue, &piece, loc);
    uint64_t end = 0;
    for (auto& p : pieces) end = std::max(end, p.second + piece);
    src.check("DataCopy", end, loc);
    for (auto& p : pieces)
        detail::ub_to_gm(dst, src, p.first * sizeof(T), piece * sizeof(T), uint32_t(p.second * sizeof(T)),
                         "DataCopy", loc);
    sage::sim::trace_instr(detail::Pipe::MTE3, "DataCopy", sage::sim::dtype_name<T>(),
                           uint32_t(piece * pieces.size()), piece * pieces.size() * sizeof(T), loc, {}, src.range(end));
    sage::sim::trace_gm_shape(dst.addr_ + (pieces.empty() ? 0 : pieces[0].first), uint32_t(pieces.size()));
}

// ---------------------------------------------------------------- GM -> L1 with ND -> NZ

// The parameters of a GM -> L1 copy that turns ND rows into NZ fractals (kernel_struct_data_copy.h).
struct Nd2NzParams {
    __aicore__ Nd2NzParams() {}
    __aicore__ Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                           const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn,
                           const uint16_t dstNzC0StrideIn, const uint16_t dstNzNStrideIn,
                           const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

// GM (ND) -> L1 (NZ, A1/B1/C1): ndNum matrices of nValue rows x dValue elements, each row cut
// into 32-byte C0 blocks placed dstNzC0Stride blocks apart, rows dstNzNStride blocks apart; a
// short last block is zero-filled (the doc page "DataCopy（GMToL1随路转换-ND2NZ搬运）").
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& intriParams,
                                SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const Nd2NzParams& p = intriParams;
    dst.check("DataCopy", 0, loc);
    if (mem_at(dst.addr_) != Mem::L1) {
        fail("api-misuse", loc,
             "DataCopy with Nd2NzParams into the %s, in block %d: the ND -> NZ copy writes the L1 Buffer (TPosition "
             "A1/B1/C1) on %s",
             mem_name(mem_at(dst.addr_)), blk().idx, chip_name());
    }
    if (p.ndNum > 4095 || p.nValue > 16384 || p.srcDValue == 0 || p.dstNzC0Stride == 0 || p.dstNzNStride == 0 ||
        p.dstNzC0Stride > 16384 || p.dstNzNStride > 16384 || p.dstNzMatrixStride > 16384) {
        fail("api-misuse", loc,
             "DataCopy with Nd2NzParams{ndNum %u, nValue %u, dValue %u, srcNdMatrixStride %u, srcDValue %u, "
             "dstNzC0Stride %u, dstNzNStride %u, dstNzMatrixStride %u} out of the documented ranges, in block %d "
             "(ndNum <= 4095, nValue <= 16384, srcDValue >= 1, 1 <= dstNzC0Stride, dstNzNStride <= 16384, "
             "dstNzMatrixStride <= 16384)",
             p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride, p.dstNzNStride,
             p.dstNzMatrixStride, blk().idx);
    }
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) return;  // a NOP, as documented
    constexpr uint32_t c0 = 32 / sizeof(T);
    const uint32_t blocks = (p.dValue + c0 - 1) / c0;
    const uint64_t dst_bytes = uint64_t(p.ndNum - 1) * p.dstNzMatrixStride * sizeof(T) +
                               (uint64_t(blocks - 1) * p.dstNzC0Stride + uint64_t(p.nValue - 1) * p.dstNzNStride + 1) * 32;
    const uint64_t src_elems = uint64_t(p.ndNum - 1) * p.srcNdMatrixStride + uint64_t(p.nValue - 1) * p.srcDValue +
                               p.dValue;
    dst.check("DataCopy", (dst_bytes + sizeof(T) - 1) / sizeof(T), loc);
    // The span's bounds, then each row the copy reads: whether it was written (not the whole span,
    // whose gaps between rows the copy skips: a K slice of a wide matrix reads a small part of it)
    // and, in a mixed launch, whether another core's store to it is ordered before this read.
    const uint64_t readable = sage::sim::nd2nz_src_bounds(src.addr_, src.gm_, src_elems, sizeof(T), p.ndNum,
                                                          p.srcNdMatrixStride, p.dValue, loc);
    GmBuffer* b = gm_bounds(src.addr_, 0, loc, false, "DataCopy", sizeof(T), src.gm_);
    for (uint32_t nd = 0; (b->written || gm_order().active) && nd < p.ndNum; ++nd)
        for (uint32_t r = 0; r < p.nValue; ++r) {
            const uint64_t at = (uint64_t(nd) * p.srcNdMatrixStride + uint64_t(r) * p.srcDValue) * sizeof(T);
            if (at >= readable) continue;  // a ragged tail's row past the end (warned about above)
            const uint64_t n = std::min<uint64_t>(uint64_t(p.dValue) * sizeof(T), readable - at);
            auto* row = reinterpret_cast<const uint8_t*>(src.addr_) + at;
            if (b->written) gm_check_written(b, row, n, loc, "DataCopy", sizeof(T));
            gm_order_read(b, row, n, loc, "DataCopy", sizeof(T));
        }
    Nd2Nz shape{uint32_t(sizeof(T)), p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue,
                p.dstNzC0Stride, p.dstNzNStride, p.dstNzMatrixStride, readable};
    cube_nd2nz(blk().ub, blk().ub_init, dst.addr_, reinterpret_cast<const uint8_t*>(src.addr_), shape);
    trace_instr(Pipe::MTE2, "DataCopy", dtype_name<T>(), uint32_t(p.ndNum) * p.nValue * p.dValue,
                uint64_t(p.ndNum) * p.nValue * blocks * 32, loc, {dst.addr_, uint32_t(dst_bytes)});
    // The GM span, for the L2 model and the per-burst stride cost: one burst a row, rows srcDValue
    // apart; the matrices must continue that stride (ndNum 1, or matrices nValue rows apart) for the
    // span to be one regular pattern, else only the address is recorded (tracked whole).
    const uint32_t rows = uint32_t(p.ndNum) * p.nValue;
    const bool regular = p.srcDValue >= p.dValue &&
                         (p.ndNum == 1 || uint32_t(p.srcNdMatrixStride) == uint32_t(p.nValue) * p.srcDValue);
    if (regular)
        trace_gm_shape(src.addr_, rows, uint32_t(p.dValue) * sizeof(T), uint32_t(p.srcDValue - p.dValue) * sizeof(T));
    else
        trace_gm_shape(src.addr_, rows);
}

}  // namespace AscendC
