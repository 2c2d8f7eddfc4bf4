// Host tiling for Transpose, the advanced API's ConfusionTranspose (asc-devkit
// include/adv_api/transpose/confusion_transpose_tiling.h and confusion_transpose_tilingdata.h). Also
// included by confusion_transpose.h: the kernel checks the temporary space against the same function.
// Documented in asc-devkit docs/zh/api/SIMD-API/高阶API/张量变换/Transpose-Tiling.md (no formula on the
// page; the sizes and the param0..17 layout are CANN's tiling's). The struct is one type under its
// kernel name (AscendC::tiling::ConfusionTransposeTiling, exported as ::ConfusionTransposeTiling) and
// its host name (optiling::ConfusionTransposeTiling).
//
// TRANSPOSE_NZ2ND_0213 / NZ2NZ_0213 (srcShape [B, N, S, H/N]): the API turns 16 x 16 squares, so it
// needs one square of temporary space (256 elements) at least and a 16-column strip of S (rounded up
// to 16) at most; the tiling records B, N, H/N and S rounded up to 16 (param1..4) and the strip plan.
#pragma once

#include <cstdint>
#include <vector>

#include "../../basic_api/kernel_operator_vec_transpose_intf.h"
#include "../../kernel_tiling/kernel_tiling.h"
#include "../utils/types.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(ConfusionTransposeTiling)
TILING_DATA_FIELD_DEF(uint32_t, param0)
TILING_DATA_FIELD_DEF(uint32_t, param1)
TILING_DATA_FIELD_DEF(uint32_t, param2)
TILING_DATA_FIELD_DEF(uint32_t, param3)
TILING_DATA_FIELD_DEF(uint32_t, param4)
TILING_DATA_FIELD_DEF(uint32_t, param5)
TILING_DATA_FIELD_DEF(uint32_t, param6)
TILING_DATA_FIELD_DEF(uint32_t, param7)
TILING_DATA_FIELD_DEF(uint32_t, param8)
TILING_DATA_FIELD_DEF(uint32_t, param9)
TILING_DATA_FIELD_DEF(uint32_t, param10)
TILING_DATA_FIELD_DEF(uint32_t, param11)
TILING_DATA_FIELD_DEF(uint32_t, param12)
TILING_DATA_FIELD_DEF(uint32_t, param13)
TILING_DATA_FIELD_DEF(uint32_t, param14)
TILING_DATA_FIELD_DEF(uint32_t, param15)
TILING_DATA_FIELD_DEF(uint32_t, param16)
TILING_DATA_FIELD_DEF(uint32_t, param17)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace detail {
constexpr uint32_t kCube = 16;                 // a square's side
constexpr uint32_t kCubeElems = kCube * kCube;  // one square

inline bool transpose_0213(uint32_t type)
{
    return type == uint32_t(TransposeType::TRANSPOSE_NZ2ND_0213) || type == uint32_t(TransposeType::TRANSPOSE_NZ2NZ_0213);
}
}  // namespace detail

// The types other than the two 0213 ones are not emulated: their sizes stay unset.
inline void GetTransposeMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize,
                                      const uint32_t transposeTypeIn, uint32_t& maxValue, uint32_t& minValue)
{
    if (!detail::transpose_0213(transposeTypeIn) || srcShape.GetDimNum() != 4) return;
    const uint32_t alignS = (uint32_t(srcShape.GetDim(2)) + detail::kCube - 1) / detail::kCube * detail::kCube;
    maxValue = alignS * detail::kCube * typeSize;
    minValue = detail::kCubeElems * typeSize;
}

inline void GetConfusionTransposeMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize,
                                               const uint32_t transposeTypeIn, uint32_t& maxValue, uint32_t& minValue)
{
    GetTransposeMaxMinTmpSize(srcShape, typeSize, transposeTypeIn, maxValue, minValue);
}

inline void GetTransposeTilingInfo(const TensorShape& srcShape, const uint32_t stackBufferSize,
                                   const uint32_t typeSize, const uint32_t transposeTypeIn,
                                   tiling::ConfusionTransposeTiling& t)
{
    if (!detail::transpose_0213(transposeTypeIn) || srcShape.GetDimNum() != 4 || typeSize == 0) return;
    const uint32_t c = detail::kCube;
    const uint32_t b = uint32_t(srcShape.GetDim(0)), n = uint32_t(srcShape.GetDim(1));
    const uint32_t alignS = (uint32_t(srcShape.GetDim(2)) + c - 1) / c * c;
    const uint32_t widthTiling = (uint32_t(srcShape.GetDim(3)) + c - 1) / c, alignW = widthTiling * c;
    const uint32_t popSize = stackBufferSize / typeSize / detail::kCubeElems * detail::kCubeElems;
    const uint32_t popH = popSize / c, need = alignS * c;
    t = tiling::ConfusionTransposeTiling{};
    t.param0 = 32 / typeSize, t.param1 = b, t.param2 = n, t.param3 = alignW, t.param4 = alignS;
    t.param5 = widthTiling, t.param6 = popSize, t.param7 = popH, t.param8 = need;
    t.param9 = popSize ? need / popSize : 0, t.param10 = popSize ? need % popSize : need;
    t.param11 = alignS * alignW, t.param12 = n * alignS * alignW, t.param13 = n * alignW, t.param14 = n * c;
    t.param15 = popH * t.param9 * n * alignW;
}

inline void GetConfusionTransposeTilingInfo(const TensorShape& srcShape, const uint32_t stackBufferSize,
                                            const uint32_t typeSize, const uint32_t transposeTypeIn,
                                            tiling::ConfusionTransposeTiling& t)
{
    GetTransposeTilingInfo(srcShape, stackBufferSize, typeSize, transposeTypeIn, t);
}

}  // namespace AscendC

using AscendC::tiling::ConfusionTransposeTiling;
namespace optiling {
using AscendC::tiling::ConfusionTransposeTiling;
}  // namespace optiling
