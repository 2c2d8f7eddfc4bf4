// Fixpipe on the 910B: L0C (NZ) -> GM or L1 through the FIX pipe, with the NZ -> ND conversion
// (CFG_ROW_MAJOR, the default) or NZ kept (CFG_NZ), ReLU and the quantisation modes (QuantMode_t,
// scalar and per-column), as FixpipeParamsV220 describes them (asc-devkit kernel_struct_fixpipe.h and the
// Fixpipe doc pages). The conversion runs in sage_sim/cube.h (optimised, prebuilt).
#pragma once

#include <cstring>
#include <utility>
#include <vector>

#include "../sage_sim/cube.h"
#include "kernel_operator_mm_intf.h"
#include "kernel_tensor.h"

// The device compiler's quantisation modes (a built-in there, so unqualified and global).
enum QuantMode_t {
    NoQuant,       // no conversion: float -> float, int32_t -> int32_t
    F322F16,       // float -> half, round to nearest even
    F322BF16,      // float -> bfloat16_t, round to nearest even
    DEQF16,        // int32_t -> half, times a scalar scale
    VDEQF16,       // int32_t -> half, per-column scales
    QF322B8_PRE,   // float -> int8_t/uint8_t, times a scalar scale
    VQF322B8_PRE,  // float -> int8_t/uint8_t, per-column scales
    REQ8,          // int32_t -> int8_t/uint8_t, times a scalar scale
    VREQ8,         // int32_t -> int8_t/uint8_t, per-column scales
};

