// The cube unit's loads and matrix multiply on the 910B: LoadData (L1 -> L0A/L0B, 512-byte
// fractals, LoadData2DParams) and Mmad (L0A x L0B -> L0C, with or without a bias), with the
// parameter structs of asc-devkit's kernel_struct_mm.h. The arithmetic runs in sage_sim/cube.h
// (optimised, prebuilt); these templates check what the doc pages require, at the user's line,
// and trace the MTE1 and M pipes.
#pragma once

#include "../sage_sim/coop.h"
#include "../sage_sim/cube.h"
#include "kernel_tensor.h"

namespace AscendC {

struct LoadData2DParams {
    __aicore__ LoadData2DParams() {}
    __aicore__ LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                                const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn,
                                const uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = 0;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;

struct LoadData2dTransposeParams {
    __aicore__ LoadData2dTransposeParams() {}
    __aicore__ LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn,
                                         const uint16_t srcStrideIn, const uint16_t dstGapIn,
                                         const uint16_t dstfracGapIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn), addrMode(addrModeIn) {}
    __aicore__ LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn,
                                         const uint16_t srcStrideIn, const uint16_t dstGapIn,
                                         const uint16_t dstfracGapIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};

struct MmadParams {
    __aicore__ MmadParams() {}
    __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
                          const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn,
                          const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
    __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
                          const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;  // deprecated: true accumulates onto L0C (C += A * B)
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;   // true: C starts from the BiasTable (C2)
    bool cmatrixInitVal = true;   // true: C starts from 0
};

namespace detail {

template <typename T>
constexpr sage::sim::CubeType cube_type() {
    using sage::sim::CubeType;
    if constexpr (std::is_same_v<T, half>) return CubeType::F16;
    else if constexpr (std::is_same_v<T, bfloat16_t>) return CubeType::BF16;
    else if constexpr (std::is_same_v<T, float>) return CubeType::F32;
    else if constexpr (std::is_same_v<T, int8_t>) return CubeType::S8;
    else if constexpr (std::is_same_v<T, uint8_t>) return CubeType::U8;
    else if constexpr (std::is_same_v<T, int4b_t>) return CubeType::S4;
    else return CubeType::S32;
}

// The memory a tensor lies in, and its byte offset in that memory.
template <typename T>
inline sage::sim::Mem mem_of(const LocalTensor<T>& t) {
    return sage::sim::mem_at(t.addr_);
}
template <typename T>
inline uint32_t mem_offset(const LocalTensor<T>& t) {
    return t.addr_ - sage::sim::mem_base(mem_of(t));
}

// The unit flags of L0C (the UnitFlag page): with unitFlag 2 or 3 a Mmad (write) waits until each
// 512-byte block of its C is 0 and a Fixpipe (read) until each block of its source is 1; with 3 a
// Mmad sets them to 1 after writing and a Fixpipe clears them after reading. The emulator runs the
// core's calls in order, so a wait that no earlier call satisfies is one the device resolves only
// by a later call (which then reads or overwrites the wrong data) or never: refused as a deadlock.
// The record before the instruction tells the cost model the hand-over (cost_model.py).
inline void unit_flag(bool write, uint8_t mode, sage::sim::UbRange r, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (mode == 0 || r.bytes == 0) return;
    if (mode != 2 && mode != 3) {
        fail("api-misuse", loc, "%s with unitFlag %u, in block %d: it is 0 (off), 2 or 3 (the %s page)", api, mode,
             blk().idx, api);
    }
    std::vector<uint8_t>& bits = blk().unit_bits;
    const uint32_t first = r.addr / 512, last = (r.addr + r.bytes - 1) / 512;
    if (bits.size() <= last) bits.resize(last + 1, 0);
    const uint8_t want = write ? 0 : 1;
    for (uint32_t b = first; b <= last; ++b) {
        if (bits[b] == want) continue;
        fail("flag-deadlock", loc,
             write ? "%s with unitFlag %u writes L0C byte %u, whose unit flag a Mmad with unitFlag 3 set and no "
                     "Fixpipe with unitFlag 3 cleared since, in block %d: on the device it waits for that read "
                     "forever (or overwrites C before a later Fixpipe reads it). Read C out with a Fixpipe of "
                     "unitFlag 3 first (both sides must enable unitFlag, the UnitFlag page)"
                   : "%s with unitFlag %u reads L0C byte %u, whose unit flag no Mmad with unitFlag 3 set (or a "
                     "Fixpipe with unitFlag 3 already cleared it), in block %d: on the device it waits for a Mmad "
                     "forever. Give the last Mmad of the K loop unitFlag 3 (both sides must enable unitFlag, the "
                     "UnitFlag page)",
             api, mode, b * 512 - mem_base(Mem::L0C), blk().idx);
    }
    if (mode == 3) std::fill(bits.begin() + first, bits.begin() + last + 1, uint8_t(write ? 1 : 0));
    trace_event(TraceKind::Unit, write ? Pipe::M : Pipe::FIX, api, loc, mode, 0, r);
}

// A cube operand must lie in `want` (the doc page's position) with its start `align`-byte aligned.
template <typename T>
inline void cube_operand(const LocalTensor<T>& t, sage::sim::Mem want, uint32_t align, const char* api,
                         const char* role, const char* pos, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    t.check(api, 0, loc, false);
    // In a mixed launch the cube unit is the AIC's: the device compiler builds the AIV's code for a
    // vector core, which has no L1/L0 and no cube instructions.
    if (coop().active && coop().mixed && blk().core == AIV && !blk().cube_client) {
        fail("api-misuse", loc,
             "%s on %s: in a mixed kernel the cube unit (L1, L0A/L0B/L0C, the BiasTable) belongs to the AIC; put "
             "the cube work under `if ASCEND_IS_AIC`", api, core_name(blk()).c_str());
    }
    if (mem_of(t) != want) {
        fail("api-misuse", loc,
             "%s with %s in the %s, in block %d: on %s it must be in the %s (TPosition %s). Allocate it from a "
             "TQue/TBuf or LocalMemAllocator of that position",
             api, role, mem_name(mem_of(t)), blk().idx, chip_name(), mem_name(want), pos);
    }
    if (mem_offset(t) % align != 0) {
        fail("api-misuse", loc,
             "%s with %s at %s byte %u, which is not %u-byte aligned, in block %d: the hardware requires it (the "
             "doc page's address constraint). Offset views by whole fractals",
             api, role, mem_name(want), mem_offset(t), align, blk().idx);
    }
}

// `bytes` from the tensor's start must fit its buffer. A tensor the kernel placed at a fixed
// address has no buffer on the device, only its memory: the official samples size such an L0C
// tensor for n and let an Mmad with n padded to 32 write past it, so for those only the memory's
// end counts.
template <typename T>
inline void cube_span(const LocalTensor<T>& t, uint64_t bytes, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const Mem mem = mem_of(t);
    if (t.slot_ && t.slot_->kind && std::strcmp(t.slot_->kind, "cube LocalTensor at a fixed address") == 0) {
        if (mem_offset(t) + bytes <= mem_bytes(mem)) return;
        fail("ub-out-of-bounds", loc,
             "%s reaches %llu bytes from %s byte %u, past the %u bytes of the %s, in block %d: check m, n and k "
             "against the tiles the kernel loaded",
             api, (unsigned long long)bytes, mem_name(mem), mem_offset(t), mem_bytes(mem), mem_name(mem), blk().idx);
    }
    t.check(api, (bytes + sizeof(T) - 1) / sizeof(T), loc, false);
}

}  // namespace detail

// L1 -> L0A/L0B, 2D: repeatTimes 512-byte fractals (16 x 16 for 2-byte types, 16 x 32 for int8,
// 16 x 8 for float), fractal j from src fractal startIndex + j*srcStride to dst fractal
// j*(1 + dstGap); ifTranspose transposes each fractal (2-byte types only on the 910B).
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const LoadData2DParams& loadDataParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const LoadData2DParams& p = loadDataParams;
    const Mem to = detail::mem_of(dst);
    detail::cube_operand(dst, to == Mem::L0B ? Mem::L0B : Mem::L0A, 512, "LoadData", "dst", "A2/B2", loc);
    detail::cube_operand(src, Mem::L1, 32, "LoadData", "src", "A1/B1", loc);
    if (p.ifTranspose && (sizeof(T) != 2 || sage::sim::is_int4<T>())) {
        fail("api-misuse", loc,
             "LoadData with ifTranspose on %s, in block %d: on %s LoadData2DParams transposes 2-byte types (half, "
             "bfloat16_t) only; transpose int8 or float fractals with LoadDataWithTranspose (int4b_t: to L0B only)",
             dtype_name<T>(), blk().idx, chip_name());
    }
    if (p.repeatTimes == 0) return;
    const uint64_t src_bytes = (uint64_t(p.startIndex) + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * 512;
    const uint64_t dst_bytes = (uint64_t(p.repeatTimes - 1) * (1 + p.dstGap) + 1) * 512;
    detail::cube_span(src, src_bytes, "LoadData", loc);
    detail::cube_span(dst, dst_bytes, "LoadData", loc);
    UbRange r{src.addr_, uint32_t(src_bytes)}, w{dst.addr_, uint32_t(dst_bytes)};
    cube_load2d(blk().ub, blk().ub_init, dst.addr_, src.addr_, p.startIndex, p.repeatTimes, p.srcStride, p.dstGap,
                p.ifTranspose);
    trace_instr(Pipe::MTE1, "LoadData", dtype_name<T>(), p.repeatTimes, uint64_t(p.repeatTimes) * 512, loc, w, r);
}

// L1 -> L0A/L0B with each square transposed: 2-byte types one 16 x 16 fractal per repeat, int8
// and 4-byte types a square of two consecutive fractals (32 x 32 bytes, 16 x 16 elements) into
// two destination fractals dstFracGap fractals apart (the LoadDataWithTranspose doc page).
template <typename T>
__aicore__ inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                             const LoadData2dTransposeParams& loadDataParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const LoadData2dTransposeParams& p = loadDataParams;
    const Mem to = detail::mem_of(dst);
    detail::cube_operand(dst, to == Mem::L0B ? Mem::L0B : Mem::L0A, 512, "LoadDataWithTranspose", "dst", "A2/B2",
                         loc);
    detail::cube_operand(src, Mem::L1, 32, "LoadDataWithTranspose", "src", "A1/B1", loc);
    if (p.addrMode) {
        fail("api-misuse", loc, "LoadDataWithTranspose with addrMode (decrementing addresses) is not emulated yet, "
             "in block %d: keep the default", blk().idx);
    }
    constexpr bool b4 = sage::sim::is_int4<T>();
    if (b4 && to != Mem::L0B) {
        fail("dtype-unsupported", loc,
             "LoadDataWithTranspose of int4b_t to the %s, in block %d: on %s int4b_t is transposed into L0B only "
             "(the LoadDataWithTranspose page: b4 only when the destination is L0B); load A untransposed with "
             "LoadData, or keep it as int8_t",
             mem_name(to), blk().idx, chip_name());
    }
    if (p.repeatTimes == 0) return;
    // A square: one fractal (2-byte types), two (int8, 4-byte types) or four (int4b_t, 64 x 64).
    const uint64_t fracs = sizeof(T) == 2 ? 1 : b4 ? 4 : 2, unit = fracs * 512;
    const uint64_t src_bytes = (uint64_t(p.startIndex) + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * unit;
    const uint64_t dst_bytes = uint64_t(p.repeatTimes - 1) * (1 + p.dstGap) * 512 +
                               ((fracs - 1) * (1 + uint64_t(p.dstFracGap)) + 1) * 512;
    detail::cube_span(src, src_bytes, "LoadDataWithTranspose", loc);
    detail::cube_span(dst, dst_bytes, "LoadDataWithTranspose", loc);
    cube_load_transpose(blk().ub, blk().ub_init, dst.addr_, src.addr_, b4 ? 4 : sizeof(T) * 8, p.startIndex, p.repeatTimes,
                        p.srcStride, p.dstGap, p.dstFracGap);
    trace_instr(Pipe::MTE1, "LoadDataWithTranspose", dtype_name<T>(), p.repeatTimes, uint64_t(p.repeatTimes) * unit,
                loc, {dst.addr_, uint32_t(dst_bytes)}, {src.addr_, uint32_t(src_bytes)});
}

// ---- LoadData's img2col form (LoadData3DParamsV2, LoadData3DParamsV2Pro) and its registers ----

constexpr uint8_t PAD_SIZE = 4;   // padList's entries: left, right, top, bottom
const int32_t BLOCK_CUBE = 16;    // a fractal's rows (and a 2-byte fractal's columns)

enum class FmatrixMode : uint8_t {
    FMATRIX_LEFT = 0,
    FMATRIX_RIGHT = 1,
};

// Whether LoadData sets the feature map (l1H, l1W, padList) and the pad value from its parameters
// (true) or uses what SetFmatrix and SetLoadDataPaddingValue left in the registers (false).
struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};

