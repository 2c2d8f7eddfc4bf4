// Transpose, the advanced API's ConfusionTranspose (adv_api/transpose, asc-devkit
// include/adv_api/transpose/confusion_transpose.h): a layout change and reshape through 16 x 16 squares.
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/张量变换/Transpose-96.md. Emulated types, on the
// shape the tiling records ([B, N, S, H/N] with S and H/N rounded up to 16; GetTransposeTilingInfo):
//   TRANSPOSE_NZ2ND_0213: src NZ [B, N, H/N/16, S/16, 16, 16] -> dst ND [B, S, N, H/N]
//   TRANSPOSE_NZ2NZ_0213: src NZ [B, N, H/N/16, S/16, 16, 16] -> dst NZ [B, S, H/N/16, N, 16]
// (axes 1 and 2 swapped). Data moves unchanged. The other types are reported as not emulated. The
// temporary space (sharedTmpBuffer, or the free UB the framework form pops) must hold
// GetTransposeMaxMinTmpSize's minimum, one square; the trace records two TransDataTo5HD per strip.
#pragma once

#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "confusion_transpose_tiling.h"

namespace AscendC {

namespace detail {

template <typename T>
inline void confusion_transpose_run(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                    const LocalTensor<uint8_t>* tmp, TransposeType type,
                                    const tiling::ConfusionTransposeTiling& t, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "[dtype-unsupported] Transpose takes 16- or 32-bit elements");
    touch(loc);
    if (!transpose_0213(uint32_t(type))) {
        fail("not-emulated", loc,
             "Transpose with TransposeType %u: sage-npu emulates TRANSPOSE_NZ2ND_0213 and TRANSPOSE_NZ2NZ_0213 of the "
             "advanced Transpose so far; run this kernel with CANN", unsigned(type));
    }
    const uint32_t b = t.param1, n = t.param2, aw = t.param3, as = t.param4, c = kCube;
    if (b == 0 || n == 0 || aw == 0 || as == 0 || aw % c != 0 || as % c != 0) {
        fail("api-misuse", loc,
             "Transpose with a tiling of B %u, N %u, S %u, H/N %u: fill it with GetTransposeTilingInfo for the same "
             "TransposeType (S and H/N rounded up to 16)", b, n, as, aw);
    }
    const uint64_t total = uint64_t(b) * n * as * aw;
    vec_src(src, "Transpose", total, loc);
    vec_dst(dst, "Transpose", total, loc);
    uint32_t maxTmp = 0, minTmp = 0;
    GetTransposeMaxMinTmpSize(TensorShape({int64_t(b), int64_t(n), int64_t(as), int64_t(aw)}), sizeof(T),
                              uint32_t(type), maxTmp, minTmp);
    advmath::Tmp tt = advmath::take_tmp("Transpose", "GetTransposeMaxMinTmpSize", tmp, uint32_t(total), minTmp, loc);
    const bool nd = type == TransposeType::TRANSPOSE_NZ2ND_0213;
    const T* s = src.data();
    T* d = dst.data();
    for (uint32_t ib = 0; ib < b; ++ib) {
        for (uint32_t in = 0; in < n; ++in) {
            for (uint32_t is = 0; is < as; ++is) {
                for (uint32_t iw = 0; iw < aw; ++iw) {
                    const uint64_t from = ((uint64_t(ib) * n + in) * (aw / c) + iw / c) * as * c + uint64_t(is) * c + iw % c;
                    const uint64_t to = nd ? ((uint64_t(ib) * as + is) * n + in) * aw + iw
                                           : ((uint64_t(ib) * as + is) * (aw / c) + iw / c) * n * c + uint64_t(in) * c + iw % c;
                    d[to] = s[from];
                }
            }
        }
    }
    ub_mark(dst.range(total));
    advmath::done(tt);
    const uint64_t strip = std::max<uint64_t>(kCubeElems, tt.bytes / sizeof(T) / kCubeElems * kCubeElems);
    trace_chunks({"TransDataTo5HD", "TransDataTo5HD"}, dtype_name<T>(), sizeof(T), total, strip, loc, dst.range(total),
                 src.range(total));
}

}  // namespace detail

template <typename T>
__aicore__ inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, TransposeType transposeType,
                                 const tiling::ConfusionTransposeTiling& tiling, SAGE_LOC) {
    detail::confusion_transpose_run(dst, src, &sharedTmpBuffer, transposeType, tiling, loc);
}

template <typename T>
__aicore__ inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, TransposeType transposeType,
                                 const tiling::ConfusionTransposeTiling& tiling, SAGE_LOC) {
    detail::confusion_transpose_run(dst, src, nullptr, transposeType, tiling, loc);
}

}  // namespace AscendC
