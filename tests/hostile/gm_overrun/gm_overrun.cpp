// Writes through the raw output pointer past the end of its buffer.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void gm_overrun(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopy(zGm, t, n);  // the last Ascend C call before the overrun
    __gm__ float* out = (__gm__ float *)z;
    for (uint32_t i = 0; i < n + 4096; ++i) out[i] = 0.0f;
}
