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
    if (p.ifTranspose && sizeof(T) != 2) {
        fail("api-misuse", loc,
             "LoadData with ifTranspose on %s, in block %d: on %s LoadData2DParams transposes 2-byte types (half, "
             "bfloat16_t) only; transpose int8 or float fractals with LoadDataWithTranspose",
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
    if (p.repeatTimes == 0) return;
    const uint64_t unit = sizeof(T) == 2 ? 512 : 1024;
    const uint64_t src_bytes = (uint64_t(p.startIndex) + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * unit;
    const uint64_t dst_bytes = uint64_t(p.repeatTimes - 1) * (1 + p.dstGap) * 512 +
                               (sizeof(T) == 2 ? 512 : (2 + uint64_t(p.dstFracGap)) * 512);
    detail::cube_span(src, src_bytes, "LoadDataWithTranspose", loc);
    detail::cube_span(dst, dst_bytes, "LoadDataWithTranspose", loc);
    cube_load_transpose(blk().ub, blk().ub_init, dst.addr_, src.addr_, sizeof(T), p.startIndex, p.repeatTimes,
                        p.srcStride, p.dstGap, p.dstFracGap);
    trace_instr(Pipe::MTE1, "LoadDataWithTranspose", dtype_name<T>(), p.repeatTimes, uint64_t(p.repeatTimes) * unit,
                loc, {dst.addr_, uint32_t(dst_bytes)}, {src.addr_, uint32_t(src_bytes)});
}

namespace detail {

template <typename T, typename U, typename S>
inline void mmad_types(sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    constexpr bool fp = std::is_same_v<T, float> && std::is_same_v<U, S> &&
                        (std::is_same_v<U, half> || std::is_same_v<U, bfloat16_t> || std::is_same_v<U, float>);
    constexpr bool i8 = std::is_same_v<T, int32_t> && std::is_same_v<U, int8_t> && std::is_same_v<S, int8_t>;
    if (!fp && !i8) {
        fail("dtype-unsupported", loc,
             "Mmad of %s x %s into %s, in block %d: on %s the cube multiplies half x half, bfloat16_t x bfloat16_t "
             "or float x float into float, and int8_t x int8_t into int32_t (the Mmad doc page's table)",
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
    const uint32_t k0 = 32 / sizeof(U), m16 = (p.m + 15) / 16, n16 = (p.n + 15) / 16;
    // float with kDirectionAlign: K padded to 16, two 16 x 8 fractals per 16 of K (the Mmad page)
    const uint32_t k1 = std::is_same_v<U, float> && p.kDirectionAlign ? (p.k + 15) / 16 * 2 : (p.k + k0 - 1) / k0;
    // m = 1 is GEMV: A is one ND row in L0A
    const uint64_t a_bytes = p.m == 1 ? (uint64_t(p.k) * sizeof(U) + 31) / 32 * 32 : uint64_t(m16) * k1 * 512;
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

}  // namespace AscendC
