// Adjacent difference z[i] = x[i + 1] - x[i]. Each block loads its slice of x plus one more
// 32-byte block, then subtracts the tile from itself shifted by one element: xLocal[1] starts
// 2 bytes past a 32-byte boundary, which the vector unit cannot address.
#include "kernel_operator.h"

struct DiffTiling {
    uint32_t totalLength;
};

class KernelDiff {
public:
    __aicore__ inline KernelDiff() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, uint32_t totalLength)
    {
        blockLength = totalLength / AscendC::GetBlockNum();
        xGm.SetGlobalBuffer((__gm__ half *)x + blockLength * AscendC::GetBlockIdx(), blockLength + 16);
        zGm.SetGlobalBuffer((__gm__ half *)z + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX, 1, (blockLength + 16) * sizeof(half));
        pipe.InitBuffer(outQueueZ, 1, blockLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm, blockLength + 16);
        inQueueX.EnQue(xLocal);

        xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Sub(zLocal, xLocal[1], xLocal, blockLength);  // expect: unaligned-copy
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);

        zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopy(zGm, zLocal, blockLength);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> outQueueZ;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> zGm;
    uint32_t blockLength;
};

extern "C" __global__ __aicore__ void diff_custom(GM_ADDR x, GM_ADDR z, DiffTiling tiling)
{
    KernelDiff op;
    op.Init(x, z, tiling.totalLength);
    op.Process();
}
