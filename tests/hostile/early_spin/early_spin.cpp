// Spins before its first Ascend C call: the timeout must name the function it was in, not the #include.
#include "kernel_operator.h"

__aicore__ inline uint32_t SettleCount(uint32_t n)
{
    volatile uint32_t k = 0;
    while (k < n + 1) {  // never ends: k stays below n + 1 when n wraps
        k = k * 0;
    }
    return k;
}

extern "C" __global__ __aicore__ void early_spin(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    uint32_t m = SettleCount(n);
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, m);
}
