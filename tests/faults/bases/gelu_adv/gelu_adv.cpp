// y = gelu(x) in fp32 with the advanced API's Gelu (the tanh form), for any length: each core
// takes a multiple of 8 elements, the last tile of the last core moves its odd-sized tail with
// DataCopyPad. Gelu's intermediates go to a sharedTmpBuffer the host sized (tmpBytes, at least
// GetGeluMinTmpSize).
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct GeluTiling {
    uint32_t totalLength;
    uint32_t blockLength;   // elements per core, a multiple of 8
    uint32_t tileLength;    // elements per tile, a multiple of 8
    uint32_t tmpBytes;      // Gelu's work area
};

class KernelGelu {
public:
    __aicore__ inline KernelGelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const GeluTiling& tiling)
    {
        uint64_t offset = uint64_t(tiling.blockLength) * AscendC::GetBlockIdx();
        uint64_t rest = tiling.totalLength - offset;
        blockLength = rest < tiling.blockLength ? uint32_t(rest) : tiling.blockLength;
        tileLength = tiling.tileLength;

        xGm.SetGlobalBuffer((__gm__ float *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(tmpBuf, tiling.tmpBytes);
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
        AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
        AscendC::DataCopyPad(xLocal, xGm[start], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
        AscendC::Gelu(yLocal, xLocal, tmp, length);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(length * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(yGm[start], yLocal, copyParams);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> tmpBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void gelu_adv(GM_ADDR x, GM_ADDR y, GeluTiling tiling)
{
    KernelGelu op;
    op.Init(x, y, tiling);
    op.Process();
}
