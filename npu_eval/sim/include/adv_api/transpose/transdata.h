// TransData (adv_api/transpose, asc-devkit include/adv_api/transpose/transdata.h): 3-D convolution
// data formats, converted in UB.
//
//   TransData<config, T, U, S>(dst, src, [sharedTmpBuffer,] TransDataParams<U, S>{srcLayout, dstLayout})
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/张量变换/TransData.md. With C0 = N0 = 16 (16-bit
// types: half, bfloat16_t, uint16_t, int16_t) and the layouts' shapes the original ones:
//   NCDHW -> NDC1HWC0      [N, C, D, H, W] -> [N, D, C1, H, W, C0]
//   NDC1HWC0 -> NCDHW      the reverse
//   NCDHW -> FRACTAL_Z_3D  [N, C, D, H, W] -> [D, C1, H, W, N1, N0, C0]
//   FRACTAL_Z_3D -> NCDHW  the reverse
// On the NCDHW side H and W are merged and that axis is padded to 32 bytes in UB (HW rounded up to
// 16): the input must be laid out so, and the output is written so (the padding columns are
// written as 0, the device's are unspecified). C and N padding in the 5HD and fractal formats is 0.
// The temporary space (sharedTmpBuffer, or the free UB the framework form pops) must hold
// GetTransDataMaxMinTmpSize's size; the trace records the TransDataTo5HD passes the device runs.
#pragma once

#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "../../basic_api/kernel_operator_layout.h"
#include "transdata_tiling.h"

namespace AscendC {

template <typename T, typename U>
struct TransDataParams {
    T srcLayout;
    U dstLayout;
};

namespace detail {

template <typename L>
inline std::vector<int64_t> layout_dims(const L& l) {
    return std::apply([](const auto&... e) { return std::vector<int64_t>{int64_t(e)...}; }, l.GetShape());
}

// The offset of NCDHW element (n, c, d, hw) in the other format, and whether it exists there.
inline uint64_t transdata_other(DataFormat f, const TransDataDims& p, int64_t n, int64_t c, int64_t d, int64_t hw) {
    const int64_t c1 = transdata_ceil(p.c, 16), n1 = transdata_ceil(p.n, 16), HW = p.h * p.w;
    if (f == DataFormat::NDC1HWC0) return uint64_t((((n * p.d + d) * c1 + c / 16) * HW + hw) * 16 + c % 16);
    return uint64_t(((((d * c1 + c / 16) * HW + hw) * n1 + n / 16) * 16 + n % 16) * 16 + c % 16);  // FRACTAL_Z_3D
}

// Moves every element between the NCDHW side (H * W padded to 16) and the other format; the
// padding the conversion creates is 0.
template <typename T>
inline void transdata_move(T* d, const T* s, DataFormat other, bool toNc, const TransDataDims& p, uint64_t otherSize) {
    const int64_t c1 = transdata_ceil(p.c, 16), n1 = transdata_ceil(p.n, 16), HW = p.h * p.w;
    const int64_t hwPad = transdata_ceil(HW, 16) * 16;
    const int64_t nAll = other == DataFormat::FRACTAL_Z_3D ? n1 * 16 : p.n;
    if (!toNc) std::fill(d, d + otherSize, T(0));
    for (int64_t n = 0; n < nAll; ++n) {
        for (int64_t c = 0; c < (toNc ? p.c : c1 * 16); ++c) {
            for (int64_t dd2 = 0; dd2 < p.d; ++dd2) {
                for (int64_t hw = 0; hw < (toNc ? hwPad : HW); ++hw) {
                    const bool real = n < p.n && c < p.c && hw < HW;
                    const uint64_t nc = uint64_t(((n * p.c + c) * p.d + dd2) * hwPad + hw);
                    if (toNc) {
                        if (n < p.n) d[nc] = hw < HW ? s[transdata_other(other, p, n, c, dd2, hw)] : T(0);
                    } else if (real) {
                        d[transdata_other(other, p, n, c, dd2, hw)] = s[nc];
                    }
                }
            }
        }
    }
}

template <const TransDataConfig& config, typename T>
inline void transdata_run(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                          const std::vector<int64_t>& sd, const std::vector<int64_t>& dd, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(one_of<T, half, bfloat16_t, uint16_t, int16_t>(),
                  "[dtype-unsupported] TransData takes half, bfloat16_t, uint16_t or int16_t");
    touch(loc);
    TransDataDims p;
    if (!transdata_dims(config.srcFormat, config.dstFormat, sd, dd, p)) {
        fail("api-misuse", loc,
             "TransData from format %d to %d: the conversion must be one of NCDHW <-> NDC1HWC0, NCDHW <-> FRACTAL_Z_3D, "
             "and the layouts' shapes match (C1 = ceil(C / 16), N1 = ceil(N / 16), C0 = N0 = 16) (TransData.md)",
             int(config.srcFormat), int(config.dstFormat));
    }
    const bool toNc = config.dstFormat == DataFormat::NCDHW;
    const DataFormat other = toNc ? config.srcFormat : config.dstFormat;
    const int64_t c1 = transdata_ceil(p.c, 16), n1 = transdata_ceil(p.n, 16), HW = p.h * p.w;
    const int64_t hwPad = transdata_ceil(HW, 16) * 16;
    const uint64_t ncSize = uint64_t(p.n * p.c * p.d * hwPad);
    const uint64_t otherSize = uint64_t(other == DataFormat::NDC1HWC0 ? p.n * p.d * c1 * HW * 16 : p.d * c1 * HW * n1 * 256);
    vec_src(src, "TransData", toNc ? otherSize : ncSize, loc);
    vec_dst(dst, "TransData", toNc ? ncSize : otherSize, loc);
    const uint32_t need = transdata_tmp(config, p);
    advmath::Tmp t = advmath::take_tmp("TransData", "GetTransDataMaxMinTmpSize", tmp, uint32_t(ncSize), need, loc);
    transdata_move(dst.data(), src.data(), other, toNc, p, otherSize);
    ub_mark(dst.range(toNc ? ncSize : otherSize));
    advmath::done(t);
    const uint64_t moved = std::max(ncSize, otherSize);
    trace_steps({"TransDataTo5HD", "DataCopy", "TransDataTo5HD"}, dtype_name<T>(), sizeof(T), moved, loc,
                dst.range(toNc ? ncSize : otherSize), src.range(toNc ? otherSize : ncSize));
}

}  // namespace detail

template <const TransDataConfig& config, typename T, typename U, typename S>
__aicore__ inline void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const TransDataParams<U, S>& params,
                                 SAGE_LOC) {
    detail::transdata_run<config, T>(dstTensor, srcTensor, &sharedTmpBuffer, detail::layout_dims(params.srcLayout),
                                     detail::layout_dims(params.dstLayout), loc);
}

template <const TransDataConfig& config, typename T, typename U, typename S>
__aicore__ inline void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                                 const TransDataParams<U, S>& params, SAGE_LOC) {
    detail::transdata_run<config, T>(dstTensor, srcTensor, nullptr, detail::layout_dims(params.srcLayout),
                                     detail::layout_dims(params.dstLayout), loc);
}

}  // namespace AscendC
