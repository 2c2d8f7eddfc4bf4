// Transposes (kernel_operator_vec_transpose_intf.h):
//   Transpose(dst, src)   one 16 x 16 matrix of 16-bit elements: dst[i][j] = src[j][i]
//   TransDataTo5HD        the 16-address forms (LocalTensor or uint64_t UB addresses), 16-bit
//                         elements: per repeat, element j of dst block i is element i of src block j
//   Transpose(dst, src, sharedTmpBuffer, TransposeParamsExt)   the enhanced form: the 16 x 16
//                         transpose, or [N,C,H,W] <-> [N,H,W,C] through a scratch buffer
#pragma once

#include <vector>

#include "../sage_sim/vec.h"

namespace AscendC {

enum class TransposeType : uint8_t {
    TRANSPOSE_TYPE_NONE,
    TRANSPOSE_NZ2ND_0213,
    TRANSPOSE_NZ2NZ_0213,
    TRANSPOSE_NZ2NZ_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITHOUT_N,
    TRANSPOSE_NZ2NZ_012_WITHOUT_N,
    TRANSPOSE_ND2ND_ONLY,
    TRANSPOSE_ND_UB_GM,
    TRANSPOSE_GRAD_ND_UB_GM,
    TRANSPOSE_ND2ND_B16,
    TRANSPOSE_NCHW2NHWC,
    TRANSPOSE_NHWC2NCHW,
    TRANSPOSE_ND2ND_021,  // the advanced Transpose's (adv_api/transpose/confusion_transpose.h)
    TRANSPOSE_ND2ND_102,
    TRANSPOSE_ND2ND_210,
    TRANSPOSE_ND2NZ_WITH_INTLV,
};

struct TransDataTo5HDParams {
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
    constexpr __aicore__ TransDataTo5HDParams() = default;
    constexpr __aicore__ TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn,
                                              const uint8_t repeatTimesIn, const uint16_t dstRepStrideIn,
                                              const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
};

struct TransposeParamsExt {
    uint16_t nSize = 0;
    uint16_t cSize = 0;
    uint16_t hSize = 0;
    uint16_t wSize = 0;
    TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
    constexpr __aicore__ TransposeParamsExt() = default;
    constexpr __aicore__ TransposeParamsExt(const uint16_t nSizeIn, const uint16_t cSizeIn, const uint16_t hSizeIn,
                                            const uint16_t wSizeIn, const TransposeType transposeTypeIn)
        : nSize(nSizeIn), cSize(cSizeIn), hSize(hSizeIn), wSize(wSizeIn), transposeType(transposeTypeIn) {}
};

constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

}  // namespace AscendC

namespace sage {
namespace sim {

// One 16 x 16 matrix of 16-bit elements, dst[i][j] = src[j][i]; src and dst may be the same.
template <typename T>
inline void transpose_16x16(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, SrcLoc loc) {
    vec_src(src, "Transpose", 256, loc);
    vec_dst(dst, "Transpose", 256, loc);
    T tmp[256];
    const T* s = src.data();
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) tmp[i * 16 + j] = s[j * 16 + i];
    memcpy(static_cast<void*>(dst.data()), tmp, sizeof tmp);
    vec_done(dst, "Transpose", 256, loc, src.range(256));
}

// TransDataTo5HD on UB byte addresses (the operands are checked by the caller). Repeat r reads
// src block j at src[j] + r * srcRepStride blocks and writes dst block i at dst[i] + r *
// dstRepStride blocks (strides in 32-byte blocks). Everything is read before anything is
// written, so overlapping lists behave as on the device's register-staged instruction.
template <typename T>
inline void trans5hd_core(const uint32_t (&dst)[16], const uint32_t (&src)[16], const AscendC::TransDataTo5HDParams& p,
                          SrcLoc loc) {
    const uint32_t reps = p.repeatTimes;
    const uint64_t ds = uint64_t(p.dstRepStride) * 32, ss = uint64_t(p.srcRepStride) * 32;
    uint8_t* ub = blk().ub;
    std::vector<T> blocks(size_t(reps) * 256);
    for (uint32_t r = 0; r < reps; ++r)
        for (int j = 0; j < 16; ++j) memcpy(&blocks[(r * 16 + j) * 16], ub + src[j] + r * ss, 32);
    for (uint32_t r = 0; r < reps; ++r) {
        for (int i = 0; i < 16; ++i) {
            T* d = reinterpret_cast<T*>(ub + dst[i] + r * ds);
            for (int j = 0; j < 16; ++j) d[j] = blocks[(r * 16 + j) * 16 + i];
            ub_mark(UbRange{uint32_t(dst[i] + r * ds), 32});
        }
    }
    const uint32_t span_d = reps ? uint32_t((reps - 1) * ds + 32) : 0, span_s = reps ? uint32_t((reps - 1) * ss + 32) : 0;
    trace_instr(Pipe::V, "TransDataTo5HD", dtype_name<T>(), reps * 256, uint64_t(reps) * 512, loc,
                UbRange{dst[0], span_d}, UbRange{src[0], span_s});
}

// A UB address from TransDataTo5HD's uint64_t form: what GetPhyAddr() gave (a pointer into
// this block's UB here) or a raw UB byte address; `span` bytes from it must lie in the UB.
inline uint32_t ub_addr_arg(uint64_t v, uint64_t span, const char* what, int i, SrcLoc loc) {
    const uint64_t base = reinterpret_cast<uint64_t>(blk().ub);
    const uint64_t off = v >= base ? v - base : v;
    if (off + span > rt().ub_bytes) {
        fail("ub-out-of-bounds", loc,
             "TransDataTo5HD: %s[%d] = 0x%llx is not a Unified Buffer address with %llu bytes after it (the UB "
             "holds %zu bytes, block %d): fill the list with tensor.GetPhyAddr() of UB tensors",
             what, i, (unsigned long long)v, (unsigned long long)span, rt().ub_bytes, blk().idx);
    }
    if (off % 32 != 0) {
        report("unaligned-copy", Severity::Error, loc,
               "TransDataTo5HD: %s[%d] starts %llu bytes past a 32-byte boundary (block %d): every address in "
               "the lists must be 32-byte aligned",
               what, i, (unsigned long long)(off % 32), blk().idx);
    }
    return uint32_t(off);
}

}  // namespace sim
}  // namespace sage

