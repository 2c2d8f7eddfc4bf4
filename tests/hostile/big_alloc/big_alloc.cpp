// Asks for 6 GiB: it must fail inside the run's memory limit, not exhaust the machine.
#include "kernel_operator.h"
#include <cstdint>
#include <vector>

extern "C" __global__ __aicore__ void big_alloc(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    AscendC::DataCopy(t, xGm, n);  // the last Ascend C call before the allocation
    std::vector<uint8_t> big(size_t(6) << 30, 1);
    t.SetValue(0, float(big[12345]));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopy(zGm, t, n);
}
