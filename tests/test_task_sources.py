"""Task mode accepts the sources CANN's samples teach (issue 7): a single-source `.asc` whose host
part (ACL main, `<<<>>>` wrapper) is left out of the build and never run, and a framework-style
entry whose element types come from `DTYPE_<NAME>` macros the op build would define."""

from __future__ import annotations

import textwrap
from pathlib import Path

from sage_npu.npu_eval.host_split import split_host

SAMPLE = """\
#include "acl/acl.h"
#include "kernel_operator.h"
#include "data_utils.h"

constexpr uint32_t TILE = 256;

__global__ __vector__ void neg_custom(__gm__ uint8_t* x, __gm__ uint8_t* y, uint32_t totalLength)
{
    uint32_t per = totalLength / AscendC::GetBlockNum();
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x + per * AscendC::GetBlockIdx(), per);
    yg.SetGlobalBuffer((__gm__ float*)y + per * AscendC::GetBlockIdx(), per);
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> qin;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> qout;
    pipe.InitBuffer(qin, 1, TILE * sizeof(float));
    pipe.InitBuffer(qout, 1, TILE * sizeof(float));
    for (uint32_t off = 0; off < per; off += TILE) {
        AscendC::LocalTensor<float> a = qin.AllocTensor<float>();
        AscendC::DataCopy(a, xg[off], TILE);
        qin.EnQue(a);
        a = qin.DeQue<float>();
        AscendC::LocalTensor<float> b = qout.AllocTensor<float>();
        AscendC::Muls(b, a, -1.0f, TILE);
        qout.EnQue(b);
        qin.FreeTensor(a);
        b = qout.DeQue<float>();
        AscendC::DataCopy(yg[off], b, TILE);
        qout.FreeTensor(b);
    }
}

void neg_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y, uint32_t n)
{
    neg_custom<<<blockDim, nullptr, stream>>>(x, y, n);
}

int32_t main(int32_t argc, char* argv[])
{
    aclInit(nullptr);
    size_t bytes = 8 * 2048 * sizeof(float);
    uint8_t *xHost, *xDevice;
    aclrtMallocHost((void**)(&xHost), bytes);
    ReadFile("./input/input_x.bin", bytes, xHost, bytes);   // from the sample's own data_utils.h
    aclrtMalloc((void**)&xDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    neg_do(8, nullptr, xDevice, xDevice, 8 * 2048);
    return system("echo the host part must never run");
}
"""

DATA_UTILS = """\
#pragma once
#include <cstdio>
inline bool ReadFile(const char* path, size_t, void* buf, size_t bytes)
{
    FILE* f = std::fopen(path, "rb");
    if (!f) return false;
    bool ok = std::fread(buf, 1, bytes, f) == bytes;
    std::fclose(f);
    return ok;
}
"""

REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return -x


def get_input_groups():
    return [[torch.randn(8 * 2048)], [torch.randn(2 * 256)]]
"""

HOST = """\
import torch

from sage_npu.npu_eval import Launch


def launch(x):
    y = torch.empty_like(x)
    blocks = min(8, x.numel() // 256)
    return Launch(kernel="neg_custom", block_dim=blocks, args=[x, y, x.numel()], outputs=[y])
"""


def make(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_the_host_part_is_blanked_keeping_every_line():
    src = SAMPLE.encode()
    stripped, removed = split_host(src)
    assert [(p.name, p.line) for p in removed] == [("neg_do", 33), ("main", 38)]
    assert len(stripped) == len(src) and stripped.count(b"\n") == src.count(b"\n")
    assert b"main" not in stripped and b"<<<" not in stripped
    assert stripped.splitlines()[6] == src.splitlines()[6]   # the entry is untouched


def test_a_single_source_asc_runs_its_kernel_in_task_mode(evaluator, tmp_path):
    d = make(tmp_path / "neg", {"neg_custom.asc": SAMPLE, "data_utils.h": DATA_UTILS, "reference.py": REFERENCE,
                                "host.py": HOST})
    r = evaluator.evaluate(d).report
    assert r.status == "correct", r.diagnostics
    assert "must never run" not in r.stdout


def test_an_error_in_the_kernel_part_names_the_original_file_and_line(evaluator, tmp_path):
    d = make(tmp_path / "neg", {"neg_custom.asc": SAMPLE.replace("Muls(b, a", "Mulz(b, a"),
                                "data_utils.h": DATA_UTILS, "reference.py": REFERENCE, "host.py": HOST})
    r = evaluator.evaluate(d).report
    assert r.status == "compile_error"
    err = next(x for x in r.diagnostics if x.code == "compile-error")
    assert (err.file, err.line) == (str(d / "neg_custom.asc"), 24) and "Mulz" in err.message


FRAMEWORK = """\
#include "kernel_operator.h"

struct LeakyTiling {
    uint32_t totalLength;
    float negativeSlope;
};

extern "C" __global__ __aicore__ void leaky(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(LeakyTiling);
    GET_TILING_DATA(t, tiling);
    uint32_t per = t.totalLength / AscendC::GetBlockNum();
    AscendC::GlobalTensor<DTYPE_X> xg;
    AscendC::GlobalTensor<DTYPE_Y> yg;
    xg.SetGlobalBuffer((__gm__ DTYPE_X*)x + per * AscendC::GetBlockIdx(), per);
    yg.SetGlobalBuffer((__gm__ DTYPE_Y*)y + per * AscendC::GetBlockIdx(), per);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, per * sizeof(DTYPE_X));
    AscendC::LocalTensor<DTYPE_X> v = buf.Get<DTYPE_X>();
    AscendC::DataCopy(v, xg, per);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::LeakyRelu(v, v, (DTYPE_X)t.negativeSlope, per);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopy(yg, v, per);
}
"""


def test_framework_entry_gets_dtype_macros_from_its_tensors(evaluator, tmp_path):
    ref = """\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.leaky_relu(x, 0.1)

        def get_inputs():
            return [torch.randn(4 * 512).half()]
        """
    host = """\
        import torch
        from sage_npu.npu_eval import Launch, Tiling

        def launch(x):
            y = torch.empty_like(x)
            workspace = torch.empty(32, dtype=torch.uint8)
            return Launch(kernel="leaky", block_dim=4, args=[x, y, workspace,
                          Tiling(totalLength=x.numel(), negativeSlope=0.1)], outputs=[y])
        """
    d = make(tmp_path / "leaky", {"leaky.cpp": FRAMEWORK, "reference.py": ref, "host.py": host})
    r = evaluator.evaluate(d).report
    assert r.status == "correct", r.diagnostics


def test_what_the_emulator_lacks_is_one_actionable_line(evaluator, tmp_path):
    muls = "        AscendC::Muls(b, a, -1.0f, TILE);\n"
    kernel = SAMPLE.replace(muls, muls + "        AscendC::MmadBitMode(b, a, a, AscendC::MmadParams());\n"
                                         "        AscendC::Nonexistent(b);\n")
    d = make(tmp_path / "neg", {"neg_custom.asc": kernel, "data_utils.h": DATA_UTILS, "reference.py": REFERENCE,
                                "host.py": HOST})
    r = evaluator.evaluate(d).report
    # A kernel using the cube unit is one refusal at its first cube call: the other errors follow from it.
    found = [(x.line, x.code, x.message) for x in r.diagnostics if x.severity == "error"]
    assert len(found) == 1 and found[0][:2] == (25, "not-emulated"), found
    assert "cube-unit API" in found[0][2] and "MmadBitMode" in found[0][2] and len(found[0][2]) <= 200, found
