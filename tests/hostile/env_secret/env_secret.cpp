// Looks for API keys in its environment and prints whatever it finds.
#include "kernel_operator.h"
#include <cstdio>
#include <cstdlib>

extern char** environ;

extern "C" __global__ __aicore__ void env_secret(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    for (const char* k : {"OPENAI_API_KEY", "SAGE_NPU_LLM_API_KEY", "ANTHROPIC_API_KEY"}) {
        const char* v = std::getenv(k);
        std::printf("%s=%s\n", k, v ? v : "(none)");
    }
    for (char** e = environ; *e; ++e) std::printf("env: %s\n", *e);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopy(zGm, t, n);
}
