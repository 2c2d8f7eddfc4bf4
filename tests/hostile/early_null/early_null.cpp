// Writes through a null pointer before its first Ascend C call: the crash must name the
// function it was in, not the #include.
#include "kernel_operator.h"

class KernelEarly {
public:
    __aicore__ inline void Scribble(uint32_t n)
    {
        volatile float* p = nullptr;
        p[n] = 1.0f;
    }
};

extern "C" __global__ __aicore__ void early_null(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    KernelEarly op;
    op.Scribble(n);
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
}
