"""The planted faulty-performance tasks of tests/test_advisor.py: one kernel (a half-precision
element-wise op over fixed-length tiles through VECIN/VECOUT queues) with one performance cause
planted in each variant, and tasks with a kernel of their own: z = x * y + x with a redundant copy,
and a row sum of floats with its sums done the slow way. `TASKS` holds them all, by name;
`materialise` writes each to <dest>/<name>/ (kernel, host.py, reference.py); `hand_fix` is the fix
of those the offline optimizer's transform cannot make (HAND_FIXES: it has none for a redundant
copy, and its TILE_LENGTH change to aligned tiles would leave the data a size the tiles do not
divide).

Every task runs on all of the default chip's vector cores (CORES) but perf_two_cores, and its data
is CORES blocks' worth whatever its block_dim: sizes are derived from CORES and the tile
constants, so a task's reference always fills its kernel's tiles exactly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.chips import DEFAULT_CHIP, chip_profile

CORES = chip_profile(DEFAULT_CHIP).vector_cores  # 48 on 910B2: the block_dim that uses the whole chip

KERNEL = """\
// {title}
// {what}; the planted cause is {cause}.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = {buffers};
constexpr int32_t TILE_LENGTH = {tile};

struct PerfTiling {{
    uint32_t totalLength;
}};

class KernelPerfAdd {{
public:
    __aicore__ inline KernelPerfAdd() {{}}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength)
    {{
        blockLength = totalLength / AscendC::GetBlockNum();
        loopCount = blockLength / TILE_LENGTH;
        xGm.SetGlobalBuffer((__gm__ half *)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + blockLength * AscendC::GetBlockIdx(), blockLength);
        zGm.SetGlobalBuffer((__gm__ half *)z + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    }}
    __aicore__ inline void Process()
    {{
        for (uint32_t i = 0; i < loopCount; i++) {{
            CopyIn(i);
            Compute();
            CopyOut(i);
        }}
    }}

private:
    __aicore__ inline void CopyIn(uint32_t progress)
    {{
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);
        AscendC::DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }}
    __aicore__ inline void Compute()
    {{
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
{compute}
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }}
    __aicore__ inline void CopyOut(uint32_t progress)
    {{
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopy(zGm[progress * TILE_LENGTH], zLocal, TILE_LENGTH);
        outQueueZ.FreeTensor(zLocal);
    }}

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm, yGm, zGm;
    uint32_t blockLength;
    uint32_t loopCount;
}};

extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR y, GM_ADDR z, PerfTiling tiling)
{{
    KernelPerfAdd op;
    op.Init(x, y, z, tiling.totalLength);
    op.Process();
}}
"""

HOST = """\
import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x, y):
    z = torch.empty_like(x)
    return Launch(
        kernel="{name}",
        block_dim={cores},
        args=[x, y, z, Tiling(totalLength=x.numel())],
        outputs=[z],
    )
"""

REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return {expr}


def get_inputs():
    return [torch.randn({n}, dtype=torch.float16), torch.randn({n}, dtype=torch.float16)]


def get_init_inputs():
    return []
"""

VECTOR_ADD = "        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);"
SCALAR_ADD = """\
        for (int32_t j = 0; j < TILE_LENGTH; j++) {
            zLocal.SetValue(j, static_cast<half>(static_cast<float>(xLocal.GetValue(j)) +
                                                 static_cast<float>(yLocal.GetValue(j))));
        }"""
SIGMOID_MUL = """\
        AscendC::Sigmoid(zLocal, xLocal, TILE_LENGTH);
        AscendC::Mul(zLocal, zLocal, yLocal, TILE_LENGTH);"""
# the Mul reads what the Sigmoid wrote: the vector pipe alone must finish it first
SIGMOID_BARRIER_MUL = """\
        AscendC::Sigmoid(zLocal, xLocal, TILE_LENGTH);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::Mul(zLocal, zLocal, yLocal, TILE_LENGTH);"""
