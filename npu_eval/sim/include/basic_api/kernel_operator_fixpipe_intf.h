// Fixpipe on the 910B: L0C (NZ) -> GM or L1 through the FIX pipe, with the NZ -> ND conversion
// (CFG_ROW_MAJOR, the default) or NZ kept (CFG_NZ), ReLU and the scalar quantisation modes
// (QuantMode_t), as FixpipeParamsV220 describes them (asc-devkit kernel_struct_fixpipe.h and the
// Fixpipe doc pages). The conversion runs in sage_sim/cube.h (optimised, prebuilt).
#pragma once

#include "../sage_sim/cube.h"
#include "kernel_operator_mm_intf.h"
#include "kernel_tensor.h"

// The device compiler's quantisation modes (a built-in there, so unqualified and global).
enum QuantMode_t {
    NoQuant,       // no conversion: float -> float, int32_t -> int32_t
    F322F16,       // float -> half, round to nearest even
    F322BF16,      // float -> bfloat16_t, round to nearest even
    DEQF16,        // int32_t -> half, times a scalar scale
    VDEQF16,       // int32_t -> half, per-column scales (not emulated)
    QF322B8_PRE,   // float -> int8_t/uint8_t, times a scalar scale
    VQF322B8_PRE,  // float -> int8_t/uint8_t, per-column scales (not emulated)
    REQ8,          // int32_t -> int8_t/uint8_t, times a scalar scale
    VREQ8,         // int32_t -> int8_t/uint8_t, per-column scales (not emulated)
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

// The conversion a QuantMode_t names for L0C type U into T; fails for a pair the doc page does
// not list.
template <typename T, typename U>
inline sage::sim::FixQuant fix_quant(const FixpipeParamsV220& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr bool f = std::is_same_v<U, float>, i = std::is_same_v<U, int32_t>;
    constexpr bool b8 = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
    const QuantMode_t q = p.quantPre;
    if (q == NoQuant && std::is_same_v<T, U> && (f || i)) return FixQuant::None;
    if (q == F322F16 && f && std::is_same_v<T, half>) return FixQuant::F322F16;
    if (q == F322BF16 && f && std::is_same_v<T, bfloat16_t>) return FixQuant::F322BF16;
    if (q == DEQF16 && i && std::is_same_v<T, half>) return FixQuant::DEQF16;
    if (q == QF322B8_PRE && f && b8) return FixQuant::QF322B8;
    if (q == REQ8 && i && b8) return FixQuant::REQ8;
    if (q == VDEQF16 || q == VQF322B8_PRE || q == VREQ8) {
        fail("api-misuse", loc,
             "Fixpipe with a per-column (tensor) quantisation mode (quantPre %d) is not emulated yet, in block %d: "
             "use a scalar mode (DEQF16, QF322B8_PRE, REQ8) to test the kernel here",
             int(q), blk().idx);
    }
    fail("api-misuse", loc,
         "Fixpipe from %s in L0C to %s with quantPre %d, in block %d: the mode must match the types (float -> "
         "float or int32_t -> int32_t: NoQuant; float -> half: F322F16; float -> bfloat16_t: F322BF16; int32_t -> "
         "half: DEQF16; float -> int8_t/uint8_t: QF322B8_PRE; int32_t -> int8_t/uint8_t: REQ8); the hardware does "
         "not pick it from the types",
         dtype_name<U>(), dtype_name<T>(), int(q), blk().idx);
}

// The checks every Fixpipe makes on its L0C source; returns the conversion's shape.
template <typename T, typename U>
inline sage::sim::FixpipeShape fixpipe_source(const LocalTensor<U>& src, const FixpipeParamsV220& p, bool nz,
                                              sage::sim::SrcLoc loc) {
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
                   p.reluEn, fix_quant<T, U>(p, loc), 0.0f, cube_type<U>(), cube_type<T>()};
    uint32_t bits = uint32_t(p.deqScalar) & 0xFFFFE000u;  // QUANT_PRE[31:13]
    memcpy(&s.scale, &bits, 4);
    if (p.nSize == 0 || p.mSize == 0 || p.ndNum == 0) return s;
    // Each n-block's first mSize rows must hold an Mmad's result.
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

}  // namespace detail

