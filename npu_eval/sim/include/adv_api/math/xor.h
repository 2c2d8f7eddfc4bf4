// Xor (adv_api/math, asc-devkit include/adv_api/math/xor.h), documented in asc-devkit
// docs/zh/api/SIMD-API/高阶API/数学计算/Xor接口/Xor-82.md: the bitwise exclusive or of two int16_t or
// uint16_t tensors, built from the vector unit's Or, And and Not through one intermediate tensor
// in the temporary buffer: (a | b) & ~(a & b). Exact.
#pragma once

#include "../../sage_sim/adv_math.h"
#include "xor_tiling.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void xor_run(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const LocalTensor<uint8_t>* tmp, uint32_t count, sage::sim::SrcLoc loc)
{
    using namespace sage::sim::advmath;
    SAGE_DTYPE_GATE("Xor", T, (sage::sim::one_of<T, int16_t, uint16_t>()), "int16_t, uint16_t")
    static constexpr Step kSteps[] = {{"Or", true}, {"And", true}, {"Not", true}, {"And", true}};
    uint32_t maxTmp = 0, minTmp = 0;
    GetXorMaxMinTmpSize(TensorShape({int64_t(count)}), sizeof(T), false, maxTmp, minTmp);
    const Plan plan{"Xor", "GetXorMaxMinTmpSize", minTmp, uint32_t(sizeof(T)), kSteps};
    binary<T, uint32_t>(plan, dst, src0, src1, tmp, count, loc,
                        [](uint32_t a, uint32_t b) -> uint32_t { return (a | b) & ~(a & b); });
}

}  // namespace detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                           const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                           const uint32_t calCount, SAGE_LOC)
{
    detail::xor_run(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                           const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer, SAGE_LOC)
{
    detail::xor_run(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, src0Tensor.GetSize(), loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                           const LocalTensor<T>& src1Tensor, const uint32_t calCount, SAGE_LOC)
{
    detail::xor_run(dstTensor, src0Tensor, src1Tensor, nullptr, calCount, loc);
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                           const LocalTensor<T>& src1Tensor, SAGE_LOC)
{
    detail::xor_run(dstTensor, src0Tensor, src1Tensor, nullptr, src0Tensor.GetSize(), loc);
}

}  // namespace AscendC