template <typename T>
struct LoadData3DParamsV2 {
    __aicore__ LoadData3DParamsV2() {}
    __aicore__ LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], const uint16_t l1HIn, const uint16_t l1WIn,
                                  const uint16_t channelSizeIn, const uint16_t kExtensionIn,
                                  const uint16_t mExtensionIn, const uint16_t kStartPtIn, const uint16_t mStartPtIn,
                                  const uint8_t strideWIn, const uint8_t strideHIn, const uint8_t filterWIn,
                                  const uint8_t filterHIn, const uint8_t dilationFilterWIn,
                                  const uint8_t dilationFilterHIn, const bool enTransposeIn, const bool enSmallKIn,
                                  const T padValueIn, const bool filterSizeWIn = false,
                                  const bool filterSizeHIn = false, const bool fMatrixCtrlIn = false)
        : l1H(l1HIn), l1W(l1WIn), channelSize(channelSizeIn), kExtension(kExtensionIn), mExtension(mExtensionIn),
          kStartPt(kStartPtIn), mStartPt(mStartPtIn), strideW(strideWIn), strideH(strideHIn), filterW(filterWIn),
          filterH(filterHIn), dilationFilterW(dilationFilterWIn), dilationFilterH(dilationFilterHIn),
          enTranspose(enTransposeIn), enSmallK(enSmallKIn), padValue(padValueIn), filterSizeW(filterSizeWIn),
          filterSizeH(filterSizeHIn), fMatrixCtrl(fMatrixCtrlIn) {
        for (int i = 0; i < PAD_SIZE; ++i) padList[i] = padListIn[i];
    }
    uint8_t padList[PAD_SIZE] = {0};
    uint16_t l1H = 0;
    uint16_t l1W = 0;
    uint16_t channelSize = 0;
    uint16_t kExtension = 0;
    uint16_t mExtension = 0;
    uint16_t kStartPt = 0;
    uint16_t mStartPt = 0;
    uint8_t strideW = 1;
    uint8_t strideH = 1;
    uint8_t filterW = 1;
    uint8_t filterH = 1;
    uint8_t dilationFilterW = 1;
    uint8_t dilationFilterH = 1;
    bool enTranspose = false;
    bool enSmallK = false;
    T padValue = 0;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
};