SIGMOID_MUL_WHAT = "z = sigmoid(x) * y in half precision over fixed-length tiles of 25,600 bytes"


@dataclass(frozen=True)
class Variant:
    title: str
    cause: str
    buffers: int
    tile: int
    cores: int
    tiles_per_block: int
    compute: str = VECTOR_ADD

    @property
    def n(self) -> int:
        return CORES * self.tiles_per_block * self.tile  # the data: CORES blocks' worth whatever block_dim is

    def files(self, name: str) -> dict[str, str]:
        sigmoid = self.compute in (SIGMOID_MUL, SIGMOID_BARRIER_MUL)
        what = (SIGMOID_MUL_WHAT if sigmoid
                else "z = x + y in half precision over fixed-length tiles")
        return {
            f"{name}.cpp": kernel(name, self.title, what, self.cause, self.buffers, self.tile, self.compute),
            "host.py": HOST.format(name=name, cores=self.cores),
            "reference.py": REFERENCE.format(n=self.n, expr="torch.sigmoid(x.float()).half() * y" if sigmoid
                                             else "x + y"),
        }


def kernel(name: str, title: str, what: str, cause: str, buffers: int, tile: int, compute: str) -> str:
    return KERNEL.format(name=name, title=title, what=what, cause=cause, buffers=buffers, tile=tile, compute=compute)


VARIANTS = {
    # the compute is heavier here (Sigmoid, Mul) so that overlapping it matters, and the tiles long
    # enough (25,600 bytes) that they are not a cause too
    "perf_single_buffer": Variant("Planted performance fault: one buffer per queue (BUFFER_NUM = 1).",
                                  "BUFFER_NUM", 1, 12800, CORES, 4, SIGMOID_MUL),
    "perf_two_cores": Variant("Planted performance fault: two blocks on a chip of many vector cores.",
                              "host.py's block_dim", 2, 2048, 2, 4),
    "perf_small_tiles": Variant("Planted performance fault: 256-element tiles (512-byte copies).",
                                "TILE_LENGTH", 2, 256, CORES, 64),
    # 25,632-byte tiles: every copy after a block's first starts 32 bytes past a 512-byte boundary
    "perf_misaligned_gm": Variant("Planted performance fault: tiles of 12,816 halves (25,632 bytes, off 512).",
                                  "TILE_LENGTH", 2, 12816, CORES, 4),
    # a barrier on every pipe between two vector instructions stalls the double-buffered copies
    "perf_strong_barrier": Variant("Planted performance fault: PipeBarrier<PIPE_ALL> between two vector "
                                   "instructions.", "the barrier in Compute", 2, 12800, CORES, 4, SIGMOID_BARRIER_MUL),
    "perf_scalar_loop": Variant("Planted performance fault: the addition as a scalar loop of GetValue/SetValue.",
                                "the element loop in Compute", 2, 512, CORES, 4, SCALAR_ADD),
}



# ---- a redundant copy (perf-redundant-copy): z = x * y + x, its x tile copied in twice ----

# KERNEL with a fourth queue (InitBuffer'd last, so the fix leaves the others' UB addresses as they
# were) taking a second copy of the x tile for the Add: these lines go after KERNEL's own.
AGAIN_AFTER = {
    "        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));\n":
        "        pipe.InitBuffer(inQueueXAgain, BUFFER_NUM, TILE_LENGTH * sizeof(half));\n",
    "        AscendC::DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH);\n":
        "        AscendC::LocalTensor<half> xAgain = inQueueXAgain.AllocTensor<half>();\n"
        "        AscendC::DataCopy(xAgain, xGm[progress * TILE_LENGTH], TILE_LENGTH);\n"
        "        inQueueXAgain.EnQue(xAgain);\n",
    "inQueueX, inQueueY": ", inQueueXAgain",
}
MUL_ADD_AGAIN = """\
        AscendC::Mul(zLocal, xLocal, yLocal, TILE_LENGTH);
        AscendC::LocalTensor<half> xAgain = inQueueXAgain.DeQue<half>();
        AscendC::Add(zLocal, zLocal, xAgain, TILE_LENGTH);
        inQueueXAgain.FreeTensor(xAgain);"""
