// RMSNorm y = x / sqrt(mean(x^2) + eps) * weight over the last axis, fp16 in and out with the
// statistics and scaling in fp32; the weight (the reference model's parameter) is loaded and
// widened once per core, rows are split over the cores and moved in multi-row tiles.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t BLOCK_FLOATS = 32 / sizeof(float);

struct RmsNormRowTiling {
    uint32_t formerNum;     // cores that take formerRows rows; the rest take tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t cols;          // hidden size, a multiple of 16
    uint32_t tileRows;
    uint32_t workLength;    // ReduceSum scratch: one float per 64-float repeat, whole blocks
    float invCols;          // 1 / cols
    float eps;
};

class KernelRmsNorm {
public:
    __aicore__ inline KernelRmsNorm() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR weight, GM_ADDR y, const RmsNormRowTiling& tiling)
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
        invCols = tiling.invCols;
        eps = tiling.eps;

        xGm.SetGlobalBuffer((__gm__ half *)x + rowOffset * cols, uint64_t(rowNum) * cols);
        yGm.SetGlobalBuffer((__gm__ half *)y + rowOffset * cols, uint64_t(rowNum) * cols);
        weightGm.SetGlobalBuffer((__gm__ half *)weight, cols);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * cols * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileRows * cols * sizeof(half));
        pipe.InitBuffer(inQueueWeight, 1, cols * sizeof(half));
        pipe.InitBuffer(weightFloatBuf, cols * sizeof(float));
        pipe.InitBuffer(rowFloatBuf, cols * sizeof(float));
        pipe.InitBuffer(squareBuf, cols * sizeof(float));
        pipe.InitBuffer(reduceBuf, BLOCK_FLOATS * sizeof(float));
        pipe.InitBuffer(workBuf, tiling.workLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LoadWeight();
        for (uint32_t row = 0; row < rowNum; row += tileRows) {
            uint32_t rows = (rowNum - row < tileRows) ? (rowNum - row) : tileRows;
            CopyIn(row, rows);
            Compute(rows);
            CopyOut(row, rows);
        }
    }

private:
    __aicore__ inline void LoadWeight()
    {
        AscendC::LocalTensor<half> wIn = inQueueWeight.AllocTensor<half>();
        AscendC::DataCopy(wIn, weightGm, cols);
        inQueueWeight.EnQue(wIn);
        AscendC::LocalTensor<half> wLocal = inQueueWeight.DeQue<half>();
        AscendC::Cast(weightFloatBuf.Get<float>(), wLocal, AscendC::RoundMode::CAST_NONE, cols);
        inQueueWeight.FreeTensor(wLocal);
    }
    __aicore__ inline void CopyIn(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[uint64_t(row) * cols], rows * cols);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t rows)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        AscendC::LocalTensor<float> wFloat = weightFloatBuf.Get<float>();
        AscendC::LocalTensor<float> xFloat = rowFloatBuf.Get<float>();
        AscendC::LocalTensor<float> square = squareBuf.Get<float>();
        AscendC::LocalTensor<float> reduced = reduceBuf.Get<float>();
        AscendC::LocalTensor<float> work = workBuf.Get<float>();
        for (uint32_t r = 0; r < rows; r++) {
            AscendC::Cast(xFloat, xLocal[r * cols], AscendC::RoundMode::CAST_NONE, cols);
            AscendC::Mul(square, xFloat, xFloat, cols);
            AscendC::ReduceSum(reduced, square, work, cols);
            AscendC::Muls(reduced, reduced, invCols, 1);
            AscendC::Adds(reduced, reduced, eps, 1);
            AscendC::Sqrt(reduced, reduced, 1);
            int32_t eventId = static_cast<int32_t>(pipe.FetchEventID(AscendC::HardEvent::V_S));
            AscendC::SetFlag<AscendC::HardEvent::V_S>(eventId);
            AscendC::WaitFlag<AscendC::HardEvent::V_S>(eventId);
            float rstd = 1.0f / reduced.GetValue(0);
            AscendC::Muls(xFloat, xFloat, rstd, cols);
            AscendC::Mul(xFloat, xFloat, wFloat, cols);
            AscendC::Cast(yLocal[r * cols], xFloat, AscendC::RoundMode::CAST_RINT, cols);
        }
        outQueueY.EnQue<half>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        AscendC::DataCopy(yGm[uint64_t(row) * cols], yLocal, rows * cols);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> inQueueWeight;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> weightFloatBuf, rowFloatBuf, squareBuf, reduceBuf, workBuf;
    AscendC::GlobalTensor<half> xGm, weightGm, yGm;
    uint32_t rowNum;
    uint32_t cols;
    uint32_t tileRows;
    float invCols;
    float eps;
};

extern "C" __global__ __aicore__ void rms_norm(GM_ADDR x, GM_ADDR weight, GM_ADDR y, RmsNormRowTiling tiling)
{
    KernelRmsNorm op;
    op.Init(x, weight, y, tiling);
    op.Process();
}