// The same instruction with the window packed: extConfig = mStartPt << 48 | kStartPt << 32 |
// mExtension << 16 | kExtension, filterConfig = dilationFilterH << 40 | dilationFilterW << 32 |
// filterH << 24 | filterW << 16 | strideH << 8 | strideW. The feature map and the pad value come
// from SetFmatrix and SetLoadDataPaddingValue.
struct LoadData3DParamsV2Pro {
    __aicore__ LoadData3DParamsV2Pro() {}
    __aicore__ LoadData3DParamsV2Pro(const uint16_t channelSizeIn, const bool enTransposeIn, const bool enSmallKIn,
                                     const bool filterSizeWIn, const bool filterSizeHIn, const bool fMatrixCtrlIn,
                                     const uint64_t extConfigIn, const uint64_t filterConfigIn)
        : channelSize(channelSizeIn), enTranspose(enTransposeIn), enSmallK(enSmallKIn), filterSizeW(filterSizeWIn),
          filterSizeH(filterSizeHIn), fMatrixCtrl(fMatrixCtrlIn), extConfig(extConfigIn),
          filterConfig(filterConfigIn) {}
    uint16_t channelSize = 0;
    bool enTranspose = false;
    bool enSmallK = false;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
    uint64_t extConfig = 0;
    uint64_t filterConfig = 0X10101010101;
};

