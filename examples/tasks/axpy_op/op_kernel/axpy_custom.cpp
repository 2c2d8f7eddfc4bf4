#include "kernel_operator.h"

using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;

class KernelAxpy {
public:
    __aicore__ inline KernelAxpy() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t perBlock,
                                uint32_t tileLength, float alpha)
    {
        uint32_t start = perBlock * GetBlockIdx();
        length = start >= total ? 0 : (total - start < perBlock ? total - start : perBlock);
        this->tileLength = tileLength;
        this->alpha = alpha;
        xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x + start, length);
        yGm.SetGlobalBuffer((__gm__ DTYPE_Y*)y + start, length);
        zGm.SetGlobalBuffer((__gm__ DTYPE_Z*)z + start, length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(DTYPE_X));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(DTYPE_Y));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(DTYPE_Z));
    }
    // PAD: the block's length may end inside a 32-byte block, so copies go through DataCopyPad.
    template <bool PAD>
    __aicore__ inline void Process()
    {
        for (uint32_t off = 0; off < length; off += tileLength) {
            uint32_t n = length - off < tileLength ? length - off : tileLength;
            CopyIn<PAD>(off, n);
            Compute(n);
            CopyOut<PAD>(off, n);
        }
    }

private:
    template <bool PAD>
    __aicore__ inline void CopyIn(uint32_t off, uint32_t n)
    {
        LocalTensor<DTYPE_X> xLocal = inQueueX.AllocTensor<DTYPE_X>();
        LocalTensor<DTYPE_Y> yLocal = inQueueY.AllocTensor<DTYPE_Y>();
        if constexpr (PAD) {
            DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(DTYPE_X)), 0, 0, 0};
            DataCopyPadExtParams<DTYPE_X> pad{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[off], params, pad);
            DataCopyPad(yLocal, yGm[off], params, pad);
        } else {
            DataCopy(xLocal, xGm[off], n);
            DataCopy(yLocal, yGm[off], n);
        }
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<DTYPE_X> xLocal = inQueueX.DeQue<DTYPE_X>();
        LocalTensor<DTYPE_Y> yLocal = inQueueY.DeQue<DTYPE_Y>();
        LocalTensor<DTYPE_Z> zLocal = outQueueZ.AllocTensor<DTYPE_Z>();
        Muls(yLocal, yLocal, static_cast<DTYPE_Y>(alpha), n);
        Add(zLocal, xLocal, yLocal, n);
        outQueueZ.EnQue(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    template <bool PAD>
    __aicore__ inline void CopyOut(uint32_t off, uint32_t n)
    {
        LocalTensor<DTYPE_Z> zLocal = outQueueZ.DeQue<DTYPE_Z>();
        if constexpr (PAD) {
            DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(DTYPE_Z)), 0, 0, 0};
            DataCopyPad(zGm[off], zLocal, params);
        } else {
            DataCopy(zGm[off], zLocal, n);
        }
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<DTYPE_X> xGm;
    GlobalTensor<DTYPE_Y> yGm;
    GlobalTensor<DTYPE_Z> zGm;
    uint32_t length = 0;
    uint32_t tileLength = 0;
    float alpha = 0.0f;
};

extern "C" __global__ __aicore__ void axpy_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelAxpy op;
    op.Init(x, y, z, tilingData.totalLength, tilingData.blockLength, tilingData.tileLength, tilingData.alpha);
    if (TILING_KEY_IS(1)) {
        op.Process<false>();
    } else if (TILING_KEY_IS(2)) {
        op.Process<true>();
    }
}
