"""AI CPU kernels in program mode (docs/acl-runtime.md): a `__global__ __aicpu__` function in a
`.aicpu` file, launched from the host with `<<<numBlocks, nullptr, stream>>>(&args, sizeof(args))`,
runs on the CPU as the AI CPU runs it on the device: with a copy of the argument bytes, in stream
order with the AI Core kernels, writing device memory they read. One program, built once, run twice
(its second run fails the AI CPU API's assert)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sage_npu.npu_eval.program import run_program
from sage_npu.npu_eval.settings import EvalSettings

ARGS_H = r"""
#pragma once
#include <cstdint>
struct Plan {
    uint32_t* len;   // device memory the AI CPU fills and the AI Core kernel reads
    uint32_t want;
    int fail;
};
"""

AICPU = r"""
#include "aicpu_api.h"
#include "plan.h"

__global__ __aicpu__ uint32_t plan_on_cpu(void* args)
{
    Plan* p = static_cast<Plan*>(args);
    assert(p->fail == 0);
    *p->len = p->want;
    p->want = 0;   // the kernel's copy: the host's struct keeps its value
    AscendC::DataStoreBarrier();
    AscendC::printf("planned %u\n", *p->len);
    return 0;
}
"""

MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include "acl/acl.h"
#include "kernel_operator.h"
#include "plan.h"

constexpr uint32_t N = 256;
extern __global__ __aicpu__ uint32_t plan_on_cpu(void* args);

__vector__ __global__ void copy_some(__gm__ uint32_t* len, __gm__ float* x, __gm__ float* z)
{
    AscendC::GlobalTensor<uint32_t> lenGm;
    lenGm.SetGlobalBuffer(len, 8);
    uint32_t n = lenGm.GetValue(0);
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer(x, N);
    zGm.SetGlobalBuffer(z, N);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    auto xl = ub.Alloc<float, N>();
    AscendC::DataCopy(xl, xGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(xl, xl, 2.0f, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, xl, n);
    AscendC::PipeBarrier<PIPE_ALL>();
}

int main(int argc, char** argv)
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream cpu = nullptr, core = nullptr;
    aclrtCreateStream(&cpu);
    aclrtCreateStream(&core);
    aclrtEvent planned = nullptr;
    aclrtCreateEventExWithFlag(&planned, ACL_EVENT_SYNC);
    uint32_t* len;
    float *x, *z, *xh, *zh;
    aclrtMalloc((void**)&len, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&x, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&z, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMallocHost((void**)&xh, N * sizeof(float));
    aclrtMallocHost((void**)&zh, N * sizeof(float));
    aclrtMemset(zh, N * sizeof(float), 0, N * sizeof(float));   // host memory from ACL: allowed
    for (uint32_t i = 0; i < N; ++i) xh[i] = float(i);
    aclrtMemcpy(x, N * sizeof(float), xh, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(z, N * sizeof(float), zh, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    Plan plan{len, 64, argc > 1};
    plan_on_cpu<<<1, nullptr, cpu>>>(&plan, sizeof(Plan));
    aclrtRecordEvent(planned, cpu);
    aclrtStreamWaitEvent(core, planned);
    copy_some<<<1, nullptr, core>>>(len, x, z);
    aclrtSynchronizeStream(core);
    aclrtMemcpy(zh, N * sizeof(float), z, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("host-want %u\n", plan.want);
    std::printf("z %g %g %g\n", zh[1], zh[63], zh[64]);
    float* plain = static_cast<float*>(std::malloc(64));
    aclrtMemset(plain, 64, 0, 64);   // expect: not from ACL
    std::free(plain);
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("aicpu")
    (d / "plan.h").write_text(ARGS_H)
    (d / "plan.aicpu").write_text(AICPU)
    (d / "main.asc").write_text(MAIN)
    return d, EvalSettings(cache_dir=d / "builds")


def line_of(path: Path, words: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if words in t)


def test_the_ai_cpu_plans_and_the_ai_core_kernel_follows(program):
    d, settings = program
    report = run_program(d / "main.asc", [], settings, cwd=d, extra_sources=[d / "plan.aicpu"])
    assert "planned 64" in report.stdout, report.stdout
    assert "host-want 64" in report.stdout  # the AI CPU changed its copy of the arguments only
    # z = 2x over the 64 elements the AI CPU planned; the rest stays as the host set it
    assert re.search(r"^z 2 126 0$", report.stdout, re.M), report.stdout
    assert len(report.launches) == 1 and report.launches[0].status == "ok"  # AI Core launches only
    bad = [(x.line, x.code) for x in report.diagnostics]
    assert bad == [(line_of(d / "main.asc", "expect: not from ACL"), "acl-error")], report.diagnostics


def test_an_ai_cpu_assert_stops_the_kernel_at_its_line(program):
    d, settings = program
    report = run_program(d / "main.asc", ["fail"], settings, cwd=d, extra_sources=[d / "plan.aicpu"])
    assert "[ASSERT] `p->fail == 0'" in report.stdout and "planned" not in report.stdout, report.stdout
    failed = [x for x in report.diagnostics if x.code == "assert-failed"]
    assert len(failed) == 1 and Path(failed[0].file).name == "plan.aicpu", report.diagnostics
    assert failed[0].line == line_of(d / "plan.aicpu", "assert(p->fail")
    assert "ACL_ERROR_RT_AICPU_EXCEPTION" in failed[0].message
    assert report.exit_code != 0