MUL_ADD = """\
        AscendC::Mul(zLocal, xLocal, yLocal, TILE_LENGTH);
        AscendC::Add(zLocal, zLocal, xLocal, TILE_LENGTH);"""
REDUNDANT_TILE = 8192  # 16,384 bytes: four double-buffered queues fit in UB, twice that would not
REDUNDANT_TILES = 4    # per block, over CORES blocks


def redundant_copy_files(name: str, fixed: bool = False) -> dict[str, str]:
    """The task with the x tile copied in twice per iteration, or (`fixed`) the Add reading the
    first copy."""
    what = "z = x * y + x in half precision over fixed-length tiles"
    if fixed:
        text = kernel(name, "The fix of perf_redundant_copy: the Add reads the x tile already in UB.", what, "gone", 2,
                      REDUNDANT_TILE, MUL_ADD)
    else:
        text = kernel(name, "Planted performance fault: the x tile copied in a second time for the Add.", what,
                      "the second DataCopy of the x tile in CopyIn", 2, REDUNDANT_TILE, MUL_ADD_AGAIN)
        for line, extra in AGAIN_AFTER.items():
            text = text.replace(line, line + extra, 1)
    return {f"{name}.cpp": text, "host.py": HOST.format(name=name, cores=CORES),
            "reference.py": REFERENCE.format(n=CORES * REDUNDANT_TILES * REDUNDANT_TILE, expr="x * y + x")}


def aligned_tiles_files(name: str) -> dict[str, str]:
    """The fix of perf_misaligned_gm: tiles of 12,800 halves (25,600 bytes, a multiple of 512; the
    data shrinks with them, 0.1%)."""
    v = VARIANTS[name]
    return Variant("The fix of perf_misaligned_gm: 512-byte aligned tiles.", "gone", v.buffers, 12800, v.cores,
                   v.tiles_per_block).files(name)


def redundant_copy_fix(name: str) -> dict[str, str]:
    return redundant_copy_files(name, fixed=True)


# The fixes written by hand, by task: for those the offline optimizer's transform cannot make.
HAND_FIXES: dict[str, Callable[[str], dict[str, str]]] = {"perf_misaligned_gm": aligned_tiles_files,
                                                          "perf_redundant_copy": redundant_copy_fix}


def hand_fix(name: str) -> dict[str, str]:
    """The files of a HAND_FIXES task's fix."""
    if name not in HAND_FIXES:
        raise KeyError(f"{name} has no hand-written fix: agent/transforms.py's for_finding makes its change")
    return HAND_FIXES[name](name)



# ---- the planted slow reduction (perf-slow-reduction): row sums of 256 floats, as in asc-devkit's
# reduction best practice, each row summed by two WholeReduceSum passes ----

