// z = (x + y) * x with TBuf buffers and manual flags, where the MTE3 -> MTE2 wait at the top
// of the tile loop has no SetFlag before the loop: the first tile's loads wait for a store
// that never happened.
#include "kernel_operator.h"

struct FmaTiling {
    uint32_t totalLength;
    uint32_t tileLength;
};

class KernelFma {
public:
    __aicore__ inline KernelFma() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
    {
        blockLength = totalLength / AscendC::GetBlockNum();
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ half *)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + blockLength * AscendC::GetBlockIdx(), blockLength);
        zGm.SetGlobalBuffer((__gm__ half *)z + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(xBuf, tileLength * sizeof(half));
        pipe.InitBuffer(yBuf, tileLength * sizeof(half));
        pipe.InitBuffer(tmpBuf, tileLength * sizeof(half));
        pipe.InitBuffer(zBuf, tileLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> xLocal = xBuf.Get<half>();
        AscendC::LocalTensor<half> yLocal = yBuf.Get<half>();
        AscendC::LocalTensor<half> tmp = tmpBuf.Get<half>();
        AscendC::LocalTensor<half> zLocal = zBuf.Get<half>();
        for (uint32_t i = 0; i < blockLength / tileLength; i++) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);  // expect: flag-deadlock
            AscendC::DataCopy(xLocal, xGm[i * tileLength], tileLength);
            AscendC::DataCopy(yLocal, yGm[i * tileLength], tileLength);
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
            AscendC::Add(tmp, xLocal, yLocal, tileLength);
            AscendC::Mul(zLocal, tmp, xLocal, tileLength);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
            AscendC::DataCopy(zGm[i * tileLength], zLocal, tileLength);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> xBuf, yBuf, tmpBuf, zBuf;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    AscendC::GlobalTensor<half> zGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void fma_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, FmaTiling tiling)
{
    KernelFma op;
    op.Init(x, y, z, tiling.totalLength, tiling.tileLength);
    op.Process();
}