namespace AscendC {

template <typename T>
__aicore__ inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, SAGE_LOC) {
    constexpr bool ok = ::sage::sim::one_of<T, half, int16_t, uint16_t>();
    SAGE_DTYPE_GATE("Transpose", T, ok, "half, int16_t, uint16_t (one 16 x 16 matrix)")
    if constexpr (ok) {
        sage::sim::touch(loc);
        sage::sim::transpose_16x16(dst, src, loc);
    }
}

#define SAGE_5HD_GATE(T)                                                                                         \
    constexpr bool known = ::sage::sim::one_of<T, int8_t, uint8_t, int16_t, uint16_t, half, float, int32_t,     \
                                               uint32_t>();                                                      \
    SAGE_DTYPE_GATE("TransDataTo5HD", T, known, "int8_t, uint8_t, int16_t, uint16_t, half, float, int32_t, uint32_t") \
    static_assert(!known || sizeof(T) == 2,                                                                      \
                  "TransDataTo5HD: the emulator implements the 16-bit form (half, int16_t, uint16_t) only so far; " \
                  "the 8- and 32-bit forms are not emulated yet");

template <typename T>
__aicore__ inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                                      const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                                      const TransDataTo5HDParams& nchwconvParams, SAGE_LOC) {
    SAGE_5HD_GATE(T)
    if constexpr (known && sizeof(T) == 2) {
        using namespace sage::sim;
        touch(loc);
        const uint32_t reps = nchwconvParams.repeatTimes;
        const uint64_t ds = uint64_t(nchwconvParams.dstRepStride) * 16, ss = uint64_t(nchwconvParams.srcRepStride) * 16;
        uint32_t d[16], s[16];
        for (int j = 0; j < 16; ++j) {
            vec_src(srcList[j], "TransDataTo5HD", reps ? (reps - 1) * ss + 16 : 0, loc);
            vec_dst(dstList[j], "TransDataTo5HD", reps ? (reps - 1) * ds + 16 : 0, loc);
            d[j] = dstList[j].addr_;
            s[j] = srcList[j].addr_;
        }
        trans5hd_core<T>(d, s, nchwconvParams, loc);
    }
}

// The address-list form: each entry a UB address (LocalTensor::GetPhyAddr() cast to uint64_t).
template <typename T>
__aicore__ inline void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE],
                                      uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                                      const TransDataTo5HDParams& nchwconvParams, SAGE_LOC) {
    SAGE_5HD_GATE(T)
    if constexpr (known && sizeof(T) == 2) {
        using namespace sage::sim;
        touch(loc);
        const uint32_t reps = nchwconvParams.repeatTimes;
        const uint64_t dspan = reps ? (reps - 1) * uint64_t(nchwconvParams.dstRepStride) * 32 + 32 : 0;
        const uint64_t sspan = reps ? (reps - 1) * uint64_t(nchwconvParams.srcRepStride) * 32 + 32 : 0;
        uint32_t d[16], s[16];
        for (int j = 0; j < 16; ++j) {
            d[j] = ub_addr_arg(dstList[j], dspan, "dstList", j, loc);
            s[j] = ub_addr_arg(srcList[j], sspan, "srcList", j, loc);
            for (uint32_t r = 0; r < reps; ++r) {
                ub_check_init(UbRange{uint32_t(s[j] + r * uint64_t(nchwconvParams.srcRepStride) * 32), 32},
                              "TransDataTo5HD", loc);
            }
        }
        trans5hd_core<T>(d, s, nchwconvParams, loc);
    }
}
#undef SAGE_5HD_GATE

}  // namespace AscendC

