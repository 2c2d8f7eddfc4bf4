// DropOut (adv_api/filter, asc-devkit include/adv_api/filter/dropout.h): keep src where the mask
// says so, zero elsewhere, and divide by keepProb.
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数据过滤/DropOut.md. src and dst are
// [firstAxis, srcLastAxis]; the mask is [firstAxis, maskLastAxis] uint8_t, in one of four modes
// (dropOutMode, or 0: inferred from the shapes):
//   1 byte mode with padding (maskLastAxis > srcLastAxis)   2 byte mode (maskLastAxis == srcLastAxis)
//   3 bit mode (maskLastAxis * 8 == srcLastAxis)             4 bit mode with padding (maskLastAxis * 8 > srcLastAxis)
// A byte keeps its element when it is nonzero; in bit mode bit (j % 8) of byte j / 8 of the row
// (least significant bit first) keeps element j. Kept elements are multiplied by 1 / keepProb
// rounded to T (the Muls the device issues), dropped ones are 0. half and float; the temporary
// buffer must hold GetDropOutMaxMinTmpSize's minimum.
#pragma once

#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "dropout_tiling.h"

namespace AscendC {

#ifndef SAGE_DROPOUT_SHAPE_INFO
#define SAGE_DROPOUT_SHAPE_INFO
struct DropOutShapeInfo {
    __aicore__ DropOutShapeInfo() {}
    uint32_t firstAxis = 0;
    uint32_t srcLastAxis = 0;
    uint32_t maskLastAxis = 0;
};
#endif

namespace detail {

// The mode DropOut runs (1..4), 0 when the shapes fit none.
inline uint32_t dropout_mode(uint32_t given, const DropOutShapeInfo& s) {
    if (given != 0) return given;
    if (s.maskLastAxis == s.srcLastAxis) return 2;
    if (s.maskLastAxis > s.srcLastAxis) return 1;
    if (uint64_t(s.maskLastAxis) * 8 == s.srcLastAxis) return 3;
    return uint64_t(s.maskLastAxis) * 8 > s.srcLastAxis ? 4 : 0;
}

template <typename T, uint32_t dropOutMode>
inline void dropout_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& mask,
                        const LocalTensor<uint8_t>* tmp, float keepProb, const DropOutShapeInfo& info,
                        sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(one_of<T, half, float>(), "[dtype-unsupported] DropOut takes half or float");
    touch(loc);
    const uint32_t mode = dropout_mode(dropOutMode, info);
    const bool bits = mode >= 3;
    const bool fits = mode != 0 && info.firstAxis && info.srcLastAxis &&
                      (bits ? uint64_t(info.maskLastAxis) * 8 >= info.srcLastAxis : info.maskLastAxis >= info.srcLastAxis);
    if (!fits || !(keepProb > 0.0f && keepProb < 1.0f)) {
        fail("api-misuse", loc,
             "DropOut with firstAxis %u, srcLastAxis %u, maskLastAxis %u (mode %u) and keepProb %g: the mask row must "
             "cover the source row (a byte or a bit per element) and keepProb lie in (0, 1) (DropOut.md)",
             info.firstAxis, info.srcLastAxis, info.maskLastAxis, mode, double(keepProb));
    }
    const uint64_t n = uint64_t(info.firstAxis) * info.srcLastAxis, nm = uint64_t(info.firstAxis) * info.maskLastAxis;
    vec_src(src, "DropOut", n, loc);
    vec_src(mask, "DropOut", nm, loc);
    vec_dst(dst, "DropOut", n, loc);
    advmath::Tmp t = advmath::take_tmp("DropOut", "GetDropOutMaxMinTmpSize", tmp, uint32_t(n),
                                       GetDropOutMinTmpSize(TensorShape({int64_t(info.firstAxis),
                                                                         int64_t(info.srcLastAxis)}), sizeof(T), false),
                                       loc);
    const float k = float(down<T>(1.0f / keepProb));
    const T* s = src.data();
    const uint8_t* m = mask.data();
    T* d = dst.data();
    for (uint32_t r = 0; r < info.firstAxis; ++r) {
        const uint8_t* row = m + uint64_t(r) * info.maskLastAxis;
        for (uint32_t j = 0; j < info.srcLastAxis; ++j) {
            const bool keep = bits ? (row[j / 8] >> (j % 8)) & 1u : row[j] != 0;
            const uint64_t i = uint64_t(r) * info.srcLastAxis + j;
            d[i] = keep ? down<T>(float(s[i]) * k) : T(0.0f);
        }
    }
    ub_mark(dst.range(n));
    advmath::done(t);
    if (mode == 1 || mode == 4) trace_steps({"GatherMask"}, "uint8_t", 1, nm, loc, t.range, mask.range(nm));
    trace_chunks({"Select", "Muls"}, dtype_name<T>(), sizeof(T), n, 0, loc, dst.range(n), src.range(n), mask.range(nm));
}

}  // namespace detail

template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
__aicore__ inline void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                               const LocalTensor<uint8_t>& maskLocal, const LocalTensor<uint8_t>& sharedTmpBuffer,
                               const float keepProb, const DropOutShapeInfo& info, SAGE_LOC) {
    detail::dropout_run<T, dropOutMode>(dstLocal, srcLocal, maskLocal, &sharedTmpBuffer, keepProb, info, loc);
}

template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
__aicore__ inline void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                               const LocalTensor<uint8_t>& maskLocal, const float keepProb,
                               const DropOutShapeInfo& info, SAGE_LOC) {
    detail::dropout_run<T, dropOutMode>(dstLocal, srcLocal, maskLocal, nullptr, keepProb, info, loc);
}

}  // namespace AscendC
