// add_custom for any length with a separate tail path: full tiles use count-form DataCopy,
// the block's last partial tile DataCopyPad. The tail's Compute was pasted from a Sub kernel,
// so only tail shapes go wrong, and only from the first tail element on.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct AddTiling {
    uint32_t totalLength;
    uint32_t tileLength;  // elements, a multiple of 16
};

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
    {
        uint32_t perBlock = (totalLength + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
        perBlock = (perBlock + 15) / 16 * 16;
        uint32_t start = perBlock * AscendC::GetBlockIdx();
        blockLength = start >= totalLength ? 0 : (totalLength - start < perBlock ? totalLength - start : perBlock);
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ half *)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + start, blockLength);
        zGm.SetGlobalBuffer((__gm__ half *)z + start, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        uint32_t fullTiles = blockLength / tileLength;
        for (uint32_t i = 0; i < fullTiles; i++) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
        uint32_t tail = blockLength - fullTiles * tileLength;
        if (tail > 0) {
            CopyInTail(fullTiles, tail);
            ComputeTail(tail);
            CopyOutTail(fullTiles, tail);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);
        AscendC::DataCopy(yLocal, yGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Add(zLocal, xLocal, yLocal, tileLength);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t progress)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopy(zGm[progress * tileLength], zLocal, tileLength);
        outQueueZ.FreeTensor(zLocal);
    }
    __aicore__ inline void CopyInTail(uint32_t progress, uint32_t len)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<half> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(xLocal, xGm[progress * tileLength], copy, pad);
        AscendC::DataCopyPad(yLocal, yGm[progress * tileLength], copy, pad);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void ComputeTail(uint32_t len)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Sub(zLocal, xLocal, yLocal, len);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOutTail(uint32_t progress, uint32_t len)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
        AscendC::DataCopyPad(zGm[progress * tileLength], zLocal, copy);  // expect: mismatch
        outQueueZ.FreeTensor(zLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    AscendC::GlobalTensor<half> zGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddTiling tiling)
{
    KernelAdd op;
    op.Init(x, y, z, tiling.totalLength, tiling.tileLength);
    op.Process();
}
