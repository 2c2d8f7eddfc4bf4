// Starts a daemon before main (before the seccomp filter exists), then forks in a loop.
// Nothing it starts may outlive the run.
#include "kernel_operator.h"
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

// A global constructor runs before the harness's main: fork, leave the session, fork again
// so the daemon is orphaned, and sleep forever.
static int g_daemon = [] {
    pid_t p = fork();
    if (p == 0) {
        setsid();
        if (fork() == 0)
            for (;;) pause();
        _exit(0);
    }
    return int(p);
}();

extern "C" __global__ __aicore__ void fork_storm(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    int started = 0, refused = 0, err = 0;
    for (int i = 0; i < 64; ++i) {
        pid_t p = fork();
        if (p == 0) {
            setsid();
            for (;;) fork();
        }
        if (p < 0) {
            ++refused;
            err = errno;
        } else {
            ++started;
        }
    }
    std::printf("fork storm: %d started, %d refused (%s); daemon %s\n", started, refused, std::strerror(err),
                g_daemon > 0 ? "started" : "refused");
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopy(zGm, t, n);
}
