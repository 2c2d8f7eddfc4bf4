// Pad and UnPad (adv_api/pad, asc-devkit include/adv_api/pad/pad.h): the width of a [height, width]
// tensor padded to 32 bytes, or trimmed.
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/张量变换/Pad.md and UnPad.md; the shape comes from
// the tiling (PadTilingFunc / UnPadTilingFunc: srcHeight, srcWidth, srcOriWidth).
//   Pad, width not 32-byte aligned (scene 1): src is [height, width] packed; dst rows are width rounded
//     up to 32 bytes: leftPad copies of padValue, the row, rightPad copies (leftPad + width + rightPad
//     at most the aligned width; columns past that are left as they were).
//   Pad, width aligned with srcOriWidth < width (scene 2): dst is src with columns [srcOriWidth,
//     srcOriWidth + rightPad) set to padValue; only a right pad. An aligned width with no redundant
//     columns is not a Pad case.
//   UnPad: width 32-byte aligned; dst is [height, width - leftPad - rightPad] packed.
// padValue (int32_t) is converted to T. Pad needs GetPadMaxMinTmpSize's minimum of temporary space
// (the sharedTmpBuffer, or the free UB in the form without one); UnPad needs none on Atlas A2.
// The trace records the device's 16-row stages: TransDataTo5HD in and out around Duplicate/Copy.
#pragma once

#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "pad_tiling.h"

namespace AscendC {

#ifndef SAGE_PAD_PARAMS
#define SAGE_PAD_PARAMS
struct PadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
    int32_t padValue = 0;
};

struct UnPadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
};
#endif

namespace detail {

template <typename T>
inline void pad_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const PadParams& p,
                    const LocalTensor<uint8_t>* tmp, const tiling::PadTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(one_of<T, int16_t, uint16_t, half, int32_t, uint32_t, float>(),
                  "[dtype-unsupported] Pad takes int16_t, uint16_t, half, int32_t, uint32_t or float");
    touch(loc);
    const uint32_t h = t.srcHeight, w = t.srcWidth, blk = 32 / sizeof(T);
    const uint32_t aw = (w + blk - 1) / blk * blk;
    const bool scene1 = w % blk != 0;
    const bool ok = h && w && uint64_t(h) * w % blk == 0 &&
                    (scene1 ? uint32_t(p.leftPad) + w + p.rightPad <= aw
                            : p.leftPad == 0 && t.srcOriWidth < w && t.srcOriWidth + p.rightPad <= w);
    if (!ok) {
        fail("api-misuse", loc,
             "Pad of [%u, %u] (srcOriWidth %u) with leftPad %u, rightPad %u: %s (Pad.md)", h, w, t.srcOriWidth,
             unsigned(p.leftPad), unsigned(p.rightPad),
             scene1 ? "the padded row must fit the width rounded up to 32 bytes, and the source fill whole 32-byte blocks"
                    : "a 32-byte-aligned width takes only a right pad, over redundant columns (srcOriWidth < width) "
                      "that it stays within");
    }
    const uint64_t n = uint64_t(h) * w, nd = uint64_t(h) * aw;
    vec_src(src, "Pad", n, loc);
    vec_dst(dst, "Pad", nd, loc);
    uint32_t maxTmp = 0, minTmp = 0;
    GetPadMaxMinTmpSize(TensorShape({int64_t(h), int64_t(w)}), sizeof(T), maxTmp, minTmp);
    advmath::Tmp tt = advmath::take_tmp("Pad", "GetPadMaxMinTmpSize", tmp, uint32_t(n), minTmp, loc);
    T fillv;
    if constexpr (std::is_integral<T>::value) {
        fillv = T(p.padValue);
    } else {
        fillv = down<T>(float(p.padValue));
    }
    const T* s = src.data();
    T* d = dst.data();
    for (uint32_t r = 0; r < h; ++r) {
        T* row = d + uint64_t(r) * aw;
        if (scene1) {
            for (uint32_t c = 0; c < p.leftPad; ++c) row[c] = fillv;
            for (uint32_t c = 0; c < w; ++c) row[p.leftPad + c] = s[uint64_t(r) * w + c];
            for (uint32_t c = 0; c < p.rightPad; ++c) row[p.leftPad + w + c] = fillv;
            ub_mark(dst[r * aw].range(uint32_t(p.leftPad) + w + p.rightPad));
        } else {
            for (uint32_t c = 0; c < w; ++c) row[c] = s[uint64_t(r) * w + c];
            for (uint32_t c = 0; c < p.rightPad; ++c) row[t.srcOriWidth + c] = fillv;
            ub_mark(dst[r * aw].range(w));
        }
    }
    advmath::done(tt);
    const uint64_t stage = std::max<uint64_t>(1, tt.bytes / 2 / sizeof(T));
    trace_chunks({"TransDataTo5HD", "Duplicate", "TransDataTo5HD"}, dtype_name<T>(), sizeof(T), nd, stage, loc,
                 dst.range(nd), src.range(n));
}

