// Tries to leave the sandbox from the kernel body: run programs, open sockets, signal others.
#include "kernel_operator.h"
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

static void say(const char* what, long rc) {
    std::printf("%s: %ld (%s)\n", what, rc, rc < 0 ? std::strerror(errno) : "ok");
}

extern "C" __global__ __aicore__ void escape(GM_ADDR x, GM_ADDR z, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    zGm.SetGlobalBuffer((__gm__ float *)z, n);
    AscendC::DataCopy(t, xGm, n);
    std::printf("system: status %d\n", std::system("touch /tmp/sage-hostile-escape"));
    char* const argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"), const_cast<char*>("true"), nullptr};
    say("execv", execv("/bin/sh", argv));
    int s = socket(AF_INET, SOCK_STREAM, 0);
    say("socket", s);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(80);
    addr.sin_addr.s_addr = htonl(0x01010101);
    say("connect", connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr));
    // A PID that does not exist: ESRCH if a call were let through, EPERM when it is denied.
    say("ptrace", ptrace(PTRACE_ATTACH, 4194000, nullptr, nullptr));
    say("kill other", kill(4194000, 0));
    say("kill self", kill(getpid(), 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
    AscendC::DataCopy(zGm, t, n);
}