namespace AscendC {

enum class CO2Layout : uint8_t {
    NZ = 0,
    ROW_MAJOR,     // ND rows
    COLUMN_MAJOR,  // ND columns (Ascend 950 only)
};
struct FixpipeConfig {
    CO2Layout format;
    __aicore__ constexpr inline FixpipeConfig(CO2Layout format_) : format(format_) {}
    __aicore__ constexpr inline FixpipeConfig(CO2Layout format_, bool) : format(format_) {}
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
    __aicore__ FixpipeParamsV220() {}
    __aicore__ FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                 const uint32_t dstStrideIn, const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    __aicore__ FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                 const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                                 const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                                 const uint16_t dstNdStrideIn, const uint8_t unitFlagIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(uint64_t(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn),
          reluEn(reluEnIn), unitFlag(unitFlagIn) {}
    __aicore__ FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                 const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                                 const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                                 const uint16_t dstNdStrideIn, const uint8_t unitFlagIn, const bool isChannelSplitIn)
        : FixpipeParamsV220(nSizeIn, mSizeIn, srcStrideIn, dstStrideIn, reluEnIn, quantPreIn, deqScalarIn, ndNumIn,
                            srcNdStrideIn, dstNdStrideIn, unitFlagIn) {
        isChannelSplit = isChannelSplitIn;
    }
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;  // C0 units (16 elements) between the starts of adjacent n-blocks in L0C
    uint32_t dstStride = 0;  // ND: elements per output row; NZ: 32-byte blocks between n-blocks
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;  // fractals (16 x 16 elements) between adjacent source matrices
    uint16_t dstNdStride = 0;  // elements between adjacent output matrices
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};
using FixpipeParamsM300 = FixpipeParamsV220;
using FixpipeParamsM310 = FixpipeParamsV220;

namespace detail {

// A per-column (V) mode reads one quantisation word a column; its scalar counterpart one word.
constexpr bool per_column(QuantMode_t q) { return q == VDEQF16 || q == VQF322B8_PRE || q == VREQ8; }
constexpr QuantMode_t vector_mode(QuantMode_t q) {
    return q == DEQF16 ? VDEQF16 : q == QF322B8_PRE ? VQF322B8_PRE : q == REQ8 ? VREQ8 : q;
}
constexpr QuantMode_t scalar_mode(QuantMode_t q) {
    return q == VDEQF16 ? DEQF16 : q == VQF322B8_PRE ? QF322B8_PRE : q == VREQ8 ? REQ8 : q;
}

// The conversion a QuantMode_t names for L0C type U into T (a V mode as its scalar form); fails
// for a pair the doc page does not list.
template <typename T, typename U>
inline sage::sim::FixQuant fix_quant(const FixpipeParamsV220& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr bool f = std::is_same_v<U, float>, i = std::is_same_v<U, int32_t>;
    constexpr bool b8 = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
    const QuantMode_t q = scalar_mode(p.quantPre);
    if (q == NoQuant && std::is_same_v<T, U> && (f || i)) return FixQuant::None;
    if (q == F322F16 && f && std::is_same_v<T, half>) return FixQuant::F322F16;
    if (q == F322BF16 && f && std::is_same_v<T, bfloat16_t>) return FixQuant::F322BF16;
    if (q == DEQF16 && i && std::is_same_v<T, half>) return FixQuant::DEQF16;
    if (q == QF322B8_PRE && f && b8) return FixQuant::QF322B8;
    if (q == REQ8 && i && b8) return FixQuant::REQ8;
    fail("api-misuse", loc,
         "Fixpipe from %s in L0C to %s with quantPre %d, in block %d: the mode must match the types (float -> "
         "float or int32_t -> int32_t: NoQuant; float -> half: F322F16; float -> bfloat16_t: F322BF16; int32_t -> "
         "half: (V)DEQF16; float -> int8_t/uint8_t: (V)QF322B8_PRE; int32_t -> int8_t/uint8_t: (V)REQ8); the "
         "hardware does not pick it from the types",
         dtype_name<U>(), dtype_name<T>(), int(p.quantPre), blk().idx);
}

// The per-column words a V mode reads: `vec` (cbufWorkspace's L1 address) or, without it, the
// Fixpipe Buffer address SetFixPipeConfig set. Each of the nSize words must be there and written;
// a B8 word whose sign bit (46) disagrees with T makes the device saturate to the other range.
template <typename T>
inline int64_t fix_quant_words(const FixpipeParamsV220& p, int64_t vec, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (!per_column(p.quantPre)) return -1;
    if (vec < 0) vec = blk().fix_quant_vec;
    if (vec < 0) {
        fail("api-misuse", loc,
             "Fixpipe with the per-column quantPre %d and no quantisation words, in block %d: pass them as "
             "cbufWorkspace (a uint64_t C1 tensor) or load them into the Fixpipe Buffer and call SetFixPipeConfig",
             int(p.quantPre), blk().idx);
    }
    const Mem mem = mem_at(uint32_t(vec));
    const uint64_t end = uint64_t(vec) + uint64_t(p.nSize) * 8;
    if (end > mem_base(mem) + mem_bytes(mem)) {
        fail("ub-out-of-bounds", loc,
             "Fixpipe reads %u quantisation words (one per column) from %s byte %llu, past its %u bytes, in block "
             "%d: the %s holds %u words; split N across Fixpipes",
             unsigned(p.nSize), mem_name(mem), (unsigned long long)(vec - mem_base(mem)), mem_bytes(mem), blk().idx,
             mem_name(mem), mem_bytes(mem) / 8);
    }
    if (!ub_is_init({uint32_t(vec), uint32_t(p.nSize) * 8}) && !already_reported("uninitialized-read", loc)) {
        report("uninitialized-read", Severity::Error, loc,
               "Fixpipe reads %u per-column quantisation words from the %s, some of which nothing wrote, in block "
               "%d: copy all nSize words there first", unsigned(p.nSize), mem_name(mem), blk().idx);
    }
    return vec;
}
template <typename T>
inline void fix_check_sign(const sage::sim::FixpipeShape& s, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (s.quant != FixQuant::QF322B8 && s.quant != FixQuant::REQ8) return;
    constexpr bool want = std::is_same_v<T, int8_t>;
    for (uint32_t j = 0; j < (s.vec >= 0 ? s.nSize : 1u); ++j) {
        uint64_t word = s.word;
        if (s.vec >= 0) memcpy(&word, blk().ub + s.vec + uint64_t(j) * 8, 8);
        if (quant_signed(word) == want || already_reported("api-misuse", loc)) continue;
        report("api-misuse", Severity::Warning, loc,
               "Fixpipe to %s with a quantisation word whose sign bit (46) is %d%s, in block %d: the device "
               "saturates to %s, not to %s's range. Set bit 46 to %d (the 随路量化 page's table)",
               dtype_name<T>(), int(!want), s.vec >= 0 ? format(" (column %u)", j).c_str() : "", blk().idx,
               want ? "[0, 255]" : "[-128, 127]", dtype_name<T>(), int(want));
        return;
    }
}

// Each n-block's first mSize rows must hold an Mmad's result.
template <typename U>
inline void fix_check_written(const LocalTensor<U>& src, const FixpipeParamsV220& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    for (uint32_t nd = 0; nd < p.ndNum; ++nd) {
        for (uint32_t jb = 0; jb < (p.nSize + 15) / 16u; ++jb) {
            uint64_t off = (uint64_t(nd) * p.srcNdStride * 256 + uint64_t(jb) * p.srcStride * 16) * 4;
            cube_span(src, off + uint64_t(p.mSize) * 64, "Fixpipe", loc);
            UbRange r{uint32_t(src.addr_ + off), uint32_t(p.mSize) * 64};
            if (!ub_is_init(r) && !already_reported("uninitialized-read", loc)) {
                report("uninitialized-read", Severity::Error, loc,
                       "Fixpipe reads L0C rows 0..%u of n-block %u that no Mmad wrote, in block %d: the output "
                       "would be stale data. Run the Mmad that fills them first (and wait for it: SetFlag/WaitFlag "
                       "on HardEvent::M_FIX), or check nSize, mSize and srcStride",
                       unsigned(p.mSize) - 1, jb, blk().idx);
            }
        }
    }
}

// The checks every Fixpipe makes on its L0C source; returns the conversion's shape. `vec` is the
// L1 address of cbufWorkspace's per-column words, -1 without one.
template <typename T, typename U>
inline sage::sim::FixpipeShape fixpipe_source(const LocalTensor<U>& src, const FixpipeParamsV220& p, bool nz,
                                              sage::sim::SrcLoc loc, int64_t vec = -1) {
    using namespace sage::sim;
    cube_operand(src, Mem::L0C, 64, "Fixpipe", "src", "CO1", loc);
    // The page asks for nSize in whole 16-column fractals, yet the official samples write a tail
    // of N columns (nSize 40) to ND and pass on the device: only the range is a fault.
    if (p.nSize > 4095) {
        fail("api-misuse", loc, "Fixpipe with nSize %u, in block %d: FixpipeParamsV220's nSize must be in [0, 4095]",
             unsigned(p.nSize), blk().idx);
    }
    if (p.srcStride < (p.mSize + 15) / 16 * 16 && p.nSize > 16) {
        fail("api-misuse", loc,
             "Fixpipe with srcStride %u for mSize %u, in block %d: srcStride is the distance between adjacent "
             "n-blocks of the L0C matrix in rows of 16 elements, at least mSize rounded up to 16 (%u)",
             unsigned(p.srcStride), unsigned(p.mSize), blk().idx, unsigned((p.mSize + 15) / 16 * 16));
    }
    // NZ output blocks: 32 bytes of int8, 16 elements otherwise; float -> float with isChannelSplit
    // splits them to 8 (the F32 Channel Split page)
    const uint32_t w = sizeof(T) == 1 ? 32 : std::is_same_v<T, float> && p.isChannelSplit ? 8 : 16;
    FixpipeShape s{p.nSize, p.mSize, p.srcStride, p.dstStride, p.ndNum, p.srcNdStride, p.dstNdStride, nz, w,
                   p.reluEn, fix_quant<T, U>(p, loc), p.deqScalar, -1, nullptr, cube_type<U>(), cube_type<T>()};
    if (p.nSize == 0 || p.mSize == 0 || p.ndNum == 0) return s;
    s.vec = fix_quant_words<T>(p, vec, loc);
    fix_check_sign<T>(s, loc);
    fix_check_written(src, p, loc);
    return s;
}

// The L0C bytes a Fixpipe reads, from its source's start.
inline uint32_t fix_src_bytes(const sage::sim::FixpipeShape& s) {
    return uint32_t((uint64_t(s.ndNum - 1) * s.srcNdStride * 256 + uint64_t((s.nSize + 15) / 16 - 1) * s.srcStride * 16 +
                     uint64_t(s.mSize) * 16) * 4);
}
inline uint64_t fix_out_bytes(const sage::sim::FixpipeShape& s) {
    const uint32_t osz = sage::sim::cube_size(s.dst);
    const uint32_t w = s.w;
    if (s.nz) return (uint64_t((s.nSize + w - 1) / w - 1) * s.dstStride * 32 + uint64_t(s.mSize) * w * osz);
    return (uint64_t(s.ndNum - 1) * s.dstNdStride + uint64_t(s.mSize - 1) * s.dstStride + s.nSize) * osz;
}

// The per-column words as they are before the conversion writes anything (none for a scalar mode).
inline std::vector<uint8_t> fix_words(const sage::sim::FixpipeShape& s) {
    if (s.vec < 0) return {};
    const uint8_t* at = sage::sim::blk().ub + s.vec;
    return std::vector<uint8_t>(at, at + uint64_t(s.nSize) * 8);
}

// The GM runs a Fixpipe writes: ND rows (ndNum x mSize runs of nSize elements) or NZ column
// blocks (mSize x w elements each), as (element offset, elements).
inline std::vector<std::pair<uint64_t, uint32_t>> fix_runs(const sage::sim::FixpipeShape& s) {
    std::vector<std::pair<uint64_t, uint32_t>> runs;
    const uint32_t osz = sage::sim::cube_size(s.dst), w = s.w;
    for (uint32_t nd = 0; nd < s.ndNum && !s.nz; ++nd)
        for (uint32_t i = 0; i < s.mSize; ++i) runs.push_back({uint64_t(nd) * s.dstNdStride + uint64_t(i) * s.dstStride, s.nSize});
    for (uint32_t jb = 0; jb < (s.nSize + w - 1) / w && s.nz; ++jb)
        runs.push_back({uint64_t(jb) * s.dstStride * 32 / osz, s.mSize * w});
    return runs;
}

// One element of an atomic write: what GM held (`a`) combined with the value written (`v`), in T
// (an add rounded once to T; integers wrap as the device's adder does).
template <typename T>
inline T atomic_combine(T a, T v, int op) {
    using namespace sage::sim;
    if constexpr (std::is_integral_v<T>) {
        using W = std::make_unsigned_t<T>;
        if (op == AtomicAddOp) return T(W(W(a) + W(v)));
        return op == AtomicMaxOp ? (v > a ? v : a) : (v < a ? v : a);
    } else {
        if (op == AtomicAddOp) return T(float(a) + float(v));
        return op == AtomicMaxOp ? (float(v) > float(a) ? v : a) : (float(v) < float(a) ? v : a);
    }
}

// SetAtomicAdd/Max/Min (or a Matmul's enAtomic) in force: each element the Fixpipe writes combines
// with what GM held; `old` is the span as it was before the conversion wrote its values over it.
// Reading GM no one wrote is the uninitialized-gm-read warning, as for any read (the split-K page:
// clear C before accumulating into it).
template <typename T>
inline void fix_atomic(sage::sim::GmBuffer* b, uint8_t* g, const std::vector<uint8_t>& old,
                       const std::vector<std::pair<uint64_t, uint32_t>>& runs, int op, sage::sim::SrcLoc loc) {
    for (const auto& r : runs) {
        if (b->written)
            sage::sim::gm_check_written(b, g + r.first * sizeof(T), uint64_t(r.second) * sizeof(T), loc,
                                        "Fixpipe (atomic)", sizeof(T));
        for (uint32_t e = 0; e < r.second; ++e) {
            const uint64_t at = (r.first + e) * sizeof(T);
            T a, v;
            memcpy(&a, old.data() + at, sizeof(T));
            memcpy(&v, g + at, sizeof(T));
            a = atomic_combine(a, v, op);
            memcpy(g + at, &a, sizeof(T));
        }
    }
}

// A Fixpipe's GM runs as the trace's span when they are evenly spaced runs of one length (ND rows, or
// NZ column blocks), so the L2 model sees the bytes a later DataCopy reads back; else its address alone.
inline void fix_trace_span(const void* dst, const std::vector<std::pair<uint64_t, uint32_t>>& runs, uint32_t osz) {
    const uint64_t step = runs.size() > 1 ? runs[1].first - runs[0].first : 0;
    bool even = !runs.empty() && (runs.size() == 1 || step >= runs[0].second);
    for (size_t i = 1; even && i < runs.size(); ++i)
        even = runs[i].second == runs[0].second && runs[i].first - runs[i - 1].first == step;
    if (!even) {
        sage::sim::trace_gm_shape(dst, uint32_t(runs.size()));
        return;
    }
    const uint32_t burst = runs[0].second * osz, gap = runs.size() > 1 ? uint32_t(step * osz) - burst : 0;
    sage::sim::trace_gm_shape(static_cast<const uint8_t*>(dst) + runs[0].first * osz, uint32_t(runs.size()), burst,
                              gap);
}

// L0C -> GM; `vec` as fixpipe_source takes it.
template <typename T, typename U>
inline void fixpipe_to_gm(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                          bool nz, int64_t vec, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    FixpipeShape s = fixpipe_source<T>(src, p, nz, loc, vec);
    if (s.nSize == 0 || s.mSize == 0 || s.ndNum == 0) return;
    const std::vector<uint8_t> words = fix_words(s);
    const uint64_t bytes = fix_out_bytes(s);
    uint8_t* g = reinterpret_cast<uint8_t*>(dst.addr_);
    GmBuffer* b = gm_check(g, bytes, loc, true, "Fixpipe", sizeof(T), dst.gm_);
    s.words = words.empty() ? nullptr : words.data();
    const int op = blk().atomic_op;
    // What GM held: an atomic write combines with it; a plain one that leaves a run as it was (two
    // cores writing the same C, as both AIVs of a mixed Matmul kernel may) is duplicated work, not a race.
    const std::vector<uint8_t> old = op || b->tracked ? std::vector<uint8_t>(g, g + bytes) : std::vector<uint8_t>();
    cube_fixpipe(blk().ub, src.addr_, g, s);
    const auto runs = fix_runs(s);
    if (op) {
        constexpr bool ok = std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t> ||
                            std::is_same_v<T, int32_t> || std::is_same_v<T, int8_t>;
        if constexpr (!ok) fail("dtype-unsupported", loc, "Fixpipe under SetAtomicAdd/Max/Min to %s, in block %d: "
                                "atomic writes take float, half, bfloat16_t, int32_t or int8_t", dtype_name<T>(),
                                blk().idx);
        else fix_atomic<T>(b, g, old, runs, op, loc);
    }
    // The writer bookkeeping (races between blocks, a mismatch's line) per written run.
    const uint32_t osz = sizeof(T);
    for (const auto& r : runs) {
        const uint64_t at = r.first * osz, len = uint64_t(r.second) * osz;
        const bool identical = !op && !old.empty() && memcmp(old.data() + at, g + at, len) == 0;
        gm_wrote(b, g + at, len, loc, "Fixpipe", osz, identical);
    }
    const uint64_t moved = uint64_t(s.ndNum) * s.mSize * s.nSize * osz;
    unit_flag(false, p.unitFlag, {src.addr_, fix_src_bytes(s)}, "Fixpipe", loc);
    trace_instr(Pipe::FIX, "Fixpipe", dtype_name<T>(), s.ndNum * s.mSize * s.nSize, moved, loc, {},
                {src.addr_, fix_src_bytes(s)});
    fix_trace_span(dst.addr_, runs, osz);
}

// L0C -> L1 (NZ kept, or ND rows), for a result the cube reads again.
template <typename T, typename U>
inline void fixpipe_to_l1(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                          bool nz, int64_t vec, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    cube_operand(dst, Mem::L1, 32, "Fixpipe", "dst", "A1/B1/C1", loc);
    FixpipeShape s = fixpipe_source<T>(src, p, nz, loc, vec);
    if (s.nSize == 0 || s.mSize == 0 || s.ndNum == 0) return;
    const std::vector<uint8_t> words = fix_words(s);
    const uint64_t bytes = fix_out_bytes(s);
    cube_span(dst, bytes, "Fixpipe", loc);
    s.words = words.empty() ? nullptr : words.data();
    cube_fixpipe(blk().ub, src.addr_, blk().ub + dst.addr_, s);
    UbRange w{dst.addr_, uint32_t(bytes)};
    ub_mark(w);
    unit_flag(false, p.unitFlag, {src.addr_, fix_src_bytes(s)}, "Fixpipe", loc);
    trace_instr(Pipe::FIX, "Fixpipe", dtype_name<T>(), s.ndNum * s.mSize * s.nSize,
                uint64_t(s.ndNum) * s.mSize * s.nSize * sizeof(T), loc, w, {src.addr_, fix_src_bytes(s)});
}

// cbufWorkspace: uint64_t words in L1, 32-byte aligned, for a per-column mode only (the page's
// parameter table); nSize of them from its start must lie in the tensor.
template <typename S>
inline int64_t fix_workspace(const LocalTensor<S>& ws, const FixpipeParamsV220& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(std::is_same_v<S, uint64_t>, "Fixpipe: cbufWorkspace must be a LocalTensor<uint64_t>");
    cube_operand(ws, Mem::L1, 32, "Fixpipe", "cbufWorkspace", "C1", loc);
    if (!per_column(p.quantPre)) {
        fail("api-misuse", loc,
             "Fixpipe with cbufWorkspace and quantPre %d, in block %d: the quantisation tensor is for the per-column "
             "modes VDEQF16, VQF322B8_PRE and VREQ8; use the overload without it for the others",
             int(p.quantPre), blk().idx);
    }
    cube_span(ws, uint64_t(p.nSize) * 8, "Fixpipe", loc);
    return int64_t(ws.addr_);
}

}  // namespace detail

// L0C -> GM.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src,
                               const FixpipeParamsV220& intriParams, SAGE_LOC) {
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is Ascend 950 only");
    sage::sim::touch(loc);
    detail::fixpipe_to_gm(dst, src, intriParams, config.format == CO2Layout::NZ, -1, loc);
}