struct LoadDataRepeatParam {
    __aicore__ LoadDataRepeatParam() {}
    __aicore__ LoadDataRepeatParam(const uint16_t repeatStrideIn, const uint8_t repeatTimeIn,
                                   const uint8_t repeatModeIn)
        : repeatStride(repeatStrideIn), repeatTime(repeatTimeIn), repeatMode(repeatModeIn) {}
    uint16_t repeatStride = 0;
    uint8_t repeatTime = 1;
    uint8_t repeatMode = 0;
    uint8_t reserved = 0;
};

// The feature map LoadData reads when its IsResetLoad3dConfig says isSetFMatrix = false (and
// what a LoadData3DParamsV2Pro always reads): the left or right matrix's register.
__aicore__ inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4],
                                  const FmatrixMode& fmatrixMode, SAGE_LOC) {
    sage::sim::touch(loc);
    auto& f = sage::sim::blk().fmatrix[int(fmatrixMode) & 1];
    f.l1H = l1H, f.l1W = l1W, f.set = true;
    for (int i = 0; i < 4; ++i) f.pad[i] = padList[i];
    sage::sim::trace_instr(sage::sim::Pipe::S, "SetFmatrix", "", 1, 0, loc);
}

template <typename T>
__aicore__ inline void SetLoadDataPaddingValue(const T padValue, SAGE_LOC) {
    sage::sim::touch(loc);
    static_assert(sizeof(T) <= 4, "SetLoadDataPaddingValue: the pad value is at most 32 bits");
    uint64_t bits = 0;
    memcpy(&bits, &padValue, sizeof(T));
    sage::sim::blk().load3d_pad_bits = bits;
    sage::sim::blk().load3d_pad_set = true;
    sage::sim::trace_instr(sage::sim::Pipe::S, "SetLoadDataPaddingValue", "", 1, 0, loc);
}

// L1 bytes from its start past which LoadData's img2col reads wrap to L1's start (0: no bound).
__aicore__ inline void SetLoadDataBoundary(uint32_t boundaryValue, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    if (boundaryValue != 0 && boundaryValue < 1024) {
        fail("api-misuse", loc,
             "SetLoadDataBoundary(%u), in block %d: the bound is 0 (none) or at least 1024 bytes; 1..1023 is "
             "undefined on the device (the SetLoadDataBoundary doc page)", boundaryValue, blk().idx);
    }
    blk().load3d_boundary = boundaryValue;
    trace_instr(Pipe::S, "SetLoadDataBoundary", "", 1, 0, loc);
}

// One iteration (repeatTime 1) is what LoadData's img2col does by itself; more are not emulated yet.
__aicore__ inline void SetLoadDataRepeat(const LoadDataRepeatParam& repeatParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    if (repeatParams.repeatTime > 1) {
        fail("not-emulated", loc,
             "SetLoadDataRepeat with repeatTime %u, in block %d: sage-npu emulates one iteration (repeatTime 0 "
             "or 1) of LoadData's img2col form; issue one LoadData per block instead",
             repeatParams.repeatTime, blk().idx);
    }
    trace_instr(Pipe::S, "SetLoadDataRepeat", "", 1, 0, loc);
}

