// z = (x + y) * x with TBuf buffers and manual synchronisation instead of queues. Per tile:
// MTE2 loads x and y, V adds into a scratch buffer and multiplies, MTE3 stores. The flags
// order the pipes: MTE2 -> V before the vector ops, V -> MTE3 before the store, MTE3 -> MTE2
// before the next tile's loads overwrite what the store may still read. That last wait sits
// at the top of the loop, so one SetFlag before the loop lets the first tile through.
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
        AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
        for (uint32_t i = 0; i < blockLength / tileLength; i++) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
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
