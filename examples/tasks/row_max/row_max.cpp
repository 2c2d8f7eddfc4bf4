// Row-wise max of a [rows, cols] fp16 matrix, any cols: DataCopyPad lands each row on a 32-byte
// boundary in UB, ReduceMax leaves each row's result in its own 32-byte block, and one strided
// DataCopyPad (2-byte bursts, one per block) writes the maxima out densely.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t BLOCK_HALFS = 32 / sizeof(half);

struct RowMaxTiling {
    uint32_t formerNum;     // cores that take formerRows rows; the rest take tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t cols;
    uint32_t colsAligned;   // cols rounded up to 16: a row's stride in UB
    uint32_t tileRows;
};

class KernelRowMax {
public:
    __aicore__ inline KernelRowMax() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const RowMaxTiling& tiling)
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

        xGm.SetGlobalBuffer((__gm__ half *)x + rowOffset * cols, uint64_t(rowNum) * cols);
        yGm.SetGlobalBuffer((__gm__ half *)y + rowOffset, rowNum);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * colsAligned * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileRows * BLOCK_HALFS * sizeof(half));
        pipe.InitBuffer(workBuf, colsAligned * sizeof(half));
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
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(rows),
                                              static_cast<uint32_t>(cols * sizeof(half)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
        AscendC::DataCopyPad(xLocal, xGm[uint64_t(row) * cols], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t rows)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        AscendC::LocalTensor<half> work = workBuf.Get<half>();
        for (uint32_t r = 0; r < rows; r++) {
            AscendC::ReduceMax(yLocal[r * BLOCK_HALFS], xLocal[r * colsAligned], work, cols);
        }
        outQueueY.EnQue<half>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        // One 2-byte burst per row; each burst starts at the next 32-byte block of UB.
        AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(rows), sizeof(half), 0, 0, 0};
        AscendC::DataCopyPad(yGm[row], yLocal, copyParams);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> workBuf;
    AscendC::GlobalTensor<half> xGm, yGm;
    uint32_t rowNum;
    uint32_t cols;
    uint32_t colsAligned;
    uint32_t tileRows;
};

extern "C" __global__ __aicore__ void row_max(GM_ADDR x, GM_ADDR y, RowMaxTiling tiling)
{
    KernelRowMax op;
    op.Init(x, y, tiling);
    op.Process();
}