namespace detail {

// The window and kernel of one img2col load, from either parameter struct.
struct Load3dCall {
    uint16_t channelSize, kExtension, mExtension, kStartPt, mStartPt;
    uint32_t strideW, strideH, filterW, filterH, dilW, dilH;
    bool enTranspose, fMatrixCtrl;
};

template <typename T>
inline void load3d_types(bool to_l0b, bool transpose, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr bool known = std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t> || std::is_same_v<T, float> ||
                           std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
                           std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || sage::sim::is_int4<T>();
    // sizeof(int4b_t) is 1: b4, like b8, goes to L0A untransposed only (the page: L0B has no b4/b8)
    if (!known || (to_l0b && sizeof(T) == 1) || (!to_l0b && transpose && sizeof(T) == 1)) {
        fail("dtype-unsupported", loc,
             "LoadData (img2col, LoadData3DParamsV2) of %s to %s%s, in block %d: on %s it loads half, bfloat16_t, "
             "float, int32_t and uint32_t to L0A or L0B, and int8_t/uint8_t/int4b_t to L0A untransposed only (the "
             "LoadData_3D doc page)",
             dtype_name<T>(), to_l0b ? "L0B" : "L0A", transpose && !to_l0b ? " transposed" : "", blk().idx,
             chip_name());
    }
}

// channelSize on the 910B: multiples of C0 (32 bytes) are emulated; the small-channel values the doc
// page also allows (4, 8, N*16+4, ...) pack the map differently and are not yet.
template <typename T>
inline void load3d_window(const Load3dCall& c, const sage::sim::BlockState::Fmatrix& f, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const uint32_t c0 = uint32_t(bytes_elems<T>(32));
    if (c.channelSize % c0 != 0) {
        fail("not-emulated", loc,
             "LoadData (img2col) with channelSize %u, in block %d: sage-npu emulates channelSize a multiple of %u "
             "(32 bytes of %s); the small-channel layouts (4, 8, N*16+4, ...) are not emulated yet",
             c.channelSize, blk().idx, c0, dtype_name<T>());
    }
    if (c.kStartPt % c0 != 0) {
        fail("api-misuse", loc,
             "LoadData (img2col) with kStartPt %u, in block %d: it must be a multiple of %u for %s (one C0 block)",
             c.kStartPt, blk().idx, c0, dtype_name<T>());
    }
    if (c.strideW == 0 || c.strideH == 0 || c.dilW == 0 || c.dilH == 0 || c.strideW > 63 || c.strideH > 63) {
        fail("api-misuse", loc,
             "LoadData (img2col) with strideW %u strideH %u dilationFilterW %u dilationFilterH %u, in block %d: "
             "strides are in [1, 63] and dilations in [1, 255]", c.strideW, c.strideH, c.dilW, c.dilH, blk().idx);
    }
    if ((c.filterW - 1) * c.dilW + 1 > uint32_t(f.l1W) + f.pad[0] + f.pad[1] ||
        (c.filterH - 1) * c.dilH + 1 > uint32_t(f.l1H) + f.pad[2] + f.pad[3]) {
        fail("api-misuse", loc,
             "LoadData (img2col) with a %u x %u kernel (dilation %u, %u) on a %u x %u feature map padded by %u/%u/%u/%u, "
             "in block %d: the kernel does not fit in the padded map, so there is no output position",
             c.filterH, c.filterW, c.dilH, c.dilW, f.l1H, f.l1W, f.pad[0], f.pad[1], f.pad[2], f.pad[3], blk().idx);
    }
}

template <typename T>
inline void load3d(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Load3dCall& c,
                   const sage::sim::BlockState::Fmatrix& f, uint64_t pad_bits, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    const Mem to = mem_of(dst);
    cube_operand(dst, to == Mem::L0B ? Mem::L0B : Mem::L0A, 512, "LoadData", "dst", "A2/B2", loc);
    cube_operand(src, Mem::L1, 32, "LoadData", "src", "A1/B1", loc);
    load3d_types<T>(to == Mem::L0B, c.enTranspose, loc);
    if (c.fMatrixCtrl) {
        fail("api-misuse", loc, "LoadData (img2col) with fMatrixCtrl true, in block %d: only false (the left "
             "matrix's feature map) is supported (the LoadData_3D doc page)", blk().idx);
    }
    // Any of these 0 makes the instruction a NOP (the doc page).
    if (!f.l1H || !f.l1W || !c.channelSize || !c.kExtension || !c.mExtension || !c.filterW || !c.filterH) return;
    load3d_window<T>(c, f, loc);
    const uint32_t c0 = uint32_t(bytes_elems<T>(32));
    Load3d p{is_int4<T>() ? 4u : uint32_t(sizeof(T) * 8), f.l1H, f.l1W, c.channelSize, f.pad[0], f.pad[1], f.pad[2], f.pad[3],
             c.kStartPt, c.mStartPt, c.kExtension, c.mExtension, c.strideW, c.strideH, c.filterW, c.filterH,
             c.dilW, c.dilH, uint32_t(pad_bits), to == Mem::L0B ? 2 : c.enTranspose ? 1 : 0};
    const uint64_t src_bytes = elem_bytes<T>(uint64_t(c.channelSize) * f.l1H * f.l1W);
    const uint64_t rows = p.to == 1 ? c.kExtension : c.mExtension, cols = p.to == 1 ? c.mExtension : c.kExtension;
    const uint64_t dst_bytes = p.to == 2 ? (rows + c0 - 1) / c0 * ((cols + 15) / 16) * 512
                                         : (rows + 15) / 16 * ((cols + c0 - 1) / c0) * 512;
    const uint32_t bound = blk().load3d_boundary;
    if (bound && mem_offset(src) >= bound) {
        fail("api-misuse", loc,
             "LoadData (img2col) reads from L1 byte %u, past the bound SetLoadDataBoundary set (%u bytes), in block "
             "%d: the source must start inside it", mem_offset(src), bound, blk().idx);
    }
    if (!bound) cube_span(src, src_bytes, "LoadData", loc);
    cube_span(dst, dst_bytes, "LoadData", loc);
    cube_load3d(blk().ub, blk().ub_init, dst.addr_, src.addr_, p, bound ? mem_base(Mem::L1) : 0, bound);
    trace_instr(Pipe::MTE1, "LoadData", dtype_name<T>(), (dst_bytes + 511) / 512, dst_bytes, loc,
                UbRange{dst.addr_, uint32_t(dst_bytes)}, UbRange{src.addr_, uint32_t(bound ? bound - mem_offset(src)
                                                                                            : src_bytes)});
}

}  // namespace detail

// L1 (NC1HWC0 feature map) -> L0A/L0B through img2col: the window of the img2col matrix at
// (mStartPt, kStartPt), mExtension x kExtension, to L0A as ZZ (enTranspose: the whole matrix
// transposed, 2- and 4-byte types) or to L0B as ZN (always transposed); see sage_sim/cube.h.
template <typename T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, typename U = T,
          typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const LoadData3DParamsV2<U>& loadDataParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const LoadData3DParamsV2<U>& p = loadDataParams;
    BlockState::Fmatrix f = blk().fmatrix[p.fMatrixCtrl ? 1 : 0];
    if (defaultConfig.isSetFMatrix) {
        f.l1H = p.l1H, f.l1W = p.l1W, f.set = true;
        for (int i = 0; i < 4; ++i) f.pad[i] = p.padList[i];
    } else if (!f.set) {
        fail("api-misuse", loc, "LoadData with isSetFMatrix false before any SetFmatrix, in block %d: the feature "
             "map (l1H, l1W, padList) is undefined", blk().idx);
    }
    uint64_t pad = blk().load3d_pad_bits;
    if (defaultConfig.isSetPadding) {
        pad = 0;
        memcpy(&pad, &p.padValue, sizeof(U));
    }
    detail::Load3dCall c{p.channelSize, p.kExtension, p.mExtension, p.kStartPt, p.mStartPt, p.strideW, p.strideH,
                         p.filterW + (p.filterSizeW ? 256u : 0u), p.filterH + (p.filterSizeH ? 256u : 0u),
                         p.dilationFilterW, p.dilationFilterH, p.enTranspose, p.fMatrixCtrl};
    detail::load3d(dst, src, c, f, pad, loc);
}