ROW_SUM_KERNEL = """\
// Planted performance fault: each row of 256 floats summed by two WholeReduceSum passes.
// y[r] = sum(x[r, :]) in float over tiles of ROWS_PER_TILE rows; the planted cause is the first
// WholeReduceSum (BlockReduceSum then one WholeReduceSum is faster for 256 floats).
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr int32_t ROW_LENGTH = {row_length};
constexpr int32_t ROWS_PER_TILE = {rows_per_tile};

struct PerfTiling {{
    uint32_t rows;
}};

class KernelRowSum {{
public:
    __aicore__ inline KernelRowSum() {{}}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows)
    {{
        blockRows = rows / AscendC::GetBlockNum();
        loopCount = blockRows / ROWS_PER_TILE;
        xGm.SetGlobalBuffer((__gm__ float *)x + blockRows * ROW_LENGTH * AscendC::GetBlockIdx(),
                            blockRows * ROW_LENGTH);
        yGm.SetGlobalBuffer((__gm__ float *)y + blockRows * AscendC::GetBlockIdx(), blockRows);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, ROWS_PER_TILE * ROW_LENGTH * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, ROWS_PER_TILE * sizeof(float));
        pipe.InitBuffer(calcBuf, ROW_LENGTH * sizeof(float));
    }}
    __aicore__ inline void Process()
    {{
        for (uint32_t i = 0; i < loopCount; i++) {{
            CopyIn(i);
            Compute();
            CopyOut(i);
        }}
    }}

private:
    __aicore__ inline void CopyIn(uint32_t progress)
    {{
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[progress * ROWS_PER_TILE * ROW_LENGTH], ROWS_PER_TILE * ROW_LENGTH);
        inQueueX.EnQue(xLocal);
    }}
    __aicore__ inline void Compute()
    {{
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LocalTensor<float> tmp = calcBuf.Get<float>();
        for (int32_t r = 0; r < ROWS_PER_TILE; r++) {{
{reduce}
        }}
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }}
    __aicore__ inline void CopyOut(uint32_t progress)
    {{
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopy(yGm[progress * ROWS_PER_TILE], yLocal, ROWS_PER_TILE);
        outQueueY.FreeTensor(yLocal);
    }}

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::TBuf<AscendC::TPosition::VECCALC> calcBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t blockRows;
    uint32_t loopCount;
}};

extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR y, PerfTiling tiling)
{{
    KernelRowSum op;
    op.Init(x, y, tiling.rows);
    op.Process();
}}
"""
# 64 floats per repeat: four repeat sums, then their sum (mask 4, one repeat)
TWO_WHOLE_REDUCES = """\
            AscendC::WholeReduceSum<float>(tmp, xLocal[r * ROW_LENGTH], 64, ROW_LENGTH / 64, 1, 1, 8);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::WholeReduceSum<float>(yLocal[r], tmp, ROW_LENGTH / 64, 1, 1, 1, 8);
            AscendC::PipeBarrier<PIPE_V>();"""

ROW_SUM_HOST = """\
import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x):
    y = torch.empty(x.shape[0], dtype=x.dtype)
    return Launch(
        kernel="{name}",
        block_dim={cores},
        args=[x, y, Tiling(rows=x.shape[0])],
        outputs=[y],
    )
"""

ROW_SUM_REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x.sum(dim=-1)


def get_inputs():
    # positive, so no row sums to near zero, where float rounding in another order is a large relative error
    return [torch.rand({rows}, {row_length}, dtype=torch.float32)]


def get_init_inputs():
    return []
"""
ROW_LENGTH = 256      # floats per row: four repeats of 64, which the first pass sums
ROWS_PER_TILE = 32
ROW_SUM_ROWS = CORES * 4 * ROWS_PER_TILE  # CORES blocks of four tiles


def slow_reduction_files(name: str) -> dict[str, str]:
    """The planted slow reduction's task files."""
    return {f"{name}.cpp": ROW_SUM_KERNEL.format(name=name, reduce=TWO_WHOLE_REDUCES, row_length=ROW_LENGTH,
                                                 rows_per_tile=ROWS_PER_TILE),
            "host.py": ROW_SUM_HOST.format(name=name, cores=CORES),
            "reference.py": ROW_SUM_REFERENCE.format(rows=ROW_SUM_ROWS, row_length=ROW_LENGTH)}


# Every planted task, by name: its files (a variant of KERNEL's, or a kernel of its own).
TASKS: dict[str, Callable[[str], dict[str, str]]] = {**{name: v.files for name, v in VARIANTS.items()},
                                                     "perf_redundant_copy": redundant_copy_files,
                                                     "perf_slow_reduction": slow_reduction_files}


def materialise(dest: Path) -> dict[str, Path]:
    """Each variant's task folder under `dest`, by name."""
    out = {}
    for name, files in TASKS.items():
        d = dest / name
        d.mkdir(parents=True, exist_ok=True)
        for file, text in files(name).items():
            (d / file).write_text(text)
        out[name] = d
    return out
