// Row softmax of a [rows, cols] fp32 matrix with the advanced API's SoftMax: a tile of rows is
// loaded with each row padded to a 32-byte multiple (colsAligned), and SoftMaxShapeInfo tells
// the API the real row length (oriSrcK), so max and sum cover only the real columns. The tiling
// passed is empty: the API derives it from the shape and the sharedTmpBuffer (isCheckTiling).
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct SoftmaxAdvTiling {
    uint32_t formerNum;     // cores that take formerRows rows; the rest take tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t cols;
    uint32_t colsAligned;   // cols rounded up to 8: a row's stride in UB
    uint32_t tileRows;
    uint32_t tmpBytes;      // SoftMax's work area for tileRows rows
};

class KernelSoftmaxAdv {
public:
    __aicore__ inline KernelSoftmaxAdv() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxAdvTiling& tiling)
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
        colsAligned = tiling.colsAligned;
        tileRows = tiling.tileRows;

        xGm.SetGlobalBuffer((__gm__ float *)x + rowOffset * cols, uint64_t(rowNum) * cols);
        yGm.SetGlobalBuffer((__gm__ float *)y + rowOffset * cols, uint64_t(rowNum) * cols);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * colsAligned * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileRows * colsAligned * sizeof(float));
        pipe.InitBuffer(tmpBuf, tiling.tmpBytes);
    }
    __aicore__ inline void Process()
    {
        for (uint32_t row = 0; row < rowNum; row += tileRows) {
            uint32_t rows = (rowNum - row < tileRows) ? (rowNum - row) : tileRows;
            CopyIn(row, rows);
            Compute(rows);
            CopyOut(row, rows);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(rows),
                                              static_cast<uint32_t>(cols * sizeof(float)), 0, 0, 0};
        // The padding columns are set (to 0): SoftMax computes on them too.
        AscendC::DataCopyPadExtParams<float> padParams{true, 0, static_cast<uint8_t>(colsAligned - cols), 0.0f};
        AscendC::DataCopyPad(xLocal, xGm[uint64_t(row) * cols], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t rows)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
        AscendC::SoftMaxShapeInfo shape{rows, colsAligned, rows, cols};
        SoftMaxTiling emptyTiling{};
        AscendC::SoftMax<float>(yLocal, xLocal, tmp, emptyTiling, shape);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(rows),
                                              static_cast<uint32_t>(cols * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(yGm[uint64_t(row) * cols], yLocal, copyParams);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> tmpBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t rowNum;
    uint32_t cols;
    uint32_t colsAligned;
    uint32_t tileRows;
};

extern "C" __global__ __aicore__ void softmax_adv(GM_ADDR x, GM_ADDR y, SoftmaxAdvTiling tiling)
{
    KernelSoftmaxAdv op;
    op.Init(x, y, tiling);
    op.Process();
}