template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const LoadData3DParamsV2Pro& loadDataParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    const LoadData3DParamsV2Pro& p = loadDataParams;
    const BlockState::Fmatrix& f = blk().fmatrix[p.fMatrixCtrl ? 1 : 0];
    if (!f.set) {
        fail("api-misuse", loc, "LoadData with LoadData3DParamsV2Pro before any SetFmatrix, in block %d: the Pro "
             "form reads the feature map (l1H, l1W, padList) from the register SetFmatrix sets", blk().idx);
    }
    const uint64_t e = p.extConfig, g = p.filterConfig;
    auto byte = [&](int at) { return uint32_t((g >> at) & 0xFF); };
    detail::Load3dCall c{p.channelSize, uint16_t(e), uint16_t(e >> 16), uint16_t(e >> 32), uint16_t(e >> 48),
                         byte(0), byte(8), byte(16) + (p.filterSizeW ? 256u : 0u),
                         byte(24) + (p.filterSizeH ? 256u : 0u), byte(32), byte(40), p.enTranspose, p.fMatrixCtrl};
    detail::load3d(dst, src, c, f, blk().load3d_pad_bits, loc);
}

namespace detail {

template <typename T, typename U, typename S>
inline void mmad_types(sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr bool fp = std::is_same_v<T, float> && std::is_same_v<U, S> &&
                        (std::is_same_v<U, half> || std::is_same_v<U, bfloat16_t> || std::is_same_v<U, float>);
    constexpr bool i8 = std::is_same_v<T, int32_t> && std::is_same_v<U, int8_t> && std::is_same_v<S, int8_t>;
    constexpr bool i4 = std::is_same_v<T, int32_t> && std::is_same_v<U, int4b_t> && std::is_same_v<S, int4b_t>;
    if (!fp && !i8 && !i4) {
        fail("dtype-unsupported", loc,
             "Mmad of %s x %s into %s, in block %d: on %s the cube multiplies half x half, bfloat16_t x bfloat16_t "
             "or float x float into float, and int8_t x int8_t or int4b_t x int4b_t into int32_t (the Mmad doc "
             "page's table)",
             dtype_name<U>(), dtype_name<S>(), dtype_name<T>(), blk().idx, chip_name());
    }
}

// init: 0 from zero, 1 from L0C (accumulate), 2 from the bias at `bias`.
template <typename T, typename U, typename S>
inline void mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const MmadParams& p, int init, uint32_t bias, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    mmad_types<T, U, S>(loc);
    cube_operand(dst, Mem::L0C, 1024, "Mmad", "dst (C)", "CO1", loc);
    cube_operand(fm, Mem::L0A, 512, "Mmad", "fm (A)", "A2", loc);
    cube_operand(filter, Mem::L0B, 512, "Mmad", "filter (B)", "B2", loc);
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) {
        fail("api-misuse", loc, "Mmad with m=%u n=%u k=%u, in block %d: each must be in [0, 4095]", p.m, p.n, p.k,
             blk().idx);
    }
    if (p.m == 0 || p.n == 0 || p.k == 0) return;  // a NOP, as documented
    const uint32_t k0 = uint32_t(bytes_elems<U>(32)), m16 = (p.m + 15) / 16, n16 = (p.n + 15) / 16;
    // float with kDirectionAlign: K padded to 16, two 16 x 8 fractals per 16 of K (the Mmad page)
    const uint32_t k1 = std::is_same_v<U, float> && p.kDirectionAlign ? (p.k + 15) / 16 * 2 : (p.k + k0 - 1) / k0;
    // m = 1 is GEMV: A is one ND row in L0A
    const uint64_t a_bytes = p.m == 1 ? (elem_bytes<U>(p.k) + 31) / 32 * 32 : uint64_t(m16) * k1 * 512;
    const uint64_t b_bytes = uint64_t(k1) * n16 * 512, c_bytes = uint64_t(m16) * n16 * 1024;
    cube_span(fm, a_bytes, "Mmad", loc);
    cube_span(filter, b_bytes, "Mmad", loc);
    cube_span(dst, c_bytes, "Mmad", loc);
    UbRange a{fm.addr_, uint32_t(a_bytes)}, b{filter.addr_, uint32_t(b_bytes)}, c{dst.addr_, uint32_t(c_bytes)};
    if (init == 1 && !ub_is_init(c) && !already_reported("uninitialized-read", loc)) {
        report("uninitialized-read", Severity::Error, loc,
               "Mmad accumulates onto L0C (cmatrixInitVal false, cmatrixSource false) that no Mmad wrote since "
               "its buffer was allocated, in block %d: the sum starts from stale data. Start the first Mmad of a "
               "K loop with cmatrixInitVal = true (or from a bias)",
               blk().idx);
    }
    MmadShape shape{p.m, p.n, p.k, cube_type<U>(), init, bias, k1};
    cube_mmad(blk().ub, blk().ub_init, dst.addr_, fm.addr_, filter.addr_, shape);
    unit_flag(true, p.unitFlag, c, "Mmad", loc);
    trace_instr(Pipe::M, "Mmad", dtype_name<U>(), m16 * n16 * k1, uint64_t(m16) * n16 * k1 * 16 * 16 * k0, loc, c,
                a, b);
}

}  // namespace detail

