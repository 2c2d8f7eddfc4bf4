// The tiling structs of Pad and UnPad (asc-devkit include/adv_api/pad/pad_tilingdata.h), one type
// under the kernel's name (AscendC::tiling::PadTiling, exported as ::PadTiling like CANN's generated
// kernel_tiling.h) and the host's (optiling::PadTiling), so a host TILING_DATA_FIELD_DEF_STRUCT field
// and the kernel's argument agree field for field. The kernel side reads srcHeight, srcWidth and
// srcOriWidth; the other fields are the device implementation's loop plan, filled as CANN fills them.
#pragma once

#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(UnPadTiling)
TILING_DATA_FIELD_DEF(uint32_t, srcHeight)
TILING_DATA_FIELD_DEF(uint32_t, srcWidth)
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1BlockNum)
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1RowNum)
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer2Offset)
TILING_DATA_FIELD_DEF(uint32_t, widthTiling)
TILING_DATA_FIELD_DEF(uint32_t, widthFractal)
TILING_DATA_FIELD_DEF(uint32_t, widthFractalTail)
END_TILING_DATA_DEF;

BEGIN_TILING_DATA_DEF(PadTiling)
TILING_DATA_FIELD_DEF(uint32_t, srcHeight)
TILING_DATA_FIELD_DEF(uint32_t, srcWidth)
TILING_DATA_FIELD_DEF(uint32_t, srcOriWidth)
TILING_DATA_FIELD_DEF(uint32_t, widthWithoutLastBlock)
TILING_DATA_FIELD_DEF(uint32_t, blocksPerRow)
TILING_DATA_FIELD_DEF(uint32_t, heightTiling)
TILING_DATA_FIELD_DEF(uint32_t, heightFractal)
TILING_DATA_FIELD_DEF(uint32_t, heightFractalTail)
TILING_DATA_FIELD_DEF(uint32_t, mainLoopOffset)
TILING_DATA_FIELD_DEF(uint32_t, tailBlockOffset)
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1BlockNum)
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1RowNum)
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer2Offset)
TILING_DATA_FIELD_DEF(uint32_t, widthTiling)
TILING_DATA_FIELD_DEF(uint32_t, widthFractal)
TILING_DATA_FIELD_DEF(uint32_t, widthFractalTail)
TILING_DATA_FIELD_DEF(uint32_t, widthFractalTailAlingned)
TILING_DATA_FIELD_DEF(uint32_t, brcbTiling)
TILING_DATA_FIELD_DEF(uint32_t, brcbFractal)
TILING_DATA_FIELD_DEF(uint32_t, brcbFractalTail)
TILING_DATA_FIELD_DEF(uint32_t, maxRepeatTimes)
TILING_DATA_FIELD_DEF(uint32_t, brcbTilingRepeatTimes)
TILING_DATA_FIELD_DEF(uint32_t, brcbTilingRepeatTimesTail)
TILING_DATA_FIELD_DEF(uint32_t, brcbFractalTailRepeatTimes)
TILING_DATA_FIELD_DEF(uint32_t, brcbFractalTailRepeatTimesTail)
TILING_DATA_FIELD_DEF(uint32_t, reserved)
END_TILING_DATA_DEF;
}  // namespace tiling
}  // namespace AscendC

using AscendC::tiling::PadTiling;
using AscendC::tiling::UnPadTiling;
namespace optiling {
using AscendC::tiling::PadTiling;
using AscendC::tiling::UnPadTiling;
}  // namespace optiling
