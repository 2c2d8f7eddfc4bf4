// LayerNorm over the last axis of a [rows, cols] fp32 matrix with the advanced API's LayerNorm
// ([B, S, H] form, B = 1, S = the rows of a tile). The API takes its shape from a LayerNormTiling
// (GetLayerNormNDTilingInfo on the host), so the host passes one per tile height: full tiles,
// and the short last tile of a core. Mean and variance come out per row; this kernel drops them.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct LayerNormAdvTiling {
    uint32_t formerNum;     // cores that take formerRows rows; the rest take tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t cols;          // H, a multiple of 8
    uint32_t tileRows;
    uint32_t stackBytes;    // LayerNorm's work area
    float eps;
};

class KernelLayerNormAdv {
public:
    __aicore__ inline KernelLayerNormAdv() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, const LayerNormAdvTiling& tiling)
    {
        uint32_t blockIdx = AscendC::GetBlockIdx();
        uint64_t rowOffset;
        if (blockIdx < tiling.formerNum) {
            rowNum = tiling.formerRows;
            rowOffset = uint64_t(tiling.formerRows) * blockIdx;
        } else {
            rowNum = tiling.tailRows;
            rowOffset = uint64_t(tiling.formerRows) * tiling.formerNum +
                        uint64_t(tiling.tailRows) * (blockIdx - tiling.formerNum);
        }
        cols = tiling.cols;
        tileRows = tiling.tileRows;
        eps = tiling.eps;

        xGm.SetGlobalBuffer((__gm__ float *)x + rowOffset * cols, uint64_t(rowNum) * cols);
        yGm.SetGlobalBuffer((__gm__ float *)y + rowOffset * cols, uint64_t(rowNum) * cols);
        gammaGm.SetGlobalBuffer((__gm__ float *)gamma, cols);
        betaGm.SetGlobalBuffer((__gm__ float *)beta, cols);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * cols * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileRows * cols * sizeof(float));
        pipe.InitBuffer(weightQueue, 1, 2 * cols * sizeof(float));
        pipe.InitBuffer(statsBuf, 2 * (tileRows + 8) / 8 * 8 * sizeof(float));
        pipe.InitBuffer(tmpBuf, tiling.stackBytes);
    }
    __aicore__ inline void Process(LayerNormTiling& full, LayerNormTiling& last)
    {
        LoadWeights();
        AscendC::LocalTensor<float> weights = weightQueue.DeQue<float>();
        for (uint32_t row = 0; row < rowNum; row += tileRows) {
            uint32_t rows = (rowNum - row < tileRows) ? (rowNum - row) : tileRows;
            CopyIn(row, rows);
            Compute(weights, rows == tileRows ? full : last);
            CopyOut(row, rows);
        }
        weightQueue.FreeTensor(weights);
    }

private:
    __aicore__ inline void LoadWeights()
    {
        AscendC::LocalTensor<float> weights = weightQueue.AllocTensor<float>();
        AscendC::DataCopy(weights, gammaGm, cols);
        AscendC::DataCopy(weights[cols], betaGm, cols);
        weightQueue.EnQue(weights);
    }
    __aicore__ inline void CopyIn(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[uint64_t(row) * cols], rows * cols);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(const AscendC::LocalTensor<float>& weights, LayerNormTiling& lnTiling)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LocalTensor<float> stats = statsBuf.Get<float>();
        AscendC::LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
        uint32_t statsLen = (tileRows + 7) / 8 * 8;
        AscendC::LayerNorm<float>(yLocal, stats, stats[statsLen], xLocal, weights, weights[cols], tmp, eps, lnTiling);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopy(yGm[uint64_t(row) * cols], yLocal, rows * cols);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> weightQueue;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> statsBuf, tmpBuf;
    AscendC::GlobalTensor<float> xGm, yGm, gammaGm, betaGm;
    uint32_t rowNum;
    uint32_t cols;
    uint32_t tileRows;
    float eps;
};

extern "C" __global__ __aicore__ void layernorm_adv(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y,
                                                    LayerNormAdvTiling tiling, LayerNormTiling full,
                                                    LayerNormTiling formerLast, LayerNormTiling tailLast)
{
    KernelLayerNormAdv op;
    op.Init(x, gamma, beta, y, tiling);
    op.Process(full, AscendC::GetBlockIdx() < tiling.formerNum ? formerLast : tailLast);
}