// dst (L0C) = A (L0A) x B (L0B), with C's start from MmadParams: 0 (cmatrixInitVal), the
// BiasTable (cmatrixSource, bias at the C2 buffer's start) or L0C itself (accumulate).
template <typename T, typename U, typename S>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const MmadParams& mmadParams, SAGE_LOC) {
    sage::sim::touch(loc);
    const MmadParams& p = mmadParams;
    int init = p.isBias ? 1 : p.cmatrixInitVal ? 0 : p.cmatrixSource ? 2 : 1;
    uint32_t bias = sage::sim::mem_base(sage::sim::Mem::BT);
    // Kernels pad n past the bias they copy (the padded columns are never written out), so only
    // an untouched BiasTable is reported.
    if (init == 2 && !sage::sim::ub_is_init({bias, 64})) {
        sage::sim::report("uninitialized-read", sage::sim::Severity::Error, loc,
                          "Mmad starts C from the BiasTable (cmatrixSource true), but nothing wrote it, in block %d: "
                          "copy the bias to the C2 buffer first (DataCopy from a C1 tensor)",
                          sage::sim::blk().idx);
    }
    detail::mmad(dst, fm, filter, p, init, bias, loc);
}

// dst = bias (BiasTable, one value per column) + A x B.
template <typename T, typename U, typename S, typename V>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const LocalTensor<V>& bias, const MmadParams& mmadParams, SAGE_LOC) {
    using namespace sage::sim;
    touch(loc);
    static_assert(std::is_same_v<V, T>, "Mmad: the bias has the result's type (float, or int32_t for int8 inputs)");
    detail::cube_operand(bias, Mem::BT, 64, "Mmad", "bias", "C2", loc);
    detail::cube_span(bias, uint64_t(mmadParams.n) * sizeof(V), "Mmad", loc);
    ub_check_init({bias.addr_, uint32_t(mmadParams.n * sizeof(V))}, "Mmad", loc);
    detail::mmad(dst, fm, filter, mmadParams, 2, bias.addr_, loc);
}

// ---- 4:2 structured sparsity (Atlas A2/A3; the LoadDataWithSparse and MmadWithSparse pages) ----

// L1 -> L0B: repeatTimes dense B fractals (int8, ZN, 512 bytes) from src fractal startIndex on,
// and with them their index fractals (uint8, four 2-bit indices a byte, 128 bytes a fractal) from
// idx fractal startIndex on, into the cube's sparse index buffer (a quarter of L0B, at the L0B
// offset / 4) that MmadWithSparse reads. Contiguous only: the other LoadData2DParams fields are
// unused, and a transpose is refused.
template <typename T = int8_t, typename U = uint8_t>
__aicore__ inline void LoadDataWithSparse(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                          const LocalTensor<U>& idx, const LoadData2dParams& loadDataParam, SAGE_LOC) {
    using namespace sage::sim;
    static_assert(std::is_same_v<T, int8_t> && std::is_same_v<U, uint8_t>,
                  "LoadDataWithSparse: dst and src are int8_t, idx uint8_t (the LoadDataWithSparse page)");
    touch(loc);
    const LoadData2dParams& p = loadDataParam;
    detail::cube_operand(dst, Mem::L0B, 512, "LoadDataWithSparse", "dst", "B2", loc);
    detail::cube_operand(src, Mem::L1, 32, "LoadDataWithSparse", "src", "B1", loc);
    detail::cube_operand(idx, Mem::L1, 32, "LoadDataWithSparse", "idx", "B1", loc);
    if (p.ifTranspose) {
        fail("api-misuse", loc, "LoadDataWithSparse with ifTranspose, in block %d: it has no transpose (the "
             "LoadDataWithSparse page); the dense B must already be ZN in L1", blk().idx);
    }
    if (p.repeatTimes == 0) return;
    const uint64_t frac = uint64_t(p.startIndex) + p.repeatTimes;
    detail::cube_span(src, frac * 512, "LoadDataWithSparse", loc);
    // The index is a quarter of B's bytes; checked against the tensor itself, even at a fixed address.
    if (frac * 128 > idx.GetSize()) {
        fail("ub-out-of-bounds", loc,
             "LoadDataWithSparse reads index fractals %u..%llu (128 bytes each: 16 x 32 2-bit indices, a quarter of "
             "B's 512-byte fractal), %llu bytes, but idx holds %u bytes, in block %d: size the index tensor at B's "
             "bytes / 4", unsigned(p.startIndex), (unsigned long long)(frac - 1), (unsigned long long)(frac * 128),
             idx.GetSize(), blk().idx);
    }
    detail::cube_span(idx, frac * 128, "LoadDataWithSparse", loc);
    detail::cube_span(dst, uint64_t(p.repeatTimes) * 512, "LoadDataWithSparse", loc);
    const uint32_t idx_dst = mem_base(Mem::IDX) + detail::mem_offset(dst) / 4;
    const uint32_t n = p.repeatTimes;
    cube_load_sparse(blk().ub, blk().ub_init, dst.addr_, src.addr_, idx.addr_, idx_dst, p.startIndex, n);
    trace_instr(Pipe::MTE1, "LoadDataWithSparse", "int8", n, uint64_t(n) * 512, loc,
                {dst.addr_, n * 512}, {src.addr_ + p.startIndex * 512u, n * 512});
    trace_instr(Pipe::MTE1, "LoadDataWithSparse", "uint8", n, uint64_t(n) * 128, loc, {idx_dst, n * 128},
                {idx.addr_ + p.startIndex * 128u, n * 128});
}