// L0C -> GM with per-column quantisation words in L1 (cbufWorkspace): the device copies them to
// the Fixpipe Buffer 256 at a time and converts N in such parts; the values are the same.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR, typename S = uint64_t>
__aicore__ inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<S>& cbufWorkspace,
                               const FixpipeParamsV220& intriParams, SAGE_LOC) {
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is Ascend 950 only");
    sage::sim::touch(loc);
    const int64_t vec = detail::fix_workspace(cbufWorkspace, intriParams, loc);
    detail::fixpipe_to_gm(dst, src, intriParams, config.format == CO2Layout::NZ, vec, loc);
}

// L0C -> L1.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                               const FixpipeParamsV220& intriParams, SAGE_LOC) {
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is Ascend 950 only");
    sage::sim::touch(loc);
    detail::fixpipe_to_l1(dst, src, intriParams, config.format == CO2Layout::NZ, -1, loc);
}

// L0C -> L1 with per-column quantisation words in L1 (cbufWorkspace).
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR, typename S = uint64_t>
__aicore__ inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<S>& cbufWorkspace,
                               const FixpipeParamsV220& intriParams, SAGE_LOC) {
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is Ascend 950 only");
    sage::sim::touch(loc);
    const int64_t vec = detail::fix_workspace(cbufWorkspace, intriParams, loc);
    detail::fixpipe_to_l1(dst, src, intriParams, config.format == CO2Layout::NZ, vec, loc);
}

