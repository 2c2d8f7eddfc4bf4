// torch.addcmul in fp32, out = input + value * t1 * t2: three input queues, the product built
// in a scratch buffer (Muls then Mul), then added to the input; value travels in the tiling.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct AddcmulTiling {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // a multiple of 8 (32 bytes)
    float value;
};

class KernelAddcmul {
public:
    __aicore__ inline KernelAddcmul() {}
    __aicore__ inline void Init(GM_ADDR input, GM_ADDR t1, GM_ADDR t2, GM_ADDR out, const AddcmulTiling& tiling)
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
        value = tiling.value;

        inputGm.SetGlobalBuffer((__gm__ float *)input + offset, blockLength);
        t1Gm.SetGlobalBuffer((__gm__ float *)t1 + offset, blockLength);
        t2Gm.SetGlobalBuffer((__gm__ float *)t2 + offset, blockLength);
        outGm.SetGlobalBuffer((__gm__ float *)out + offset, blockLength);
        pipe.InitBuffer(inQueueInput, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueT1, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueT2, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(productBuf, tileLength * sizeof(float));
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
        AscendC::LocalTensor<float> inputLocal = inQueueInput.AllocTensor<float>();
        AscendC::LocalTensor<float> t1Local = inQueueT1.AllocTensor<float>();
        AscendC::LocalTensor<float> t2Local = inQueueT2.AllocTensor<float>();
        AscendC::DataCopy(inputLocal, inputGm[start], length);
        AscendC::DataCopy(t1Local, t1Gm[start], length);
        AscendC::DataCopy(t2Local, t2Gm[start], length);
        inQueueInput.EnQue(inputLocal);
        inQueueT1.EnQue(t1Local);
        inQueueT2.EnQue(t2Local);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<float> inputLocal = inQueueInput.DeQue<float>();
        AscendC::LocalTensor<float> t1Local = inQueueT1.DeQue<float>();
        AscendC::LocalTensor<float> t2Local = inQueueT2.DeQue<float>();
        AscendC::LocalTensor<float> outLocal = outQueue.AllocTensor<float>();
        AscendC::LocalTensor<float> product = productBuf.Get<float>();
        AscendC::Muls(product, t1Local, value, length);
        AscendC::Mul(product, product, t2Local, length);
        AscendC::Add(outLocal, inputLocal, product, length);
        outQueue.EnQue<float>(outLocal);
        inQueueInput.FreeTensor(inputLocal);
        inQueueT1.FreeTensor(t1Local);
        inQueueT2.FreeTensor(t2Local);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<float> outLocal = outQueue.DeQue<float>();
        AscendC::DataCopy(outGm[start], outLocal, length);
        outQueue.FreeTensor(outLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueInput, inQueueT1, inQueueT2;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> productBuf;
    AscendC::GlobalTensor<float> inputGm, t1Gm, t2Gm, outGm;
    uint32_t blockLength;
    uint32_t tileLength;
    float value;
};

extern "C" __global__ __aicore__ void addcmul(GM_ADDR input, GM_ADDR t1, GM_ADDR t2, GM_ADDR out,
                                              AddcmulTiling tiling)
{
    KernelAddcmul op;
    op.Init(input, t1, t2, out, tiling);
    op.Process();
}