namespace detail {
inline void sparse_params(const MmadParams& p, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) {
        fail("api-misuse", loc, "MmadWithSparse with m=%u n=%u k=%u, in block %d: each must be in [0, 4095]", p.m,
             p.n, p.k, blk().idx);
    }
    if (p.m == 1) {
        fail("api-misuse", loc, "MmadWithSparse with m = 1, in block %d: it has no GEMV mode (the MmadWithSparse "
             "page); pad A to 16 rows", blk().idx);
    }
    if (p.kDirectionAlign) {
        fail("api-misuse", loc, "MmadWithSparse with kDirectionAlign, in block %d: the sparse form does not support "
             "it (the MmadWithSparse page: false only)", blk().idx);
    }
}
}  // namespace detail

// C (L0C, int32) = A (L0A, int8, M x k) x the 4:2 sparse B (L0B, the dense k/2 x N, with the
// index LoadDataWithSparse put in the sparse index buffer), C starting from 0, the BiasTable or
// L0C as for Mmad. See sage_sim/cube.h (cube_mmad_sparse) for the selection rule.
template <typename T = int32_t, typename U = int8_t>
__aicore__ inline void MmadWithSparse(const LocalTensor<T>& dst, const LocalTensor<U>& fm,
                                      const LocalTensor<U>& filter, const MmadParams& mmadParams, SAGE_LOC) {
    using namespace sage::sim;
    static_assert(std::is_same_v<T, int32_t> && std::is_same_v<U, int8_t>,
                  "MmadWithSparse: dst int32_t, fm and filter int8_t (the MmadWithSparse page's only combination)");
    touch(loc);
    const MmadParams& p = mmadParams;
    detail::cube_operand(dst, Mem::L0C, 1024, "MmadWithSparse", "dst (C)", "CO1", loc);
    detail::cube_operand(fm, Mem::L0A, 512, "MmadWithSparse", "fm (A)", "A2", loc);
    detail::cube_operand(filter, Mem::L0B, 512, "MmadWithSparse", "filter (B)", "B2", loc);
    detail::sparse_params(p, loc);
    if (p.m == 0 || p.n == 0 || p.k == 0) return;  // a NOP, as documented
    const int init = p.isBias ? 1 : p.cmatrixInitVal ? 0 : p.cmatrixSource ? 2 : 1;
    const uint32_t m16 = (p.m + 15) / 16, n16 = (p.n + 15) / 16, k1 = (p.k + 31) / 32;
    const uint32_t kd1 = ((p.k + 3) / 4 * 2 + 31) / 32;  // B's k fractals: the dense half of k
    const uint64_t a_bytes = uint64_t(m16) * k1 * 512, b_bytes = uint64_t(kd1) * n16 * 512;
    const uint64_t c_bytes = uint64_t(m16) * n16 * 1024;
    detail::cube_span(fm, a_bytes, "MmadWithSparse", loc);
    detail::cube_span(filter, b_bytes, "MmadWithSparse", loc);
    detail::cube_span(dst, c_bytes, "MmadWithSparse", loc);
    const uint32_t idx = mem_base(Mem::IDX) + detail::mem_offset(filter) / 4;
    UbRange a{fm.addr_, uint32_t(a_bytes)}, b{filter.addr_, uint32_t(b_bytes)}, c{dst.addr_, uint32_t(c_bytes)};
    UbRange ix{idx, uint32_t(b_bytes / 4)};
    if (!ub_is_init(ix)) {
        report("uninitialized-read", Severity::Error, loc,
               "MmadWithSparse reads the sparse index of B's %llu bytes at L0B byte %u, but no LoadDataWithSparse "
               "loaded it, in block %d: load B with LoadDataWithSparse (B and its index together), not LoadData",
               (unsigned long long)b_bytes, detail::mem_offset(filter), blk().idx);
    }
    if (init == 1 && !ub_is_init(c)) {
        report("uninitialized-read", Severity::Error, loc,
               "MmadWithSparse accumulates onto L0C that no Mmad wrote, in block %d: start with cmatrixInitVal = "
               "true (or from a bias)", blk().idx);
    }
    MmadShape shape{p.m, p.n, p.k, CubeType::S8, init, mem_base(Mem::BT), k1};
    const int64_t bad = cube_mmad_sparse(blk().ub, blk().ub_init, dst.addr_, fm.addr_, filter.addr_, idx, shape);
    if (bad >= 0) {
        report("api-misuse", Severity::Error, loc,
               "MmadWithSparse reads index 3 (2'b11) for B's dense row %lld, column %lld, in block %d: each 2-bit "
               "index is 0, 1 or 2 (the 4:2 sparse index format); that pair selected nothing",
               (long long)(bad / 65536), (long long)(bad % 65536), blk().idx);
    }
    // unitFlag as a Mmad's (the MmadWithSparse page lists it for Atlas A2/A3)
    detail::unit_flag(true, p.unitFlag, c, "MmadWithSparse", loc);
    // The page: A's (16, 2*C0) fractal is selected down to (16, C0), then a plain Mmad runs, so the
    // fractal steps are those of the dense half of k. The index read is a record of its own (no
    // steps) so the sync checks see it.
    trace_instr(Pipe::M, "MmadWithSparse", "int8", m16 * n16 * kd1, uint64_t(m16) * n16 * kd1 * 16 * 16 * 32, loc,
                c, a, b);
    trace_instr(Pipe::M, "MmadWithSparse", "uint8", 0, 0, loc, {}, ix);
}

}  // namespace AscendC
