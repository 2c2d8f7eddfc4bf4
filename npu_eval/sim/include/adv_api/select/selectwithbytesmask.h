// Select with a byte mask (adv_api/select, asc-devkit include/adv_api/select/selectwithbytesmask.h;
// the doc page calls it SelectWithBytesMask): pick each element from a tensor or a scalar by a mask
// of whole values rather than bits.
//
//   Select<T, U, isReuseMask = true>(dst, src0Tensor, src1Scalar, mask, sharedTmpBuffer, info)
//   Select<T, U, isReuseMask = true>(dst, src0Scalar, src1Tensor, mask, sharedTmpBuffer, info)
//
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数据过滤/Select-95.md: where the mask value is
// 0 the element comes from src0, otherwise from src1 (the mask is cast to half and compared with
// 0). The source is [firstAxis, srcLastAxis], its rows 32-byte aligned; the mask is [firstAxis,
// maskLastAxis] with maskLastAxis >= srcLastAxis, its rows 32-byte aligned and a multiple of 16
// elements; the columns past srcLastAxis are ignored. T is half or float; U bool, int8_t,
// uint8_t, int16_t, uint16_t, int32_t or uint32_t. The temporary buffer must hold
// GetSelectMaxMinTmpSize's minimum. With isReuseMask and a longer mask row the device may compact
// the mask in place; the emulator leaves it as it was.
#pragma once

#include "../../sage_sim/adv.h"
#include "../../sage_sim/adv_math.h"
#include "selectwithbytesmask_tiling.h"

namespace AscendC {

#ifndef SAGE_SELECT_BYTES_MASK_SHAPE_INFO
#define SAGE_SELECT_BYTES_MASK_SHAPE_INFO
struct SelectWithBytesMaskShapeInfo {
    __aicore__ SelectWithBytesMaskShapeInfo() {}
    uint32_t firstAxis = 0;
    uint32_t srcLastAxis = 0;
    uint32_t maskLastAxis = 0;
};
#endif

namespace detail {

// tensorIsSrc0: the tensor is src0 (taken where the mask is 0) and the scalar src1.
template <typename T, typename U, bool isReuseMask>
inline void select_bytes_run(const LocalTensor<T>& dst, const LocalTensor<T>& tensor, T scalar, bool tensorIsSrc0,
                             const LocalTensor<U>& mask, const LocalTensor<uint8_t>& tmp,
                             const SelectWithBytesMaskShapeInfo& info, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    static_assert(one_of<T, half, float>(), "[dtype-unsupported] Select (bytes mask) takes half or float");
    static_assert(one_of<U, bool, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t>(),
                  "[dtype-unsupported] Select (bytes mask): the mask is bool, int8_t, uint8_t, int16_t, uint16_t, "
                  "int32_t or uint32_t");
    touch(loc);
    const uint32_t rows = info.firstAxis, sl = info.srcLastAxis, ml = info.maskLastAxis;
    if (rows == 0 || sl == 0 || ml < sl || sl * sizeof(T) % 32 != 0 || ml * sizeof(U) % 32 != 0 || ml % 16 != 0) {
        fail("api-misuse", loc,
             "Select (bytes mask) with firstAxis %u, srcLastAxis %u, maskLastAxis %u: the source row must be 32-byte "
             "aligned, and the mask row at least as long, 32-byte aligned and a multiple of 16 elements (Select-95.md)",
             rows, sl, ml);
    }
    const uint64_t n = uint64_t(rows) * sl, nm = uint64_t(rows) * ml;
    vec_src(tensor, "Select", n, loc);
    vec_src(mask, "Select", nm, loc);
    vec_dst(dst, "Select", n, loc);
    const TensorShape srcShape({int64_t(rows), int64_t(sl)}), one({1}), maskShape({int64_t(rows), int64_t(ml)});
    const uint32_t need = GetSelectMinTmpSize(tensorIsSrc0 ? srcShape : one, tensorIsSrc0 ? one : srcShape, sizeof(T),
                                              maskShape, sizeof(U), isReuseMask);
    tmp_check(tmp, need, "Select", "GetSelectMaxMinTmpSize for the shapes", loc);
    const T* s = tensor.data();
    const U* m = mask.data();
    T* d = dst.data();
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < sl; ++c) {
            const bool src1 = float(down<half>(float(m[uint64_t(r) * ml + c]))) != 0.0f;
            const T v = s[uint64_t(r) * sl + c];
            d[uint64_t(r) * sl + c] = (src1 != tensorIsSrc0) ? v : scalar;
        }
    }
    ub_mark(dst.range(n));
    if (ml != sl) trace_steps({"GatherMask"}, dtype_name<U>(), sizeof(U), nm, loc, tmp.range(need), mask.range(nm));
    const uint64_t chunk = std::min<uint64_t>(n, 4096);
    trace_chunks({"Cast", "Compare"}, "half", 2, n, chunk, loc, tmp.range(need), mask.range(nm));
    trace_chunks({"Select"}, dtype_name<T>(), sizeof(T), n, chunk, loc, dst.range(n), tensor.range(n), tmp.range(need));
}

}  // namespace detail

template <typename T, typename U, bool isReuseMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, T src1,
                              const LocalTensor<U>& mask, const LocalTensor<uint8_t>& sharedTmpBuffer,
                              const SelectWithBytesMaskShapeInfo& info, SAGE_LOC) {
    detail::select_bytes_run<T, U, isReuseMask>(dst, src0, src1, true, mask, sharedTmpBuffer, info, loc);
}

template <typename T, typename U, bool isReuseMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, T src0, const LocalTensor<T>& src1,
                              const LocalTensor<U>& mask, const LocalTensor<uint8_t>& sharedTmpBuffer,
                              const SelectWithBytesMaskShapeInfo& info, SAGE_LOC) {
    detail::select_bytes_run<T, U, isReuseMask>(dst, src1, src0, false, mask, sharedTmpBuffer, info, loc);
}

}  // namespace AscendC
