// Host tiling for Select with a byte mask (asc-devkit include/adv_api/select/selectwithbytesmask_tiling.h).
// Also included by selectwithbytesmask.h: the kernel checks its temporary buffer against the same
// function. Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/数据过滤/GetSelectMaxMinTmpSize.md (no
// formula on the page; the sizes are CANN's tiling's): the mask is cast to half, 32-element padded,
// plus 512 bytes, at least 1024 bytes; the minimum works on 4096 elements at a time, the maximum on
// all; a mask row longer than the source row without isReuseMask adds a compacted copy of the mask.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../utils/types.h"

namespace AscendC {

namespace detail {
inline bool select_is_scalar(const TensorShape& s) { return s.GetDimNum() == 0 || s.GetShapeSize() == 1; }

inline uint32_t select_tmp(const TensorShape& src0Shape, const TensorShape& src1Shape, const TensorShape& maskShape,
                           uint32_t maskTypeSize, bool isReuseMask, bool forMin)
{
    const bool src0Scalar = select_is_scalar(src0Shape);
    const TensorShape& src = src0Scalar ? src1Shape : src0Shape;
    const uint32_t srcSize = uint32_t(std::max<int64_t>(src.GetShapeSize(), 0));
    const int64_t maskLast = maskShape.GetDim(maskShape.GetDimNum() ? maskShape.GetDimNum() - 1 : 0);
    const int64_t srcLast = src.GetDim(src.GetDimNum() ? src.GetDimNum() - 1 : 0);
    const uint32_t cal = forMin ? std::min<uint32_t>(srcSize, 4096) : srcSize;
    uint32_t need = std::max<uint32_t>(1024, (cal + 31) / 32 * 32 * 2 + 512);
    if (maskLast != srcLast && !isReuseMask && maskLast > 1) need += (srcSize * maskTypeSize + 31) / 32 * 32;
    return need;
}
}  // namespace detail

inline uint32_t GetSelectMinTmpSize(const TensorShape& src0Shape, const TensorShape& src1Shape,
                                    const uint32_t srcTypeSize, const TensorShape& maskShape,
                                    const uint32_t maskTypeSize, const bool isReuseMask)
{
    (void)srcTypeSize;
    return detail::select_tmp(src0Shape, src1Shape, maskShape, maskTypeSize, isReuseMask, true);
}

inline uint32_t GetSelectMaxTmpSize(const TensorShape& src0Shape, const TensorShape& src1Shape,
                                    const uint32_t srcTypeSize, const TensorShape& maskShape,
                                    const uint32_t maskTypeSize, const bool isReuseMask)
{
    (void)srcTypeSize;
    return detail::select_tmp(src0Shape, src1Shape, maskShape, maskTypeSize, isReuseMask, false);
}

inline void GetSelectMaxMinTmpSize(const TensorShape& src0Shape, const TensorShape& src1Shape,
                                   const uint32_t srcTypeSize, const TensorShape& maskShape,
                                   const uint32_t maskTypeSize, const bool isReuseMask, uint32_t& maxValue,
                                   uint32_t& minValue)
{
    maxValue = GetSelectMaxTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
    minValue = GetSelectMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}

inline uint32_t GetSelectWithBytesMaskMinTmpSize(const TensorShape& src0Shape, const TensorShape& src1Shape,
                                                 const uint32_t srcTypeSize, const TensorShape& maskShape,
                                                 const uint32_t maskTypeSize, const bool isReuseMask)
{
    return GetSelectMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}

inline uint32_t GetSelectWithBytesMaskMaxTmpSize(const TensorShape& src0Shape, const TensorShape& src1Shape,
                                                 const uint32_t srcTypeSize, const TensorShape& maskShape,
                                                 const uint32_t maskTypeSize, const bool isReuseMask)
{
    return GetSelectMaxTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}

inline void GetSelectWithBytesMaskMaxMinTmpSize(const TensorShape& src0Shape, const TensorShape& src1Shape,
                                                const uint32_t srcTypeSize, const TensorShape& maskShape,
                                                const uint32_t maskTypeSize, const bool isReuseMask,
                                                uint32_t& maxValue, uint32_t& minValue)
{
    GetSelectMaxMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask, maxValue, minValue);
}

}  // namespace AscendC