template <typename T>
inline void unpad_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const UnPadParams& p,
                      const LocalTensor<uint8_t>* tmp, const tiling::UnPadTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(one_of<T, int16_t, uint16_t, half, int32_t, uint32_t, float>(),
                  "[dtype-unsupported] UnPad takes int16_t, uint16_t, half, int32_t, uint32_t or float");
    touch(loc);
    const uint32_t h = t.srcHeight, w = t.srcWidth, blk = 32 / sizeof(T);
    if (h == 0 || w == 0 || w % blk != 0 || uint32_t(p.leftPad) + p.rightPad >= w) {
        fail("api-misuse", loc,
             "UnPad of [%u, %u] with leftPad %u, rightPad %u: the width must be 32-byte aligned and keep at least one "
             "column (UnPad.md)", h, w, unsigned(p.leftPad), unsigned(p.rightPad));
    }
    const uint32_t ow = w - p.leftPad - p.rightPad;
    const uint64_t n = uint64_t(h) * w, nd = uint64_t(h) * ow;
    vec_src(src, "UnPad", n, loc);
    vec_dst(dst, "UnPad", nd, loc);
    if (tmp) tmp->check("UnPad", 0, loc);  // Atlas A2 needs no temporary space (GetUnPadMaxMinTmpSize: 0)
    const T* s = src.data();
    T* d = dst.data();
    for (uint32_t r = 0; r < h; ++r) {
        for (uint32_t c = 0; c < ow; ++c) d[uint64_t(r) * ow + c] = s[uint64_t(r) * w + p.leftPad + c];
    }
    ub_mark(dst.range(nd));
    trace_steps({"GatherMask"}, dtype_name<T>(), sizeof(T), n, loc, dst.range(nd), src.range(n));
}

}  // namespace detail

template <typename T>
__aicore__ inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const PadParams& padParams,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::PadTiling& tiling, SAGE_LOC) {
    detail::pad_run(dstTensor, srcTensor, padParams, &sharedTmpBuffer, tiling, loc);
}

template <typename T>
__aicore__ inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const PadParams& padParams,
                           const tiling::PadTiling& tiling, SAGE_LOC) {
    detail::pad_run(dstTensor, srcTensor, padParams, nullptr, tiling, loc);
}

template <typename T>
__aicore__ inline void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                             const UnPadParams& unPadParams, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             const tiling::UnPadTiling& tiling, SAGE_LOC) {
    detail::unpad_run(dstTensor, srcTensor, unPadParams, &sharedTmpBuffer, tiling, loc);
}

template <typename T>
__aicore__ inline void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                             const UnPadParams& unPadParams, const tiling::UnPadTiling& tiling, SAGE_LOC) {
    detail::unpad_run(dstTensor, srcTensor, unPadParams, nullptr, tiling, loc);
}

}  // namespace AscendC
