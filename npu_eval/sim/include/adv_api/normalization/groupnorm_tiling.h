// GroupNorm host tiling (asc-devkit adv_api/normalization/groupnorm_tiling.h): GroupNormTiling,
// GetGroupNormMaxMinTmpSize and GetGroupNormNDTilingInfo, shape [N, C, H, W] and groupNum; the
// sizes the kernel-side check uses too.
//
// Sizes (Atlas A2, groupnorm_tiling_impl.cpp), d = C / groupNum, hwA = H*W rounded up to 32 bytes of
// T, k = 2 buffers for float with isReuseSource, else 3:
//   min = k * d * hwA * 4 + 2 * align32(N * groupNum * 4),  max = k * N * C * hwA * 4 + 2 * align32(N * groupNum * 4)
//   the tiling: (for half) a float mean and variance of N * groupNum (rounded up to 8), then k buffers
//   of oneTmpSize floats, whole groups of d * hwA; smallShape (hwA <= 64 and d * hwA <= 64 * k8, k8 the
//   largest of 8..1 dividing d * hwA / 8) caps the groups per pass for its two-level WholeReduceSum.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../kernel_tiling/kernel_tiling.h"
#include "../utils/types.h"
#include "norm_sizes.h"

namespace AscendC {
namespace tiling {
BEGIN_TILING_DATA_DEF(GroupNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, n)
TILING_DATA_FIELD_DEF(uint32_t, c)
TILING_DATA_FIELD_DEF(uint32_t, hw)
TILING_DATA_FIELD_DEF(uint32_t, g)
TILING_DATA_FIELD_DEF(uint32_t, d)
TILING_DATA_FIELD_DEF(uint32_t, hwAlignSize)
TILING_DATA_FIELD_DEF(uint32_t, dhwAlignSize)
TILING_DATA_FIELD_DEF(uint32_t, inputXSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize)
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf)
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorPos)
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorSize)
TILING_DATA_FIELD_DEF(uint32_t, tmpBufSize)
TILING_DATA_FIELD_DEF(uint32_t, oneTmpSize)
TILING_DATA_FIELD_DEF(uint32_t, firstTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, secondTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, thirdTmpStartPos)
TILING_DATA_FIELD_DEF(uint32_t, loopRound)
TILING_DATA_FIELD_DEF(uint32_t, inputRoundSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize)
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos)
TILING_DATA_FIELD_DEF(uint32_t, meanVarRoundSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailSize)
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailPos)
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength)
TILING_DATA_FIELD_DEF(uint32_t, bsCurLength)
TILING_DATA_FIELD_DEF(float, factor)
TILING_DATA_FIELD_DEF(bool, smallShape)
END_TILING_DATA_DEF;
}  // namespace tiling

