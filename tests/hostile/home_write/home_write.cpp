// Writes into $HOME and into the real user's home: both must stay out of the real home.
#include "kernel_operator.h"
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" __global__ __aicore__ void home_write(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    const char* home = std::getenv("HOME");
    std::printf("HOME=%s\n", home ? home : "(none)");
    std::string path = std::string(home ? home : "/tmp") + "/sage-hostile-home.txt";
    FILE* f = std::fopen(path.c_str(), "w");
    std::printf("wrote %s: %s\n", path.c_str(), f ? "yes" : std::strerror(errno));
    if (f) {
        std::fputs("left behind\n", f);
        std::fclose(f);
    }
    FILE* g = std::fopen("/root/sage-hostile-home.txt", "w");
    std::printf("wrote /root: %s\n", g ? "yes" : std::strerror(errno));
    if (g) std::fclose(g);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopy(zGm, t, n);
}
