// Leaky ReLU in fp16 written as a framework op kernel: the entry takes (x, y, workspace,
// tiling) as GM addresses and reads its tiling struct from GM with GET_TILING_DATA.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

// The op project's host side would generate this from its tiling definition.
struct LeakyReluTilingData {
    uint32_t formerNum;     // cores that take formerLength elements; the rest take tailLength
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;    // a multiple of 16 (32 bytes of half)
    float negativeSlope;
};

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LeakyReluTilingData& tiling)
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
        negativeSlope = static_cast<half>(tiling.negativeSlope);

        xGm.SetGlobalBuffer((__gm__ half *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(half));
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
        AscendC::LeakyRelu(yLocal, xLocal, negativeSlope, length);
        outQueueY.EnQue<half>(yLocal);
        inQueueX.FreeTensor(xLocal);
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
    AscendC::GlobalTensor<half> xGm, yGm;
    uint32_t blockLength;
    uint32_t tileLength;
    half negativeSlope;
};

extern "C" __global__ __aicore__ void leaky_relu(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(LeakyReluTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KernelLeakyRelu op;
    op.Init(x, y, tilingData);
    op.Process();
}
