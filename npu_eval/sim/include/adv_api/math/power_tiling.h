// Host tiling for Power (asc-devkit include/adv_api/math/power_tiling.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Power接口/GetPowerMaxMinTmpSize.md. A shape of one element
// ({1}) stands for a scalar operand. The live tensors per element differ between Power(tensor,
// tensor) and the scalar forms, by type and by architecture (Atlas A2: __NPU_ARCH__ 2201; 310P:
// 2002); float and half add one repeat (256 bytes) for the masks.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math_tiling_util.h"

namespace AscendC {
namespace detail {

struct PowerProcs {
    uint32_t halfTT, intTT, floatTT, halfTS, intTS, floatTS;
};

inline PowerProcs power_procs() {
#if __NPU_ARCH__ == 2002
    return {16, 7, 5, 16, 8, 6};
#else
    return {14, 6, 4, 14, 7, 5};
#endif
}

inline bool power_is_tensor(const TensorShape& s) { return !(s.GetDimNum() == 1 && s.GetDim(0) == 1); }

inline uint32_t power_proc(bool tensorTensor, bool typeIsInt, uint32_t typeSize) {
    const PowerProcs p = power_procs();
    if (typeIsInt) return tensorTensor ? p.intTT : p.intTS;
    if (typeSize == sizeof(float)) return tensorTensor ? p.floatTT : p.floatTS;
    return tensorTensor ? p.halfTT : p.halfTS;
}

}  // namespace detail

inline void GetPowerMaxMinTmpSize(const TensorShape& srcShape1, const TensorShape& srcShape2, const bool typeIsInt,
                                  const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                  uint32_t& minValue)
{
    (void)isReuseSource;
    const bool t1 = detail::power_is_tensor(srcShape1), t2 = detail::power_is_tensor(srcShape2);
    const uint32_t proc = detail::power_proc(t1 && t2, typeIsInt, typeSize);
    const int64_t n64 = (t1 ? srcShape1 : srcShape2).GetShapeSize();
    const uint32_t n = uint32_t(std::max<int64_t>(n64, 0));
    const uint32_t R = detail::kMathRepeatBytes;
    if (typeIsInt) {
        minValue = R * proc;
        maxValue = std::max(n * typeSize, R) * proc;
    } else if (typeSize == sizeof(float)) {
        minValue = R * proc + R;
        maxValue = std::max(n * typeSize, R) * proc + R;
    } else {
        minValue = R * proc / 2 + R;
        maxValue = std::max(n * typeSize, R / 2) * proc + R;
    }
}

inline void GetPowerTmpBufferFactorSize(const bool baseIsTensor, const bool expIsTensor, const bool typeIsInt,
                                        const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer)
{
    maxLiveNodeCount = detail::power_proc(baseIsTensor && expIsTensor, typeIsInt, typeSize);
    extraBuffer = typeIsInt ? 0 : detail::kMathRepeatBytes;
}

}  // namespace AscendC