// SetFixPipeConfig(preData, isUnitFlag): a uint64_t tensor in the Fixpipe Buffer (C2PIPE2GM) is
// where the per-column quantisation words of the next L0C DataCopy or Fixpipe with a V mode are
// read (the register keeps it until set again; setRelu, a ReLU tensor, is reserved on the page);
// with an L0C tensor and isUnitFlag it clears the unit flags of the tensor's blocks (the UnitFlag
// page's reset after a Fixpipe that read only part of a Mmad's C).
template <typename T, bool setRelu = false>
__aicore__ inline void SetFixPipeConfig(const LocalTensor<T>& preData, bool isUnitFlag = false, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    std::vector<uint8_t>& bits = blk().unit_bits;
    if (isUnitFlag && detail::mem_of(preData) == Mem::L0C && preData.GetSize() && !bits.empty()) {
        const uint32_t first = preData.addr_ / 512;
        const uint64_t end = std::min<uint64_t>((preData.addr_ + preData.GetSize() * sizeof(T) + 511) / 512,
                                                bits.size());
        for (uint64_t b = first; b < end; ++b) bits[b] = 0;
    }
    static_assert(!setRelu, "SetFixPipeConfig: setRelu must be false (the page reserves the ReLU tensor)");
    if constexpr (std::is_same_v<T, uint64_t>) {
        detail::cube_operand(preData, Mem::FB, 128, "SetFixPipeConfig", "preData", "C2PIPE2GM", loc);
        blk().fix_quant_vec = preData.addr_;
        trace_instr(Pipe::S, "SetFixPipeConfig", "", 1, 0, loc);
        return;
    }
    preData.check("SetFixPipeConfig", 0, loc, false);
}