// ---------------------------------------------------------------- the enhanced Transpose

namespace sage {
namespace sim {

// The scratch the enhanced Transpose needs on A2/A3 (Transpose doc page, sharedTmpBuffer table):
// (C + 2) tiles of h0 x w0 for NCHW2NHWC, (2C + 1) for NHWC2NCHW; h0 = 32 for 8-bit types, else
// 16; w0 = one 32-byte block of elements. The inference series (310P) needs none.
template <typename T>
constexpr uint64_t transpose4d_tmp_bytes(AscendC::TransposeType type, uint32_t c) {
    if (SAGE_CHIP_FAMILY == 310) return 0;
    const uint64_t tile = (sizeof(T) == 1 ? 32 : 16) * (32 / sizeof(T)) * sizeof(T);
    return (type == AscendC::TransposeType::TRANSPOSE_NCHW2NHWC ? c + 2 : 2 * uint64_t(c) + 1) * tile;
}

// The instructions the A2 implementation issues per image (impl dav_c220 Transpose4DImpl), for
// the cost model: per 32-byte block of the H*W plane one TransDataTo5HD of C repeats spreading it
// over the scratch; per channel row of those tiles a one-block UB->UB DataCopy gathering the
// channels; per gathered 16-row tile one TransDataTo5HD back and one DataCopy into dst.
template <typename T>
inline void transpose4d_trace(uint32_t n, uint32_t c, uint32_t hw, UbRange w, UbRange r, SrcLoc loc) {
    const uint32_t plane_blocks = uint32_t(uint64_t(hw) * sizeof(T) / 32);
    const char* dt = dtype_name<T>();
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t b = 0; b < plane_blocks; ++b)
            trace_instr(Pipe::V, "TransDataTo5HD", dt, c * 256, c * 512ull, loc, {}, r);
        for (uint64_t k = 0; k < uint64_t(c) * plane_blocks * 16; ++k)
            trace_instr(Pipe::V, "DataCopy", dt, 32 / sizeof(T), 32, loc);
        for (uint64_t k = 0; k < uint64_t(c) * plane_blocks; ++k) {
            trace_instr(Pipe::V, "TransDataTo5HD", dt, 256, 512, loc);
            trace_instr(Pipe::V, "DataCopy", dt, 32 / sizeof(T), 32, loc, w);
        }
    }
}

// [N,C,H,W] <-> [N,H,W,C]: the parameter limits of the doc page, the scratch size, no overlap.
template <typename T>
inline bool transpose4d_checks(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                               const AscendC::LocalTensor<uint8_t>& tmp, const AscendC::TransposeParamsExt& p,
                               uint64_t total, SrcLoc loc) {
    const uint64_t hw = uint64_t(p.hSize) * p.wSize;
    if (p.cSize > 4095 || hw > 4095) {
        fail("crash", loc,
             "Transpose [N,C,H,W] <-> [N,H,W,C] with cSize %u and hSize * wSize %llu: the device takes cSize and "
             "hSize * wSize up to 4095 (block %d)",
             unsigned(p.cSize), (unsigned long long)hw, blk().idx);
    }
    if (hw * sizeof(T) % 32 != 0) {
        report("unaligned-copy", Severity::Error, loc,
               "Transpose [N,C,H,W] <-> [N,H,W,C] with hSize * wSize = %llu %s elements (%llu bytes): one H*W "
               "plane must be whole 32-byte blocks (a multiple of %u elements), or the device mixes planes",
               (unsigned long long)hw, dtype_name<T>(), (unsigned long long)(hw * sizeof(T)),
               uint32_t(32 / sizeof(T)));
        return false;
    }
    const uint64_t need = transpose4d_tmp_bytes<T>(p.transposeType, p.cSize);
    if (need) tmp.check("Transpose (sharedTmpBuffer)", 0, loc);
    if (uint64_t(tmp.size_) < need) {
        fail("ub-out-of-bounds", loc,
             "Transpose's sharedTmpBuffer holds %u bytes but cSize %u needs %llu on %s ((%s) tiles of %u bytes), "
             "in block %d: the device would write past it. Give it at least %llu bytes",
             tmp.size_, unsigned(p.cSize), (unsigned long long)need, SAGE_CHIP_LABEL,
             p.transposeType == AscendC::TransposeType::TRANSPOSE_NCHW2NHWC ? "cSize + 2" : "2 * cSize + 1",
             uint32_t(sizeof(T) == 1 ? 1024 : 512), blk().idx, (unsigned long long)need);
    }
    vec_src(src, "Transpose", total, loc);
    vec_dst(dst, "Transpose", total, loc);
    const uint64_t bytes = total * sizeof(T);
    if (dst.addr_ < src.addr_ + bytes && src.addr_ < dst.addr_ + bytes) {
        fail("crash", loc,
             "Transpose [N,C,H,W] <-> [N,H,W,C] with dst overlapping src (UB bytes %u and %u, %llu bytes each), "
             "in block %d: this transposeType does not allow src and dst to share memory; give dst its own buffer",
             dst.addr_, src.addr_, (unsigned long long)bytes, blk().idx);
    }
    return true;
}

