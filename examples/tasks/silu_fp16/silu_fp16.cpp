// SiLU y = x / (1 + exp(-x)) on fp16 data computed in fp32: each tile is widened with Cast,
// evaluated with Muls/Exp/Adds/Div in float scratch buffers (TBuf), and rounded back once.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct SiluTiling {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // a multiple of 16, so half and float tiles are whole 32-byte blocks
};

class KernelSilu {
public:
    __aicore__ inline KernelSilu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SiluTiling& tiling)
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

        xGm.SetGlobalBuffer((__gm__ half *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(xFloatBuf, tileLength * sizeof(float));
        pipe.InitBuffer(denomBuf, tileLength * sizeof(float));
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
        AscendC::DataCopy(xLocal, xGm[start], length);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        AscendC::LocalTensor<float> xFloat = xFloatBuf.Get<float>();
        AscendC::LocalTensor<float> denom = denomBuf.Get<float>();

        AscendC::Cast(xFloat, xLocal, AscendC::RoundMode::CAST_NONE, length);
        inQueueX.FreeTensor(xLocal);
        AscendC::Muls(denom, xFloat, -1.0f, length);
        AscendC::Exp(denom, denom, length);
        AscendC::Adds(denom, denom, 1.0f, length);
        AscendC::Div(xFloat, xFloat, denom, length);
        AscendC::Cast(yLocal, xFloat, AscendC::RoundMode::CAST_RINT, length);
        outQueueY.EnQue<half>(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t start, uint32_t length)
    {
        AscendC::LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        AscendC::DataCopy(yGm[start], yLocal, length);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> xFloatBuf, denomBuf;
    AscendC::GlobalTensor<half> xGm, yGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void silu_fp16(GM_ADDR x, GM_ADDR y, SiluTiling tiling)
{
    KernelSilu op;
    op.Init(x, y, tiling);
    op.Process();
}