// SetFixPipeConfig(reluPre, quantPre, isUnitFlag): reluPre is reserved (an empty tensor), quantPre
// the Fixpipe Buffer words.
template <typename T>
__aicore__ inline void SetFixPipeConfig(const LocalTensor<T>& reluPre, const LocalTensor<T>& quantPre,
                                        bool isUnitFlag = false, SAGE_LOC) {
    (void)reluPre;
    SetFixPipeConfig<T, false>(quantPre, isUnitFlag, loc);
}

// ---- L0C -> GM/L1 as DataCopy (DataCopyCO12DstParams) and the Fixpipe registers it reads ----

struct DataCopyCO12DstParams {
    __aicore__ DataCopyCO12DstParams() {}
    __aicore__ DataCopyCO12DstParams(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint32_t dstStrideIn,
                                     const uint16_t srcStrideIn, const QuantMode_t quantPreIn,
                                     const uint8_t reluPreIn, const bool channelSplitIn, const bool nz2ndEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), dstStride(dstStrideIn), srcStride(srcStrideIn), quantPre(quantPreIn),
          reluPre(reluPreIn), channelSplit(channelSplitIn), nz2ndEn(nz2ndEnIn) {}
    uint8_t sid = 0;
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint32_t dstStride = 0;   // ND (nz2ndEn): elements per output row; NZ: 32-byte blocks between n-blocks
    uint16_t srcStride = 0;   // rows of 16 elements between adjacent n-blocks in L0C
    uint8_t unitFlag = 0;
    uint8_t clipReluPre = 0;
    uint8_t eltWiseOp = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint8_t reluPre = 0;
    bool channelSplit = false;
    bool nz2ndEn = false;
};

