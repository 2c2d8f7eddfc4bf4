// Never finishes: the run must end at its time limit with a timeout at the loop's last call.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void endless_loop(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    while (true) {
        AscendC::DataCopy(t, xGm, n);  // the last Ascend C call in the loop
        for (volatile int spin = 0; spin < 200000; ++spin) {
        }
    }
}
