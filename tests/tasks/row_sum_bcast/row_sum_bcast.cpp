#include "kernel_operator.h"

struct RowTiling {
    uint32_t rows;
    uint32_t cols;     // real row length
    uint32_t pitch;    // cols rounded up to 8 floats (32 bytes)
};

// y[r, c] = x[r, c] - sum(x[r, :]) / cols: each row minus its mean, with the high-level Sum and
// Broadcast (one block; rows padded to 32 bytes in UB, copied with DataCopyPad).
extern "C" __global__ __aicore__ void row_sum_bcast(GM_ADDR x, GM_ADDR y, RowTiling t)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, bs, bb;
    pipe.InitBuffer(bx, t.rows * t.pitch * sizeof(float));
    pipe.InitBuffer(bs, 64 * sizeof(float));
    pipe.InitBuffer(bb, t.rows * t.pitch * sizeof(float));
    AscendC::LocalTensor<float> vx = bx.Get<float>();
    AscendC::LocalTensor<float> sums = bs.Get<float>();
    AscendC::LocalTensor<float> wide = bb.Get<float>();
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, t.rows * t.cols);
    yg.SetGlobalBuffer((__gm__ float*)y, t.rows * t.cols);
    AscendC::DataCopyExtParams rowsCopy{static_cast<uint16_t>(t.rows), static_cast<uint32_t>(t.cols * sizeof(float)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<float> pad{true, 0, static_cast<uint8_t>(t.pitch - t.cols), 0.0f};
    AscendC::DataCopyPad(vx, xg, rowsCopy, pad);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::SumParams p{t.rows, t.pitch, t.cols};
    AscendC::Sum(sums, vx, p);
    AscendC::Muls(sums, sums, -1.0f / t.cols, t.rows);
    const uint32_t dstShape[2] = {t.rows, t.pitch};
    const uint32_t srcShape[2] = {t.rows, 1};
    AscendC::BroadCast<float, 2, 1>(wide, sums, dstShape, srcShape);
    AscendC::Add(vx, vx, wide, t.rows * t.pitch);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopyPad(yg, vx, rowsCopy);
}
