"""The macros the device compiler defines for a chip reach the kernel: `#if __NPU_ARCH__ == 2201`
code runs for 910B and `== 2002` code for 310P, as asc-devkit's own samples choose per chip.
Undefined, such branches vanished silently and the kernel computed something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage_npu.npu_eval.chips import CHIPS
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

KERNEL = """\
#include "kernel_operator.h"

#if !defined(__NPU_ARCH__)
constexpr float ARCH_BIAS = 100.0f;
#elif __NPU_ARCH__ == 2201
constexpr float ARCH_BIAS = 1.0f;
#elif __NPU_ARCH__ == 2002
constexpr float ARCH_BIAS = 2.0f;
#else
constexpr float ARCH_BIAS = 50.0f;
#endif

extern "C" __global__ __aicore__ void arch_bias(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, n);
    yGm.SetGlobalBuffer((__gm__ float *)y, n);
    AscendC::DataCopy(t, xGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Adds(t, t, ARCH_BIAS, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, n);
}
"""

HOST = """\
import torch

from sage_npu.npu_eval import Launch


def launch(x):
    y = torch.empty_like(x)
    return Launch(kernel="arch_bias", block_dim=1, args=[x, y, x.numel()], outputs=[y])
"""

REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x + {bias}


def get_inputs():
    return [torch.randn(256)]


def get_init_inputs():
    return []
"""


def task(root: Path, bias: float) -> Path:
    root.mkdir()
    (root / "arch_bias.cpp").write_text(KERNEL)
    (root / "host.py").write_text(HOST)
    (root / "reference.py").write_text(REFERENCE.format(bias=bias))
    return root


def test_chip_profiles_name_the_documented_architectures():
    assert {c.name: c.npu_arch for c in CHIPS.values()} == {
        "910B1": 2201, "910B2": 2201, "910B3": 2201, "910B4": 2201, "910_9391": 2201, "310P3": 2002}
    assert all("__NPU_ARCH__" in c.sources["npu_arch"] for c in CHIPS.values())


@pytest.mark.parametrize(("chip", "bias"), [("910B2", 1.0), ("310P3", 2.0)])
def test_the_kernel_takes_its_chips_branch(tmp_path, chip, bias):
    ev = Evaluator(EvalSettings(trials=1, chip=chip, cache_dir=tmp_path / "bc"))
    try:
        r = ev.evaluate(task(tmp_path / "arch_bias", bias)).report
    finally:
        ev.close()
    assert r.status == "correct", r.diagnostics
