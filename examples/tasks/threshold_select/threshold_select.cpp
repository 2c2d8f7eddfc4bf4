// torch.nn.Threshold in fp32, y = x > threshold ? x : value, with CompareScalar (a bit mask)
// and Select in tensor-scalar mode. Compare works on whole 256-byte repeats, so a short tail
// tile is padded with Duplicate up to the next 64 floats before comparing.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t REPEAT_FLOATS = 256 / sizeof(float);

struct ThresholdTiling {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // a multiple of 256 elements, so the bit mask is whole 32-byte blocks
    float threshold;
    float value;
};

class KernelThreshold {
public:
    __aicore__ inline KernelThreshold() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ThresholdTiling& tiling)
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
        threshold = tiling.threshold;
        value = tiling.value;

        xGm.SetGlobalBuffer((__gm__ float *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(maskBuf, tileLength / 8);   // one bit per element
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
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[start], length);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        uint32_t alignedLength = (length + REPEAT_FLOATS - 1) / REPEAT_FLOATS * REPEAT_FLOATS;
        if (alignedLength != length) {
            AscendC::Duplicate(xLocal[length], 0.0f, alignedLength - length);
        }
        AscendC::CompareScalar(mask, xLocal, threshold, AscendC::CMPMODE::GT, alignedLength);
        AscendC::Select(yLocal, mask, xLocal, value, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, alignedLength);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopy(yGm[start], yLocal, length);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> maskBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t blockLength;
    uint32_t tileLength;
    float threshold;
    float value;
};

extern "C" __global__ __aicore__ void threshold_select(GM_ADDR x, GM_ADDR y, ThresholdTiling tiling)
{
    KernelThreshold op;
    op.Init(x, y, tiling);
    op.Process();
}