// The ND matrices an nz2ndEn DataCopy writes: ndNum of them, srcNdStride L0C fractals and
// dstNdStride elements apart.
__aicore__ inline void SetFixpipeNz2ndFlag(uint16_t ndNum, uint16_t srcNdStride, uint32_t dstNdStride, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    blk().fix_nd_num = ndNum, blk().fix_src_nd_stride = srcNdStride, blk().fix_dst_nd_stride = dstNdStride;
    trace_instr(Pipe::S, "SetFixpipeNz2ndFlag", "", 1, 0, loc);
}

// The scalar quantisation word a DataCopy with DEQF16, QF322B8_PRE or REQ8 scales by (its float
// scale's bits 31..13, as QUANT_PRE keeps them; bit 46 is the int8/uint8 sign flag).
__aicore__ inline void SetFixpipePreQuantFlag(uint64_t config, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    blk().fix_pre_quant = config;
    trace_instr(Pipe::S, "SetFixpipePreQuantFlag", "", 1, 0, loc);
}

namespace detail {

// The Fixpipe an L0C DataCopy is: its parameters, the registers for the rest.
inline FixpipeParamsV220 fixpipe_of(const DataCopyCO12DstParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (p.clipReluPre || p.eltWiseOp) {
        fail("not-emulated", loc, "DataCopy from L0C with clipReluPre %u or eltWiseOp %u, in block %d: only ReLU "
             "(reluPre) and the quantisation modes are emulated", p.clipReluPre, p.eltWiseOp, blk().idx);
    }
    FixpipeParamsV220 f{p.nSize, p.mSize, p.srcStride, p.dstStride, p.reluPre != 0, p.quantPre,
                        int64_t(blk().fix_pre_quant), uint16_t(p.nz2ndEn ? blk().fix_nd_num : 1),
                        uint16_t(p.nz2ndEn ? blk().fix_src_nd_stride : 0),
                        uint16_t(p.nz2ndEn ? blk().fix_dst_nd_stride : 0), p.unitFlag, p.channelSplit};
    return f;
}

}  // namespace detail

// L0C -> GM through the FIX pipe, as Fixpipe does: NZ -> ND rows with nz2ndEn, else NZ kept.
template <typename T, typename U>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<U>& src,
                                const DataCopyCO12DstParams& intriParams, SAGE_LOC) {
    const FixpipeParamsV220 f = detail::fixpipe_of(intriParams, loc);
    if (intriParams.nz2ndEn) Fixpipe<T, U, CFG_ROW_MAJOR>(dst, src, f, loc);
    else Fixpipe<T, U, CFG_NZ>(dst, src, f, loc);
}

// L0C -> L1, the same conversion.
template <typename T, typename U>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                                const DataCopyCO12DstParams& intriParams, SAGE_LOC) {
    const FixpipeParamsV220 f = detail::fixpipe_of(intriParams, loc);
    if (intriParams.nz2ndEn) Fixpipe<T, U, CFG_ROW_MAJOR>(dst, src, f, loc);
    else Fixpipe<T, U, CFG_NZ>(dst, src, f, loc);
}

}  // namespace AscendC
