// Element-wise z = x * y in fp16 for any length, including ones that are not a whole number
// of 32-byte blocks: the last core's last tile moves its odd-sized tail with DataCopyPad
// (byte lengths), which DataCopy cannot do without truncating.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct MulTiling {
    uint32_t totalLength;
    uint32_t blockLength;   // elements per core, a multiple of 16: every core starts 32-byte aligned
    uint32_t tileLength;    // elements per tile, a multiple of 16
};

class KernelMulPad {
public:
    __aicore__ inline KernelMulPad() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const MulTiling& tiling)
    {
        uint64_t offset = uint64_t(tiling.blockLength) * AscendC::GetBlockIdx();
        uint64_t rest = tiling.totalLength - offset;
        blockLength = rest < tiling.blockLength ? uint32_t(rest) : tiling.blockLength;
        tileLength = tiling.tileLength;

        xGm.SetGlobalBuffer((__gm__ half *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + offset, blockLength);
        zGm.SetGlobalBuffer((__gm__ half *)z + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
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
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(half)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
        AscendC::DataCopyPad(xLocal, xGm[start], copyParams, padParams);
        AscendC::DataCopyPad(yLocal, yGm[start], copyParams, padParams);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Mul(zLocal, xLocal, yLocal, length);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(half)), 0, 0, 0};
        AscendC::DataCopyPad(zGm[start], zLocal, copyParams);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm, yGm, zGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void mul_pad_tail(GM_ADDR x, GM_ADDR y, GM_ADDR z, MulTiling tiling)
{
    KernelMulPad op;
    op.Init(x, y, z, tiling);
    op.Process();
}
