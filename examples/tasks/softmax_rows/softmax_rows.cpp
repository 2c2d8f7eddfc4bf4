// Row softmax of a [rows, cols] fp32 matrix, any cols, one row at a time in UB: ReduceMax,
// subtract (Adds of -max), Exp, ReduceSum, scale by 1/sum (Muls). The two reductions are read
// back as scalars, so each GetValue waits for the vector pipe with a V_S flag.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t BLOCK_FLOATS = 32 / sizeof(float);

struct SoftmaxTiling {
    uint32_t formerNum;     // cores that take formerRows rows; the rest take tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t cols;
    uint32_t colsAligned;   // cols rounded up to 8: a row's stride in UB
    uint32_t tileRows;
};

class KernelSoftmax {
public:
    __aicore__ inline KernelSoftmax() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxTiling& tiling)
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
        pipe.InitBuffer(workBuf, colsAligned * sizeof(float));
        pipe.InitBuffer(reduceBuf, BLOCK_FLOATS * sizeof(float));
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
        AscendC::DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
        AscendC::DataCopyPad(xLocal, xGm[uint64_t(row) * cols], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline float ReadScalar(const AscendC::LocalTensor<float>& t)
    {
        int32_t eventId = static_cast<int32_t>(pipe.FetchEventID(AscendC::HardEvent::V_S));
        AscendC::SetFlag<AscendC::HardEvent::V_S>(eventId);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(eventId);
        return t.GetValue(0);
    }
    __aicore__ inline void Compute(uint32_t rows)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LocalTensor<float> work = workBuf.Get<float>();
        AscendC::LocalTensor<float> reduced = reduceBuf.Get<float>();
        for (uint32_t r = 0; r < rows; r++) {
            AscendC::LocalTensor<float> src = xLocal[r * colsAligned];
            AscendC::LocalTensor<float> dst = yLocal[r * colsAligned];
            AscendC::ReduceMax(reduced, src, work, cols);
            float rowMax = ReadScalar(reduced);
            AscendC::Adds(dst, src, -rowMax, cols);
            AscendC::Exp(dst, dst, cols);
            AscendC::ReduceSum(reduced, dst, work, cols);
            float rowSum = ReadScalar(reduced);
            AscendC::Muls(dst, dst, 1.0f / rowSum, cols);
        }
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
    AscendC::TBuf<AscendC::QuePosition::VECCALC> workBuf, reduceBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t rowNum;
    uint32_t cols;
    uint32_t colsAligned;
    uint32_t tileRows;
};

extern "C" __global__ __aicore__ void softmax_rows(GM_ADDR x, GM_ADDR y, SoftmaxTiling tiling)
{
    KernelSoftmax op;
    op.Init(x, y, tiling);
    op.Process();
}
