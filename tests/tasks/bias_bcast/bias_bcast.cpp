#include "kernel_operator.h"

struct BiasTiling {
    uint32_t rows;
    uint32_t cols;
    uint32_t pitch;   // cols rounded up to 8 floats (32 bytes)
};

// y[r, c] = x[r, c] + b[c] + s: the bias row spread over the rows with Broadcast along axis 0, and
// the scalar s spread over a row with the one-dimensional form.
extern "C" __global__ __aicore__ void bias_bcast(GM_ADDR x, GM_ADDR b, GM_ADDR s, GM_ADDR y, BiasTiling t)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, bb, bw, bs, bsw;
    pipe.InitBuffer(bx, t.rows * t.pitch * sizeof(float));
    pipe.InitBuffer(bb, t.pitch * sizeof(float));
    pipe.InitBuffer(bw, t.rows * t.pitch * sizeof(float));
    pipe.InitBuffer(bs, 8 * sizeof(float));
    pipe.InitBuffer(bsw, t.rows * t.pitch * sizeof(float));
    AscendC::LocalTensor<float> vx = bx.Get<float>(), vb = bb.Get<float>(), wide = bw.Get<float>();
    AscendC::LocalTensor<float> vs = bs.Get<float>(), swide = bsw.Get<float>();
    AscendC::GlobalTensor<float> xg, bg, sg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, t.rows * t.cols);
    bg.SetGlobalBuffer((__gm__ float*)b, t.cols);
    sg.SetGlobalBuffer((__gm__ float*)s, 1);
    yg.SetGlobalBuffer((__gm__ float*)y, t.rows * t.cols);
    uint8_t padCols = static_cast<uint8_t>(t.pitch - t.cols);
    AscendC::DataCopyExtParams rowsCopy{static_cast<uint16_t>(t.rows), static_cast<uint32_t>(t.cols * 4), 0, 0, 0};
    AscendC::DataCopyExtParams oneRow{1, static_cast<uint32_t>(t.cols * 4), 0, 0, 0};
    AscendC::DataCopyExtParams oneValue{1, 4, 0, 0, 0};
    AscendC::DataCopyPadExtParams<float> pad{true, 0, padCols, 0.0f};
    AscendC::DataCopyPadExtParams<float> padValue{true, 0, 7, 0.0f};
    AscendC::DataCopyPad(vx, xg, rowsCopy, pad);
    AscendC::DataCopyPad(vb, bg, oneRow, pad);
    AscendC::DataCopyPad(vs, sg, oneValue, padValue);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    const uint32_t dst2[2] = {t.rows, t.pitch};
    const uint32_t src2[2] = {1, t.pitch};
    AscendC::Broadcast<float, 2, 0>(wide, vb, dst2, src2);
    const uint32_t dst1[1] = {t.rows * t.pitch};
    const uint32_t src1[1] = {1};
    AscendC::Broadcast<float, 1, 0>(swide, vs, dst1, src1);
    AscendC::Add(vx, vx, wide, t.rows * t.pitch);
    AscendC::Add(vx, vx, swide, t.rows * t.pitch);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopyPad(yg, vx, rowsCopy);
}