// dst[n][h][w][c] = src[n][c][h][w] (NCHW2NHWC), or the inverse (NHWC2NCHW).
template <typename T>
inline void transpose4d_move(T* d, const T* s, uint32_t n, uint32_t c, uint32_t hw, bool to_nhwc) {
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t img = uint64_t(i) * c * hw;
        for (uint32_t ch = 0; ch < c; ++ch) {
            for (uint32_t k = 0; k < hw; ++k) {
                const uint64_t chw = img + uint64_t(ch) * hw + k, hwc = img + uint64_t(k) * c + ch;
                if (to_nhwc) d[hwc] = s[chw];
                else d[chw] = s[hwc];
            }
        }
    }
}

}  // namespace sim
}  // namespace sage

namespace AscendC {

// The enhanced Transpose: transposeParams.transposeType picks the 16 x 16 transpose
// (TRANSPOSE_ND2ND_B16, uint16_t on A2), [N,C,H,W] -> [N,H,W,C] (TRANSPOSE_NCHW2NHWC) or back
// (TRANSPOSE_NHWC2NCHW); TRANSPOSE_TYPE_NONE does nothing. The other types are not supported by
// the chip. sharedTmpBuffer is the device's scratch: its contents afterwards are unspecified.
template <typename T>
__aicore__ inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const TransposeParamsExt& transposeParams,
                                 SAGE_LOC) {
    constexpr bool ok = ::sage::sim::one_of<T, int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float>();
    SAGE_DTYPE_GATE("Transpose", T, ok, "int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float")
    if constexpr (ok) {
        using namespace sage::sim;
        touch(loc);
        const TransposeType type = transposeParams.transposeType;
        if (type == TransposeType::TRANSPOSE_TYPE_NONE) return;
        if (type == TransposeType::TRANSPOSE_ND2ND_B16) {
            if constexpr (sizeof(T) == 2) {
                if (!std::is_same<T, uint16_t>::value) {
                    report("dtype-unsupported", Severity::Warning, loc,
                           "Transpose with TRANSPOSE_ND2ND_B16 takes uint16_t on %s, not %s; the 16 x 16 transpose "
                           "moves the same bits, so ReinterpretCast<uint16_t> both tensors",
                           SAGE_CHIP_LABEL, dtype_name<T>());
                }
                transpose_16x16(dst, src, loc);
                return;
            }
            fail("crash", loc, "Transpose with TRANSPOSE_ND2ND_B16 on %s elements: it transposes one 16 x 16 matrix "
                 "of 16-bit elements (uint16_t on %s)", dtype_name<T>(), SAGE_CHIP_LABEL);
        }
        if (type != TransposeType::TRANSPOSE_NCHW2NHWC && type != TransposeType::TRANSPOSE_NHWC2NCHW) {
            fail("crash", loc,
                 "Transpose with transposeType %u: %s supports TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC and "
                 "TRANSPOSE_NHWC2NCHW (and TRANSPOSE_TYPE_NONE, which does nothing); the NZ and ND_UB_GM types are "
                 "not supported",
                 unsigned(type), SAGE_CHIP_LABEL);
        }
        const TransposeParamsExt& p = transposeParams;
        const uint32_t hw = uint32_t(p.hSize) * p.wSize;
        const uint64_t total = uint64_t(p.nSize) * p.cSize * hw;
        if (total == 0) return;  // the doc: a zero size computes nothing and writes nothing
        if (!transpose4d_checks(dst, src, sharedTmpBuffer, p, total, loc)) return;
        transpose4d_move(dst.data(), src.data(), p.nSize, p.cSize, hw, type == TransposeType::TRANSPOSE_NCHW2NHWC);
        ub_mark(dst.range(total));
        ub_mark(sharedTmpBuffer.range(transpose4d_tmp_bytes<T>(type, p.cSize)));
        transpose4d_trace<T>(p.nSize, p.cSize, hw, dst.range(total), src.range(total), loc);
    }
}

}  // namespace AscendC
