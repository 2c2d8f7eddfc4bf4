// Two conversions in one pass: a fp32 tensor narrowed to fp16 (CAST_RINT, round half to
// even like torch) and a fp16 tensor widened to fp32 (exact, CAST_NONE); two outputs.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct CastTiling {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // a multiple of 16: whole 32-byte blocks for both dtypes
};

class KernelCast {
public:
    __aicore__ inline KernelCast() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR aHalf, GM_ADDR bFloat, const CastTiling& tiling)
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

        aGm.SetGlobalBuffer((__gm__ float *)a + offset, blockLength);
        bGm.SetGlobalBuffer((__gm__ half *)b + offset, blockLength);
        aHalfGm.SetGlobalBuffer((__gm__ half *)aHalf + offset, blockLength);
        bFloatGm.SetGlobalBuffer((__gm__ float *)bFloat + offset, blockLength);
        pipe.InitBuffer(inQueueA, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueB, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueA, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueB, BUFFER_NUM, tileLength * sizeof(float));
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
        AscendC::LocalTensor<float> aLocal = inQueueA.AllocTensor<float>();
        AscendC::LocalTensor<half> bLocal = inQueueB.AllocTensor<half>();
        AscendC::DataCopy(aLocal, aGm[start], length);
        AscendC::DataCopy(bLocal, bGm[start], length);
        inQueueA.EnQue(aLocal);
        inQueueB.EnQue(bLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<float> aLocal = inQueueA.DeQue<float>();
        AscendC::LocalTensor<half> bLocal = inQueueB.DeQue<half>();
        AscendC::LocalTensor<half> aHalf = outQueueA.AllocTensor<half>();
        AscendC::LocalTensor<float> bFloat = outQueueB.AllocTensor<float>();
        AscendC::Cast(aHalf, aLocal, AscendC::RoundMode::CAST_RINT, length);
        AscendC::Cast(bFloat, bLocal, AscendC::RoundMode::CAST_NONE, length);
        outQueueA.EnQue<half>(aHalf);
        outQueueB.EnQue<float>(bFloat);
        inQueueA.FreeTensor(aLocal);
        inQueueB.FreeTensor(bLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<half> aHalf = outQueueA.DeQue<half>();
        AscendC::LocalTensor<float> bFloat = outQueueB.DeQue<float>();
        AscendC::DataCopy(aHalfGm[start], aHalf, length);
        AscendC::DataCopy(bFloatGm[start], bFloat, length);
        outQueueA.FreeTensor(aHalf);
        outQueueB.FreeTensor(bFloat);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueA, inQueueB;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueA, outQueueB;
    AscendC::GlobalTensor<float> aGm, bFloatGm;
    AscendC::GlobalTensor<half> bGm, aHalfGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void cast_custom(GM_ADDR a, GM_ADDR b, GM_ADDR aHalf, GM_ADDR bFloat,
                                                  CastTiling tiling)
{
    KernelCast op;
    op.Init(a, b, aHalf, bFloat, tiling);
    op.Process();
}
