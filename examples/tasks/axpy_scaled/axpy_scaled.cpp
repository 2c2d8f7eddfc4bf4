// out = alpha * x + beta * y in fp32 with the two scalars as plain kernel arguments (from the
// reference model's constructor): Muls writes beta * y, then Axpy accumulates alpha * x into it.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct AxpyTiling {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // a multiple of 8 (32 bytes)
};

class KernelAxpy {
public:
    __aicore__ inline KernelAxpy() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR out, float alpha, float beta,
                                const AxpyTiling& tiling)
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
        this->alpha = alpha;
        this->beta = beta;

        xGm.SetGlobalBuffer((__gm__ float *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + offset, blockLength);
        outGm.SetGlobalBuffer((__gm__ float *)out + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileLength * sizeof(float));
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
        AscendC::LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[start], length);
        AscendC::DataCopy(yLocal, yGm[start], length);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = inQueueY.DeQue<float>();
        AscendC::LocalTensor<float> outLocal = outQueue.AllocTensor<float>();
        AscendC::Muls(outLocal, yLocal, beta, length);
        AscendC::Axpy(outLocal, xLocal, alpha, length);
        outQueue.EnQue<float>(outLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<float> outLocal = outQueue.DeQue<float>();
        AscendC::DataCopy(outGm[start], outLocal, length);
        outQueue.FreeTensor(outLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue;
    AscendC::GlobalTensor<float> xGm, yGm, outGm;
    uint32_t blockLength;
    uint32_t tileLength;
    float alpha;
    float beta;
};

extern "C" __global__ __aicore__ void axpy_scaled(GM_ADDR x, GM_ADDR y, GM_ADDR out, float alpha, float beta,
                                                  AxpyTiling tiling)
{
    KernelAxpy op;
    op.Init(x, y, out, alpha, beta, tiling);
    op.Process();
}
