// Broadcast bias add z[r, :] = x[r, :] + bias[:] in fp16: rows split over the cores (some take
// one row more), the bias loaded once per core and kept in UB, x moved in multi-row tiles.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct BiasAddTiling {
    uint32_t formerNum;   // cores that take formerRows rows; the rest take tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t cols;        // a multiple of 16 (32 bytes of half)
    uint32_t tileRows;    // rows per tile
};

class KernelBiasAdd {
public:
    __aicore__ inline KernelBiasAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR bias, GM_ADDR z, const BiasAddTiling& tiling)
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

        xGm.SetGlobalBuffer((__gm__ half *)x + rowOffset * cols, uint64_t(rowNum) * cols);
        zGm.SetGlobalBuffer((__gm__ half *)z + rowOffset * cols, uint64_t(rowNum) * cols);
        biasGm.SetGlobalBuffer((__gm__ half *)bias, cols);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * cols * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileRows * cols * sizeof(half));
        pipe.InitBuffer(inQueueBias, 1, cols * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> biasIn = inQueueBias.AllocTensor<half>();
        AscendC::DataCopy(biasIn, biasGm, cols);
        inQueueBias.EnQue(biasIn);
        AscendC::LocalTensor<half> biasLocal = inQueueBias.DeQue<half>();

        for (uint32_t row = 0; row < rowNum; row += tileRows) {
            uint32_t rows = (rowNum - row < tileRows) ? (rowNum - row) : tileRows;
            CopyIn(row, rows);
            Compute(rows, biasLocal);
            CopyOut(row, rows);
        }
        inQueueBias.FreeTensor(biasLocal);
    }

private:
    __aicore__ inline void CopyIn(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[uint64_t(row) * cols], rows * cols);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t rows, const AscendC::LocalTensor<half>& biasLocal)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        for (uint32_t r = 0; r < rows; r++) {
            AscendC::Add(zLocal[r * cols], xLocal[r * cols], biasLocal, cols);
        }
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t row, uint32_t rows)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopy(zGm[uint64_t(row) * cols], zLocal, rows * cols);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> inQueueBias;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm, biasGm, zGm;
    uint32_t rowNum;
    uint32_t cols;
    uint32_t tileRows;
};

extern "C" __global__ __aicore__ void bias_add(GM_ADDR x, GM_ADDR bias, GM_ADDR z, BiasAddTiling tiling)
{
    KernelBiasAdd op;
    op.Init(x, bias, z, tiling);
    op.Process();
}
