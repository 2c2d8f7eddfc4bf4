// Host tiling for Pad and UnPad (asc-devkit include/adv_api/pad/pad_tiling.h). Also included by
// pad.h: the kernel checks the temporary space against the same functions. Documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/张量变换/Pad-Tiling.md and UnPad-Tiling.md (no formula on the pages; the
// sizes are CANN's tiling's): Pad stages 16 rows of 32-byte blocks twice, so at least
// 16 * 32 * 2 = 1024 bytes and at most that per 16 elements of the source; on Atlas A2 UnPad needs
// none (GetUnPadMaxMinTmpSize is 0 on DAV_2201, the older chips' formula is Pad's).
#pragma once

#include <cstdint>
#include <vector>

#include "../../tiling/platform/platform_ascendc.h"
#include "../utils/types.h"
#include "pad_tilingdata.h"

namespace AscendC {

namespace detail {
constexpr uint32_t kPadRows = 16;  // the 16 rows one TransDataTo5HD / Brcb stage moves
}  // namespace detail

// The real function asserts a 2-dimensional shape and a 2- or 4-byte type.
inline void GetPadMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                uint32_t& minValue)
{
    if (srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) return;
    const uint32_t hw = uint32_t(srcShape.GetDim(0) * srcShape.GetDim(1));
    const uint32_t stage = detail::kPadRows * 32 * 2;  // 16 blocks, two buffers
    maxValue = hw == 0 ? 0 : ((hw - 1) / detail::kPadRows + 1) * stage;
    minValue = stage;
}

inline void PadTilingFunc(const TensorShape srcShape, const TensorShape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, tiling::PadTiling& t)
{
    if (srcShape.GetDimNum() != 2 || oriSrcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) return;
    const uint32_t h = uint32_t(srcShape.GetDim(0)), w = uint32_t(srcShape.GetDim(1));
    const uint32_t blk = 32 / typeSize;
    t = tiling::PadTiling{};
    t.srcHeight = h, t.srcWidth = w, t.srcOriWidth = uint32_t(oriSrcShape.GetDim(1));
    t.widthWithoutLastBlock = w - blk;
    t.blocksPerRow = w * typeSize / 32;
    t.heightTiling = 255;
    t.heightFractal = h / 255, t.heightFractalTail = h % 255;
    t.mainLoopOffset = 255 * w;
    t.tailBlockOffset = t.heightFractal * 255 * w + t.widthWithoutLastBlock;
    if (stackBufferSize == 0) return;
    const uint32_t base = detail::kPadRows * 32 / typeSize;  // elements of one 16-block stage
    t.tmpBuffer1BlockNum = stackBufferSize / typeSize / base / 2;
    t.tmpBuffer2Offset = t.tmpBuffer1BlockNum * base;
    t.tmpBuffer1RowNum = detail::kPadRows * t.tmpBuffer1BlockNum;
    t.widthTiling = t.tmpBuffer1RowNum;
    if (t.widthTiling == 0) return;  // a buffer below the minimum plans no stage
    t.widthFractal = w / t.widthTiling, t.widthFractalTail = w % t.widthTiling;
    t.widthFractalTailAlingned = t.widthFractalTail ? ((t.widthFractalTail - 1) / blk + 1) * blk : 0;
    t.brcbTiling = t.widthTiling;
    t.brcbFractal = h * w / t.brcbTiling, t.brcbFractalTail = h * w % t.brcbTiling;
    t.maxRepeatTimes = 254;  // 255 * 8 is not 32-byte aligned
    t.brcbTilingRepeatTimes = t.brcbTiling / 8 / 254, t.brcbTilingRepeatTimesTail = t.brcbTiling / 8 % 254;
    t.brcbFractalTailRepeatTimes = t.brcbFractalTail / 8 / 254;
    t.brcbFractalTailRepeatTimesTail = t.brcbFractalTail / 8 % 254;
}

inline void GetUnPadMaxMinTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform,
                                  const TensorShape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                  uint32_t& minValue)
{
    if (srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) return;
    const uint32_t arch = static_cast<uint32_t>(ascendcPlatform.GetCurNpuArch());
    if (arch == 2201 || arch == 3510 || arch == 5102) {
        maxValue = minValue = 0;
        return;
    }
    GetPadMaxMinTmpSize(srcShape, typeSize, maxValue, minValue);
}

inline void UnPadTilingFunc(const TensorShape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                            tiling::UnPadTiling& t)
{
    if (srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) return;
    const uint32_t w = uint32_t(srcShape.GetDim(1));
    t = tiling::UnPadTiling{};
    t.srcHeight = uint32_t(srcShape.GetDim(0)), t.srcWidth = w;
    if (stackBufferSize == 0) return;
    const uint32_t base = detail::kPadRows * 32 / typeSize;
    t.tmpBuffer1BlockNum = stackBufferSize / typeSize / base / 2;
    t.tmpBuffer1RowNum = detail::kPadRows * t.tmpBuffer1BlockNum;
    t.tmpBuffer2Offset = t.tmpBuffer1BlockNum * base;
    t.widthTiling = t.tmpBuffer1RowNum;
    if (t.widthTiling == 0) return;
    t.widthFractal = w / t.widthTiling, t.widthFractalTail = w % t.widthTiling;
    if (t.widthFractalTail != 0) {
        t.widthFractal += 1;
    } else {
        t.widthFractalTail = t.widthTiling;
    }
}

}  // namespace AscendC