namespace groupnorm_sizes {

using norm_sizes::align32;
inline uint32_t buffers(uint32_t typeSize, bool isReuseSource) { return isReuseSource && typeSize == 4 ? 2 : 3; }
inline uint32_t hw_align(uint32_t hw, uint32_t typeSize) { return align32(hw * typeSize) / typeSize; }
inline uint32_t bytes(uint32_t groups_or_all, uint32_t hwA, uint32_t mv, uint32_t typeSize, bool isReuseSource) {
    return buffers(typeSize, isReuseSource) * groups_or_all * hwA * 4 + 2 * align32(mv * 4);
}
inline uint32_t min_bytes(uint32_t n, uint32_t c, uint32_t hw, uint32_t g, uint32_t typeSize, bool isReuseSource) {
    return bytes(c / g, hw_align(hw, typeSize), n * g, typeSize, isReuseSource);
}
inline uint32_t max_bytes(uint32_t n, uint32_t c, uint32_t hw, uint32_t g, uint32_t typeSize, bool isReuseSource) {
    return bytes(n * c, hw_align(hw, typeSize), n * g, typeSize, isReuseSource);
}
// The WholeReduceSum block of the small-shape path: the largest multiple of 8 up to 64 dividing
// d * hwA (d * hwA itself when that is at most 64).
inline uint32_t small_mask(uint32_t dhwA) {
    if (dhwA <= 64) return dhwA;
    uint32_t m = 64;
    while (m != 0 && dhwA % m != 0) m -= 8;
    return m;
}
// The bytes of the work area a filled tiling uses.
inline uint64_t planned_bytes(const ::AscendC::tiling::GroupNormTiling& t) {
    return (uint64_t(t.firstTmpStartPos) + uint64_t(t.numberOfTmpBuf) * t.oneTmpSize) * 4;
}

inline void fill(uint32_t n, uint32_t c, uint32_t hw, uint32_t g, uint32_t stackBytes, uint32_t typeSize,
                 bool isReuseSource, ::AscendC::tiling::GroupNormTiling& t) {
    if (n == 0 || c == 0 || hw == 0 || g == 0 || c % g != 0) return;
    const uint32_t d = c / g, hwA = hw_align(hw, typeSize), dhwA = d * hwA, input = n * c * hwA, mv = n * g;
    const uint32_t mvA = (mv + 7) / 8 * 8, mvTotal = typeSize == 4 ? 0 : 2 * mvA;
    const uint32_t k = buffers(typeSize, isReuseSource), floats = stackBytes / 32 * 32 / 4;
    if (floats < mvTotal) return;
    uint32_t bs = (floats - mvTotal) / k / dhwA;
    uint32_t k8 = 8;
    while (dhwA / 8 % k8 != 0) --k8;
    const bool small = hwA <= 64 && dhwA <= 64 * k8;
    if (small) {
        const uint32_t m1 = small_mask(dhwA);
        if (m1 == 0) return;
        bs = std::min(bs, 255 / (dhwA / m1) / 8 * 8);
    }
    if (typeSize == 2 && bs * dhwA < c) return;
    uint32_t one = bs * dhwA;
    if (one > input) bs = mv, one = input;
    if (one == 0) return;
    t = {};
    t.n = n, t.c = c, t.hw = hw, t.g = g, t.d = d, t.hwAlignSize = hwA, t.dhwAlignSize = dhwA;
    t.inputXSize = input, t.meanVarSize = mv, t.numberOfTmpBuf = k;
    t.meanTmpTensorPos = 0, t.meanTmpTensorSize = mvA, t.varianceTmpTensorPos = mvA, t.varianceTmpTensorSize = mvA;
    t.tmpBufSize = floats, t.oneTmpSize = one, t.firstTmpStartPos = mvTotal;
    t.secondTmpStartPos = mvTotal + one, t.thirdTmpStartPos = mvTotal + 2 * one;
    t.loopRound = input / one, t.inputRoundSize = one, t.inputTailSize = input % one;
    t.inputTailPos = input - input % one, t.meanVarRoundSize = one / dhwA, t.meanVarTailSize = input % one / dhwA;
    t.meanVarTailPos = mv - input % one / dhwA, t.bshCurLength = one, t.bsCurLength = bs;
    t.factor = 1.0f / float(d * hw), t.smallShape = small;
}

}  // namespace groupnorm_sizes

inline void GetGroupNormMaxMinTmpSize(const TensorShape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const uint32_t groupNum, uint32_t& maxValue, uint32_t& minValue) {
    if (srcShape.GetDimNum() != 4 || groupNum == 0) return;
    const uint32_t n = uint32_t(srcShape.GetDim(0)), c = uint32_t(srcShape.GetDim(1));
    const uint32_t hw = uint32_t(srcShape.GetDim(2) * srcShape.GetDim(3));
    maxValue = groupnorm_sizes::max_bytes(n, c, hw, groupNum, typeSize, isReuseSource);
    minValue = groupnorm_sizes::min_bytes(n, c, hw, groupNum, typeSize, isReuseSource);
}

inline void GetGroupNormNDTilingInfo(const TensorShape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, const uint32_t groupNum,
                                     tiling::GroupNormTiling& tiling) {
    if (srcShape.GetDimNum() != 4) return;
    groupnorm_sizes::fill(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)),
                          uint32_t(srcShape.GetDim(2) * srcShape.GetDim(3)), groupNum, stackBufferSize, typeSize,
                          isReuseSource, tiling);
}

}  // namespace AscendC

using AscendC::tiling::GroupNormTiling;
namespace optiling {
using AscendC::tiling::GroupNormTiling;
}  // namespace optiling
