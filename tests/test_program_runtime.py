"""The ACL runtime beyond plain launches, in program mode: ACL graphs (a stream captured into a
model with aclmdlRICaptureBegin/End and run with aclmdlRIExecuteAsync, on one stream and on two
joined by events) and aclrtc (a kernel compiled from a string while the program runs, loaded with
aclrtBinaryLoadFromData and launched with aclrtLaunchKernelWithArgsArray; compile errors come back
through aclrtcGetCompileLog with asc-devkit's return codes)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sage_npu.npu_eval.program import run_program
from sage_npu.npu_eval.settings import EvalSettings

KERNEL = r"""
constexpr uint32_t N = 256;

__vector__ __global__ void scale_add(__gm__ float* x, __gm__ float* y, __gm__ float* z)
{
    AscendC::GlobalTensor<float> xGm, yGm, zGm;
    xGm.SetGlobalBuffer(x + AscendC::GetBlockIdx() * N, N);
    yGm.SetGlobalBuffer(y + AscendC::GetBlockIdx() * N, N);
    zGm.SetGlobalBuffer(z + AscendC::GetBlockIdx() * N, N);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    auto xl = ub.Alloc<float, N>();
    auto yl = ub.Alloc<float, N>();
    AscendC::DataCopy(xl, xGm, N);
    AscendC::DataCopy(yl, yGm, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(xl, xl, yl, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, xl, N);
    AscendC::PipeBarrier<PIPE_ALL>();
}
"""

GRAPH = r"""
#include <cstdio>
#include "acl/acl.h"
#include "kernel_operator.h"
""" + KERNEL + r"""
int main()
{
    constexpr uint32_t blocks = 2, total = blocks * N;
    size_t bytes = total * sizeof(float);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream main_stream = nullptr, side = nullptr;
    aclrtCreateStream(&main_stream);
    aclrtCreateStream(&side);
    aclrtEvent ready = nullptr, done = nullptr;
    aclrtCreateEventExWithFlag(&ready, ACL_EVENT_SYNC);
    aclrtCreateEventExWithFlag(&done, ACL_EVENT_SYNC);
    float *xh, *yh, *zh, *xd, *yd, *zd;
    aclrtMallocHost((void**)&xh, bytes);
    aclrtMallocHost((void**)&yh, bytes);
    aclrtMallocHost((void**)&zh, bytes);
    aclrtMalloc((void**)&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    for (uint32_t i = 0; i < total; ++i) { xh[i] = float(i); yh[i] = 1.0f; zh[i] = -1.0f; }

    aclmdlRI model = nullptr;
    aclmdlRICaptureBegin(main_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
    aclrtMemcpyAsync(xd, bytes, xh, bytes, ACL_MEMCPY_HOST_TO_DEVICE, main_stream);
    aclrtRecordEvent(ready, main_stream);
    aclrtStreamWaitEvent(side, ready);
    aclrtMemcpyAsync(yd, bytes, yh, bytes, ACL_MEMCPY_HOST_TO_DEVICE, side);
    scale_add<<<blocks, nullptr, side>>>(xd, yd, zd);
    aclrtRecordEvent(done, side);
    aclrtStreamWaitEvent(main_stream, done);
    aclrtMemcpyAsync(zh, bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST, main_stream);
    std::printf("in-capture-sync %d\n", aclrtSynchronizeStream(main_stream));  // expect: being captured
    aclmdlRICaptureEnd(main_stream, &model);
    std::printf("captured z0 %g\n", zh[0]);  // nothing ran yet
    aclmdlRIDebugJsonPrint(model, "./model.json", 0);
    for (int run = 1; run <= 3; ++run) {
        for (uint32_t i = 0; i < total; ++i) yh[i] = float(run);  // each execution copies what is there then
        aclmdlRIExecuteAsync(model, main_stream);
        aclrtSynchronizeStream(main_stream);
        std::printf("run %d z %g %g\n", run, zh[0], zh[total - 1]);
    }
    aclmdlRIDestroy(model);
    std::printf("destroyed-twice %d\n", aclmdlRIDestroy(model));  // expect: aclmdlRIDestroy destroyed
    aclrtFree(xd); aclrtFree(yd); aclrtFree(zd);
    aclrtFreeHost(xh); aclrtFreeHost(yh); aclrtFreeHost(zh);
    aclrtDestroyStream(side);
    aclrtDestroyStream(main_stream);
    aclFinalize();
    return 0;
}
"""

RTC = r'''
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_rt_compile.h"

static const char* kSource = R"src(
#include "kernel_operator.h"
#include "utils/debug/asc_printf.h"
extern "C" __global__ __vector__ void hello() { printf("hello from block %d\n", int(AscendC::GetBlockIdx())); }
namespace ops {
template <typename T>
__global__ __vector__ void add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n)
{
    AscendC::GlobalTensor<T> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ T*)x, n);
    yGm.SetGlobalBuffer((__gm__ T*)y, n);
    zGm.SetGlobalBuffer((__gm__ T*)z, n);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    auto xl = ub.Alloc<T, 512>();
    auto yl = ub.Alloc<T, 512>();
    AscendC::DataCopy(xl, xGm, n);
    AscendC::DataCopy(yl, yGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(xl, xl, yl, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, xl, n);
}
}  // namespace ops
)src";

static const char* kBroken = "extern \"C\" __global__ void broken() { undeclared_thing(); }\n";

int main()
{
    aclrtcProg bad = nullptr;
    aclrtcCreateProg(&bad, kBroken, "broken.asc", 0, nullptr, nullptr);
    const char* arch[] = {"--npu-arch=dav-2201"};
    std::printf("compile-error %d\n", aclrtcCompileProg(bad, 1, arch));
    size_t logSize = 0;
    aclrtcGetCompileLogSize(bad, &logSize);
    std::vector<char> log(logSize);
    aclrtcGetCompileLog(bad, log.data());
    std::printf("log-names-line %d\n", std::strstr(log.data(), "broken.asc:1") != nullptr);
    const char* empty[] = {""};
    std::printf("empty-option %d\n", aclrtcCompileProg(bad, 1, empty));
    std::printf("null-prog %d\n", aclrtcCompileProg(nullptr, 0, nullptr));
    aclrtcDestroyProg(&bad);

    aclrtcProg prog = nullptr;
    aclrtcCreateProg(&prog, kSource, "kernels.asc", 0, nullptr, nullptr);
    aclrtcAddNameExpr(prog, "ops::add<float>");
    std::printf("compile %d\n", aclrtcCompileProg(prog, 1, arch));
    size_t binSize = 0;
    aclrtcGetBinDataSize(prog, &binSize);
    std::vector<char> bin(binSize);
    aclrtcGetBinData(prog, bin.data());
    const char* lowered = nullptr;
    aclrtcGetLoweredName(prog, "ops::add<float>", &lowered);
    std::printf("lowered %s\n", lowered);

    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtBinaryLoadOption option;
    option.type = ACL_RT_BINARY_LOAD_OPT_MAGIC;
    option.value.magic = ACL_RT_BINARY_MAGIC_ELF_AICORE;
    aclrtBinaryLoadOptions options;
    options.numOpt = 1;
    options.options = &option;
    aclrtBinHandle binary = nullptr;
    std::printf("load %d\n", aclrtBinaryLoadFromData(bin.data(), binSize, &options, &binary));
    aclrtFuncHandle hello = nullptr, add = nullptr;
    std::printf("get-hello %d\n", aclrtBinaryGetFunction(binary, "hello", &hello));
    std::printf("get-add %d\n", aclrtBinaryGetFunction(binary, lowered, &add));
    std::printf("get-missing %d\n", aclrtBinaryGetFunction(binary, "nothing_here", &add));  // expect: no kernel
    aclrtBinaryGetFunction(binary, lowered, &add);
    void* noArgs[] = {nullptr};
    std::printf("launch-hello %d\n", aclrtLaunchKernelWithArgsArray(hello, 2, stream, nullptr, noArgs));

    uint32_t n = 288;  // a tail of the 512 allocated
    size_t bytes = 512 * sizeof(float);
    std::vector<float> x(512), y(512), z(512, 0.0f);
    for (uint32_t i = 0; i < 512; ++i) { x[i] = float(i); y[i] = 0.5f; }
    void *xd, *yd, *zd;
    aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(zd, bytes, 0, bytes);
    aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    void* args[] = {&xd, &yd, &zd, &n};
    std::printf("launch-add %d\n", aclrtLaunchKernelWithArgsArray(add, 1, stream, nullptr, args));
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("z %g %g %g\n", z[0], z[287], z[288]);
    aclrtBinaryUnLoad(binary);
    aclrtFree(xd); aclrtFree(yd); aclrtFree(zd);
    aclrtDestroyStream(stream);
    aclrtcDestroyProg(&prog);
    aclFinalize();
    return 0;
}
'''


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return EvalSettings(cache_dir=tmp_path_factory.mktemp("runtime-builds"))


def printed(stdout: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\S+) (.*)$", stdout, re.M)}


def line_of(path: Path, words: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if words in t)


def test_a_captured_graph_runs_on_every_execution_with_the_data_of_then(tmp_path, settings):
    path = tmp_path / "graph.asc"
    path.write_text(GRAPH)
    report = run_program(path, [], settings, cwd=tmp_path)
    out = printed(report.stdout)
    assert out["captured"] == "z0 -1", report.stdout
    # z = x + y with y = run: 0 + run and 511 + run.
    for run in (1, 2, 3):
        assert f"run {run} z {run} {511 + run}" in report.stdout, report.stdout
    assert out["in-capture-sync"] == "107027" and out["destroyed-twice"] == "107000"
    assert len(report.launches) == 3 and all(lr.status == "ok" for lr in report.launches)
    assert {lr.line for lr in report.launches} == {line_of(path, "scale_add<<<")}
    bad = {d.line: d for d in report.diagnostics}
    assert set(bad) == {line_of(path, "expect: being captured"), line_of(path, "expect: aclmdlRIDestroy destroyed")}
    tasks = json.loads((tmp_path / "model.json").read_text())["tasks"]
    assert [t["type"] for t in tasks] == ["MEMCPY_ASYNC", "EVENT_RECORD", "EVENT_WAIT", "MEMCPY_ASYNC", "KERNEL",
                                          "EVENT_RECORD", "EVENT_WAIT", "MEMCPY_ASYNC"]


def test_aclrtc_compiles_loads_and_launches_a_kernel_from_a_string(tmp_path, settings):
    path = tmp_path / "rtc.cpp"
    path.write_text(RTC)
    report = run_program(path, [], settings, cwd=tmp_path, timeout_s=240)
    out = printed(report.stdout)
    assert out["compile-error"] == "176003" and out["log-names-line"] == "1", report.stdout + report.stderr
    assert out["empty-option"] == "176002" and out["null-prog"] == "176000"
    assert out["compile"] == "0" and out["load"] == "0", report.stdout
    assert out["lowered"].startswith("_ZN3ops3add"), out["lowered"]
    assert out["get-hello"] == "0" and out["get-add"] == "0" and out["get-missing"] == "507027"
    assert out["launch-hello"] == "0" and out["launch-add"] == "0"
    assert report.stdout.count("hello from block") == 2
    assert out["z"] == "0.5 287.5 0", out["z"]  # n = 288 of 512: the rest is left as it was
    assert [lr.kernel for lr in report.launches] == ["hello", "ops::add<float>"]
    assert all(lr.status == "ok" for lr in report.launches), report.launches
    assert [d.line for d in report.diagnostics] == [line_of(path, "expect: no kernel")]


# Race tracking's bookkeeping (launch.h, kMaxTrackedGmBytes): a writer array of 4 bytes per GM byte,
# order stamps of 4 more in a mixed launch. Past 256 MiB of tracked GM in all a buffer goes without
# it, so a sample allocating over a GiB (matmul_gelu_high_performance: 512 MiB of GM and as much
# host memory) stays within the run's address space: two blocks writing the same floats race in the
# first buffer (tracked) and go unreported in the second (past the total).
TRACKED = r"""
#include <cstdio>
#include "acl/acl.h"
#include "kernel_operator.h"

__vector__ __global__ void both_write(__gm__ float* z)
{
    AscendC::GlobalTensor<float> zGm;
    zGm.SetGlobalBuffer(z, 64);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    auto zl = ub.Alloc<float, 64>();
    AscendC::Duplicate(zl, float(AscendC::GetBlockIdx() + 1), 64);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, zl, 64);
    AscendC::PipeBarrier<PIPE_ALL>();
}

int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    float *tracked = nullptr, *past = nullptr;
    aclrtMalloc((void**)&tracked, size_t(200) << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&past, size_t(100) << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    both_write<<<2, nullptr, stream>>>(tracked);  // expect: a race
    aclrtSynchronizeStream(stream);
    both_write<<<2, nullptr, stream>>>(past);  // expect: untracked
    aclrtSynchronizeStream(stream);
    std::printf("done 1\n");
    aclrtFree(tracked);
    aclrtFree(past);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_gm_past_the_tracked_total_goes_without_race_tracking(tmp_path, settings):
    path = tmp_path / "tracked.asc"
    path.write_text(TRACKED)
    report = run_program(path, [], settings, cwd=tmp_path)
    assert printed(report.stdout).get("done") == "1", report.stdout + report.stderr
    first, second = report.launches
    assert (first.line, second.line) == (line_of(path, "a race"), line_of(path, "untracked"))
    races = [d for d in first.diagnostics if d.code == "gm-race"]
    assert len(races) == 1 and races[0].message.startswith("block 1 writes tracked[0..63]"), first.diagnostics
    assert second.status == "ok" and not second.diagnostics, second.diagnostics
