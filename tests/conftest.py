"""Shared fixtures: one Evaluator (a resident plan worker with torch imported) per module,
paths to the bundled examples, and the fault tasks generated from tests/faults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"

os.environ.setdefault("LANCEDB_LOG", "error")


@pytest.fixture(scope="session")
def fault_tasks(tmp_path_factory) -> dict[str, Path]:
    """Case name -> its fault task folder (<tmp>/faults/<case>/), generated once per session from
    tests/faults/bases and tests/faults/patches (see tests/fault_tasks.py)."""
    from tests.fault_tasks import materialise

    return materialise(tmp_path_factory.mktemp("fault-tasks"))


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    ev = Evaluator(EvalSettings(trials=3, cache_dir=tmp_path_factory.getbasetemp() / "build-cache"))
    yield ev
    ev.close()


VADD_KERNEL = """\
#include "kernel_operator.h"
// A memory-bound elementwise add whose buffer count, tile and compute style come from defines.
struct VaddTiling {
    uint32_t blockLength;
    uint32_t tileLength;
};

class Vadd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, VaddTiling t)
    {
        n = t.blockLength;
        tile = t.tileLength;
        uint64_t off = uint64_t(n) * AscendC::GetBlockIdx();
        xg.SetGlobalBuffer((__gm__ float*)x + off, n);
        yg.SetGlobalBuffer((__gm__ float*)y + off, n);
        zg.SetGlobalBuffer((__gm__ float*)z + off, n);
        pipe.InitBuffer(qx, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(qy, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(qz, BUFFER_NUM, tile * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < n / tile; ++i) {
            AscendC::LocalTensor<float> a = qx.AllocTensor<float>();
            AscendC::LocalTensor<float> b = qy.AllocTensor<float>();
            AscendC::DataCopy(a, xg[i * tile], tile);
            AscendC::DataCopy(b, yg[i * tile], tile);
            qx.EnQue(a);
            qy.EnQue(b);
            a = qx.DeQue<float>();
            b = qy.DeQue<float>();
            AscendC::LocalTensor<float> c = qz.AllocTensor<float>();
#if SCALAR
            for (uint32_t k = 0; k < tile; ++k) c.SetValue(k, a.GetValue(k) + b.GetValue(k));
#else
            AscendC::Add(c, a, b, tile);
#endif
            qz.EnQue(c);
            qx.FreeTensor(a);
            qy.FreeTensor(b);
            c = qz.DeQue<float>();
            AscendC::DataCopy(zg[i * tile], c, tile);
            qz.FreeTensor(c);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> qx, qy;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> qz;
    AscendC::GlobalTensor<float> xg, yg, zg;
    uint32_t n, tile;
};

extern "C" __global__ __aicore__ void vadd(GM_ADDR x, GM_ADDR y, GM_ADDR z, VaddTiling t)
{
    Vadd op;
    op.Init(x, y, z, t);
    op.Process();
}
"""

VADD_REFERENCE = """\
import torch

class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y

def get_inputs():
    return [torch.randn({n}), torch.randn({n})]
"""

VADD_HOST = """\
import torch
from sage_npu.npu_eval import Launch, Tiling

def launch(x, y):
    z = torch.empty_like(x)
    per = x.numel() // {blocks}
    return Launch(kernel="vadd", block_dim={blocks}, args=[x, y, z, Tiling(blockLength=per, tileLength={tile})],
                  outputs=[z], defines={{"BUFFER_NUM": {buffers}, "SCALAR": {scalar}}})
"""



@pytest.fixture
def vadd_task():
    """Make a task folder for a memory-bound fp32 add whose block count, tiles per block, tile
    size, buffer count and compute style (vector or scalar loop) vary."""

    def make(root: Path, *, blocks=8, tiles=16, tile=1024, buffers=2, scalar=0) -> Path:
        d = root / f"vadd_{blocks}_{tiles}_{tile}_{buffers}_{scalar}"
        if not d.exists():
            d.mkdir(parents=True)
            (d / "vadd.cpp").write_text(VADD_KERNEL)
            (d / "reference.py").write_text(VADD_REFERENCE.format(n=blocks * tiles * tile))
            (d / "host.py").write_text(VADD_HOST.format(blocks=blocks, tile=tile, buffers=buffers, scalar=scalar))
        return d

    return make
