// y = x * scale + shift as a templated entry in a namespace (dtype and buffer count are template
// parameters; the host launches "ops::scale_shift<half, 2>"), built from Muls and Adds.
#include "kernel_operator.h"

namespace ops {

struct ScaleShiftTiling {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // whole 32-byte blocks of T
    float scale;
    float shift;
};

template <typename T, int32_t BUFFER_NUM>
class KernelScaleShift {
public:
    __aicore__ inline KernelScaleShift() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ScaleShiftTiling& tiling)
    {
        uint32_t blockIdx = AscendC::GetBlockIdx();
        uint64_t offset;
        if (blockIdx < tiling.formerNum) {
            blockLength = tiling.formerLength;
            offset = uint64_t(tiling.formerLength) * blockIdx;
        } else {
            blockLength = tiling.tailLength;
            offset = uint64_t(tiling.formerLength) * tiling.formerNum +
                     uint64_t(tiling.tailLength) * (blockIdx - tiling.formerNum);
        }
        tileLength = tiling.tileLength;
        scale = static_cast<T>(tiling.scale);
        shift = static_cast<T>(tiling.shift);

        xGm.SetGlobalBuffer((__gm__ T *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ T *)y + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(T));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t start = 0; start < blockLength; start += tileLength) {
            uint32_t length = (blockLength - start < tileLength) ? (blockLength - start) : tileLength;
            CopyIn(start, length);
            Compute(length);
            CopyOut(start, length);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<T> xLocal = inQueueX.template AllocTensor<T>();
        AscendC::DataCopy(xLocal, xGm[start], length);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<T> xLocal = inQueueX.template DeQue<T>();
        AscendC::LocalTensor<T> yLocal = outQueueY.template AllocTensor<T>();
        AscendC::Muls(yLocal, xLocal, scale, length);
        AscendC::Adds(yLocal, yLocal, shift, length);
        outQueueY.EnQue(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<T> yLocal = outQueueY.template DeQue<T>();
        AscendC::DataCopy(yGm[start], yLocal, length);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::GlobalTensor<T> xGm, yGm;
    uint32_t blockLength;
    uint32_t tileLength;
    T scale;
    T shift;
};

template <typename T, int32_t BUFFER_NUM>
__global__ __aicore__ void scale_shift(GM_ADDR x, GM_ADDR y, ScaleShiftTiling tiling)
{
    KernelScaleShift<T, BUFFER_NUM> op;
    op.Init(x, y, tiling);
    op.Process();
}

}  // namespace ops