// L0C -> GM.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src,
                               const FixpipeParamsV220& intriParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is Ascend 950 only");
    FixpipeShape s = detail::fixpipe_source<T>(src, intriParams, config.format == CO2Layout::NZ, loc);
    if (s.nSize == 0 || s.mSize == 0 || s.ndNum == 0) return;
    const uint64_t bytes = detail::fix_out_bytes(s);
    uint8_t* g = reinterpret_cast<uint8_t*>(dst.addr_);
    GmBuffer* b = gm_check(g, bytes, loc, true, "Fixpipe", sizeof(T), dst.gm_);
    cube_fixpipe(blk().ub, src.addr_, g, s);
    // The writer bookkeeping (races between blocks, a mismatch's line) per written row.
    const uint32_t osz = sizeof(T);
    for (uint32_t nd = 0; nd < s.ndNum && !s.nz; ++nd)
        for (uint32_t i = 0; i < s.mSize; ++i)
            gm_wrote(b, g + (uint64_t(nd) * s.dstNdStride + uint64_t(i) * s.dstStride) * osz, s.nSize * osz, loc,
                     "Fixpipe", osz);
    const uint32_t w = s.w;
    for (uint32_t jb = 0; jb < (s.nSize + w - 1) / w && s.nz; ++jb)
        gm_wrote(b, g + uint64_t(jb) * s.dstStride * 32, uint64_t(s.mSize) * w * osz, loc, "Fixpipe", osz);
    const uint64_t moved = uint64_t(s.ndNum) * s.mSize * s.nSize * osz;
    trace_instr(Pipe::FIX, "Fixpipe", dtype_name<T>(), s.ndNum * s.mSize * s.nSize, moved, loc, {},
                {src.addr_, detail::fix_src_bytes(s)});
    trace_gm_shape(dst.addr_, s.nz ? (s.nSize + w - 1) / w : s.ndNum * s.mSize);
}

// L0C -> L1 (NZ kept, or ND rows), for a result the cube reads again.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                               const FixpipeParamsV220& intriParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is Ascend 950 only");
    detail::cube_operand(dst, Mem::L1, 32, "Fixpipe", "dst", "A1/B1/C1", loc);
    FixpipeShape s = detail::fixpipe_source<T>(src, intriParams, config.format == CO2Layout::NZ, loc);
    if (s.nSize == 0 || s.mSize == 0 || s.ndNum == 0) return;
    const uint64_t bytes = detail::fix_out_bytes(s);
    detail::cube_span(dst, bytes, "Fixpipe", loc);
    cube_fixpipe(blk().ub, src.addr_, blk().ub + dst.addr_, s);
    UbRange w{dst.addr_, uint32_t(bytes)};
    ub_mark(w);
    trace_instr(Pipe::FIX, "Fixpipe", dtype_name<T>(), s.ndNum * s.mSize * s.nSize,
                uint64_t(s.ndNum) * s.mSize * s.nSize * sizeof(T), loc, w,
                {src.addr_, detail::fix_src_bytes(s)});
}

// SetFixPipeConfig(preData, isUnitFlag): with a uint64_t tensor it loads per-column quantisation
// (or ReLU) parameters into the Fixpipe buffer, which is not emulated yet; with the L0C tensor and
// isUnitFlag it clears L0C's unit flags (unitFlag 2/3 of Mmad and Fixpipe), which the emulator,
// running each Mmad to its end before the next call, does not need: nothing to do.
template <typename T, bool setRelu = false>
__aicore__ inline void SetFixPipeConfig(const LocalTensor<T>& preData, bool isUnitFlag = false, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    (void)isUnitFlag;
    if constexpr (std::is_same_v<T, uint64_t>) {
        fail("api-misuse", loc,
             "SetFixPipeConfig with per-column quantisation or ReLU parameters is not emulated yet, in block %d: "
             "use a scalar quantisation mode to test the kernel here",
             blk().idx);
    }
    preData.check("SetFixPipeConfig", 0, loc, false);
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
