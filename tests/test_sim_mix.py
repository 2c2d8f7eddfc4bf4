"""Mixed AIC/AIV kernels (sage_sim/mix.h, docs/cube.md "Mixed kernels"): the bundled
examples/tasks/matmul_relu_mix (a cube matmul handed to the vector cores through a GM workspace
and cross-core flags) and attention_fwd_mix are checked by tests/test_examples.py; here the
first one's timelines in the estimate, the same report on every one of 20 runs for each mixed example (with
matmul_bias_relu, whose Matmul calls the AIC serves), a MIX Matmul served on the AIC timeline, a flag
no core sets (flag-deadlock at the wait), a flag set before the store it should publish (gm-race at
the other core's read), and one kernel that records what each core of a 1:2
launch sees (GetBlockIdx, GetSubBlockIdx, GetTaskRatio, g_coreType) and hands values over in
modes 0 and 1 and through SyncAll<false>. The flag misuses are
tests/test_sim_mix_faults.py's (one driver); here only the one that needs a declared AIV_ONLY type."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.cost_model import estimate
from sage_npu.npu_eval.costs import default_costs
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "matmul_relu_mix"
KERNEL = "matmul_relu_mix.cpp"


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    e = Evaluator(EvalSettings(trials=1, cache_dir=tmp_path_factory.getbasetemp() / "mix-cache"))
    yield e
    e.close()


def line_of(path: Path, text: str, nth: int = 0) -> int:
    lines = [i + 1 for i, ln in enumerate(path.read_text().splitlines()) if text in ln]
    return lines[nth]


def test_mixed_example_runs_aic_and_aiv_timelines_joined_by_the_flags(ev):
    evaluation = ev.evaluate(EXAMPLE)
    assert evaluation.report.status == "correct", evaluation.report.diagnostics
    trace = evaluation.trace.trace
    kinds = sorted(trace.cores.values())
    # the first trial: 64 rows, bands of 32 -> 2 AI Cores: AIC 0-1 and AIV 0-3
    assert kinds == [("AIC", 0), ("AIC", 1), ("AIV", 0), ("AIV", 1), ("AIV", 2), ("AIV", 3)], kinds
    chip = chip_profile("910B2")
    est = estimate(trace, chip, default_costs(chip.family), evaluation.trace.block_dim)
    by_block = {s.block: s for s in est.schedules}
    aic = [b for b, (k, _) in trace.cores.items() if k == "AIC"]
    aiv = [b for b, (k, _) in trace.cores.items() if k == "AIV"]
    # an AIV starts its ReLU only after its AIC's Fixpipe: it ends later than the AIC's first set
    for b in aiv:
        group = trace.cores[b][1] // 2
        aic_block = next(a for a in aic if trace.cores[a][1] == group)
        first_set = min(by_block[aic_block].xsets.values())
        assert by_block[b].cycles > first_set > 0
    # AICs sit on the cube cores, AIVs on the vector cores
    assert {est.block_core[b] for b in aic} == {chip.vector_cores, chip.vector_cores + 1}
    assert {est.block_core[b] for b in aiv} == {0, 1, 2, 3}


def test_the_aivs_read_the_workspace_the_aic_wrote_from_l2(ev):
    """The AIC's Fixpipe records its GM rows (a span), and the L2 replay holds each AIV at its
    cross-core wait until the AIC's set: so the AIVs' reads of the workspace find the bands the AIC
    just wrote in L2, and only A and B come from HBM (first trial: m 64, k 32, n 64 on 2 AI Cores)."""
    timing = ev.evaluate(EXAMPLE).report.timing
    assert timing is not None
    a, b, ws = 64 * 32 * 2, 2 * 32 * 64 * 2, 64 * 64 * 4  # each AIC copies all of B
    assert timing.gm_read_bytes == a + b + ws
    assert timing.l2_hit_bytes == ws


# The bundled mixed examples: a matmul handed to ReLU on the AIVs, attention (QK^T on the cube,
# softmax on the AIVs, PV on the cube) pipelined over two workspace slots with flags both ways, and a
# Matmul API kernel whose AIV calls its AIC serves (bias, then ReLU on the AIV), and the grouped int8 matmul
# whose AIC runs the Matmul API itself and hands each base block to both AIVs through four workspace slots.
ATTENTION = EXAMPLE.parent / "attention_fwd_mix"
MIXED_EXAMPLES = [EXAMPLE, ATTENTION, EXAMPLE.parent / "matmul_bias_relu", EXAMPLE.parent / "quant_grouped_matmul"]


@pytest.mark.parametrize("task", MIXED_EXAMPLES, ids=lambda p: p.name)
def test_mixed_example_gives_the_same_report_every_run(ev, task):
    first = ev.evaluate(task).report
    assert first.status == "correct", first.diagnostics
    for _ in range(19):  # the build is cached: 19 more runs of the same binary
        assert ev.evaluate(task).report.model_dump_json() == first.model_dump_json()


def test_a_launch_define_picks_the_kernel_type(ev, tmp_path):
    """quant_grouped_matmul declares MIX_AIC_1_1 under `#if RATIO == 1`, else MIX_AIC_1_2: host.py's
    Launch(defines=...) picks the branch for the launch's cores as for the build (read with the file's own
    `#ifndef RATIO` default, the launch would run two AIVs a core where the build declares one)."""
    task = tmp_path / "one_aiv"
    shutil.copytree(MIXED_EXAMPLES[-1], task)
    host = task / "host.py"
    assert host.read_text().count("RATIO = 2 ") == 1
    host.write_text(host.read_text().replace("RATIO = 2 ", "RATIO = 1 "))
    report = ev.evaluate(task).report
    assert report.status == "correct", [d.message for d in report.diagnostics][:2]


def test_a_flag_never_set_is_a_deadlock_at_the_wait(ev, tmp_path):
    task = tmp_path / "never_set"
    shutil.copytree(EXAMPLE, task)
    src = task / KERNEL
    text = src.read_text()
    assert text.count("CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);") == 1
    src.write_text(text.replace("CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);", "// the set is missing"))
    report = ev.evaluate(task).report
    assert report.status == "runtime_error"
    found = {(d.code, d.line) for d in report.diagnostics if d.severity == "error"}
    wait_line = line_of(src, "CrossCoreWaitFlag(FLAG_READY);")
    assert ("flag-deadlock", wait_line) in found, report.diagnostics
    msg = next(d.message for d in report.diagnostics if d.line == wait_line)
    assert "AIV 0 (AI Core 0, sub-block 0) waits at CrossCoreWaitFlag(0)" in msg, msg


def test_a_flag_set_before_the_store_it_publishes_leaves_the_read_a_gm_race(ev, tmp_path):
    # The AIVs set P_READY before they store P: the AIC's wait passes, but nothing orders the
    # AIVs' stores before the AIC's read of P (the run itself is sequential: the values are right).
    task = tmp_path / "set_too_early"
    shutil.copytree(ATTENTION, task)
    src = task / "attention_fwd_mix.cpp"
    text = src.read_text()
    rows = "            Rows(BandOf(tiling, band).rows, done % SLOTS);\n"
    setp = "            CrossCoreSetFlag<2, PIPE_MTE3>(P_READY);\n"
    assert text.count(rows + setp) == 1
    src.write_text(text.replace(rows + setp, setp + rows))
    report = ev.evaluate(task).report
    assert report.status == "runtime_error", report.diagnostics
    races = [d for d in report.diagnostics if d.code == "gm-race"]
    assert [(d.line, d.severity) for d in races] == [(line_of(src, "DataCopy(dst, src, Nd2NzParams"), "error")]
    store = line_of(src, "DataCopy(pGm[at], p, mine * n);")
    msg = races[0].message
    assert msg.startswith("AIC 0 reads pWs[") and "with DataCopy, but AIV 0 (AI Core 0, sub-block 0) stored" in msg
    assert f"(at line {store})" in msg and "CrossCoreWaitFlag" in msg, msg
    assert report.correctness.passed == report.correctness.trials  # the symptom the device may show, not here


IDS_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

// Each core writes what it sees into its row of `ids`: AIC g at row g, AIV i at row N + i. The two
// AIVs of an AI Core then swap values in `x` through mode 1, and all AIVs meet in mode 0.
extern "C" __global__ __aicore__ void core_ids(GM_ADDR ids, GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GlobalTensor<int32_t> idsGm, xGm, yGm;
    idsGm.SetGlobalBuffer((__gm__ int32_t *)ids);
    xGm.SetGlobalBuffer((__gm__ int32_t *)x);
    yGm.SetGlobalBuffer((__gm__ int32_t *)y);
    int64_t n = GetBlockNum();
    int64_t row = (g_coreType == AIC ? 0 : n) + GetBlockIdx();
    idsGm.SetValue(row * 8 + 0, g_coreType);
    idsGm.SetValue(row * 8 + 1, int32_t(GetBlockIdx()));
    idsGm.SetValue(row * 8 + 2, int32_t(GetBlockNum()));
    idsGm.SetValue(row * 8 + 3, int32_t(GetSubBlockIdx()));
    idsGm.SetValue(row * 8 + 4, int32_t(GetSubBlockNum()));
    idsGm.SetValue(row * 8 + 5, int32_t(GetTaskRatio()));
    idsGm.SetValue(row * 8 + 6, int32_t(sub_block_idx));
    idsGm.SetValue(row * 8 + 7, 7);
    if ASCEND_IS_AIV {
        int64_t me = GetBlockIdx();
        int64_t other = me ^ 1;
        CrossCoreSetFlag<1, PIPE_MTE3>(3);
        CrossCoreWaitFlag(3);
        yGm.SetValue(me, xGm.GetValue(other) * 10);
        CrossCoreSetFlag<0, PIPE_MTE3>(4);
        CrossCoreWaitFlag(4);
    }
    SyncAll<false>();  // every AIC and AIV: AIC 0 then sums what all the AIVs wrote
    if ASCEND_IS_AIC {
        if (GetBlockIdx() == 0) {
            int32_t sum = 0;
            for (int64_t i = 0; i < 2 * n; ++i) sum += yGm.GetValue(i);
            idsGm.SetValue(3 * n * 8, sum);
        }
    }
}
"""

IDS_HOST = """
import torch
from sage_npu.npu_eval import Launch

def launch(x):
    n = x.numel() // 2
    ids = torch.zeros(3 * n * 8 + 8, dtype=torch.int32)
    y = torch.zeros(2 * n, dtype=torch.int32)
    return Launch(kernel="core_ids", block_dim=n, args=[ids, x, y], outputs=[ids, y])
"""

IDS_REFERENCE = """
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        n = x.numel() // 2
        rows = [[1, g, n, 0, 1, 1, 0, 7] for g in range(n)]
        rows += [[2, i, n, i % 2, 2, 2, i % 2, 7] for i in range(2 * n)]
        y = x[torch.arange(2 * n) ^ 1] * 10
        tail = [int(y.sum())] + [0] * 7
        return torch.tensor(rows + [tail], dtype=torch.int32).flatten(), y

def get_input_groups():
    return [[torch.arange(2 * n, dtype=torch.int32) + 5] for n in (1, 3)]

def get_init_inputs():
    return []
"""


def write_task(folder: Path, kernel: str) -> Path:
    folder.mkdir()
    (folder / "core_ids.cpp").write_text(kernel)
    (folder / "host.py").write_text(IDS_HOST)
    (folder / "reference.py").write_text(IDS_REFERENCE)
    return folder


def test_each_core_of_a_1_to_2_launch_sees_its_ids_and_flags_in_modes_0_and_1(ev, tmp_path):
    report = ev.evaluate(write_task(tmp_path / "ids", IDS_KERNEL)).report
    assert report.status == "correct", report.diagnostics


def test_cross_core_flags_in_a_kernel_declared_aiv_only_are_reported(ev, tmp_path):
    needle = "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);"
    task = write_task(tmp_path / "aiv_only", IDS_KERNEL.replace("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);",
                                                                 needle, 1))
    report = ev.evaluate(task).report
    line = line_of(task / "core_ids.cpp", "CrossCoreSetFlag<1, PIPE_MTE3>(3);")
    hits = [d for d in report.diagnostics if d.code == "api-misuse" and d.line == line]
    assert hits and "does not start the cross-core" in hits[0].message, report.diagnostics


def _rec(kind: str, pipe: str, api: str, a: int = 0, b: int = 0, w: tuple[int, int] = (0, 0), nbytes: int = 0):
    from sage_npu.npu_eval.trace import Rec

    return Rec(kind, pipe, api, "float32" if kind == "I" else "", nbytes // 4, nbytes, 1, a, b, w, (0, 0), (0, 0))


def test_a_cross_core_wait_delays_the_waiter_and_orders_its_pipes():
    from sage_npu.npu_eval.trace import Trace

    chip = chip_profile("910B2")
    costs = default_costs(chip.family)
    # AIC: a long Mmad, then its set (sync 1); AIV: a Cast writing UB, the wait, a copy-in over the same UB
    aic = [_rec("I", "M", "Mmad", nbytes=1 << 20), _rec("xset", "FIX", "CrossCoreSetFlag", a=0, b=1)]
    aiv = [_rec("I", "V", "Cast", w=(0, 1024), nbytes=1024), _rec("xwait", "ALL", "CrossCoreWaitFlag", a=0, b=1),
           _rec("I", "MTE2", "DataCopy", w=(0, 1024), nbytes=1024)]
    mixed = Trace({0: aic, 1: aiv}, {1: ("k.cpp", 1)}, cores={0: ("AIC", 0), 1: ("AIV", 0)})
    est = estimate(mixed, chip, costs, 1)
    s_aic, s_aiv = (next(s for s in est.schedules if s.block == b) for b in (0, 1))
    assert s_aiv.cycles > s_aic.xsets[1] > 0   # the AIV's copy-in waited for the AIC's set
    assert not est.hazards                       # the wait ordered the Cast before the copy-in
    alone = Trace({1: [aiv[0], aiv[2]]}, {1: ("k.cpp", 1)})
    assert estimate(alone, chip, costs, 1).hazards  # without it the two writes race


@pytest.mark.parametrize("source, kernel_type", [
    (b"    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);", "KERNEL_TYPE_MIX_AIC_1_1"),
    (b"__global__ __mix__(1, 2) void k(GM_ADDR x)", "KERNEL_TYPE_MIX_AIC_1_2"),
    (b'extern "C" __global__ __cube__ void k(GM_ADDR x)', "KERNEL_TYPE_AIC_ONLY"),
    (b"__cube__ __global__ __aicore__ void k(GM_ADDR x)", "KERNEL_TYPE_AIC_ONLY"),
    (b"__vector__ __global__ void v()", None),
    # no declared type: a Matmul API kernel is MIX 1:2 as the toolchain's detection makes it,
    # cube-only with ASCENDC_CUBE_ONLY; a declared type wins
    (b'#include "lib/matmul_intf.h"\n__global__ __aicore__ void k()', "KERNEL_TYPE_MIX_AIC_1_2"),
    (b'#define ASCENDC_CUBE_ONLY\n#include "lib/matmul_intf.h"\n__global__ __aicore__ void k()',
     "KERNEL_TYPE_AIC_ONLY"),
    (b'#include "lib/matmul_intf.h"\n__global__ __mix__(1, 1) void k()', "KERNEL_TYPE_MIX_AIC_1_1"),
    (b'// #include "lib/matmul_intf.h"\n__global__ __aicore__ void k()', None),
    (b"// KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);\n__global__ __aicore__ void k()", None),
    (b"__global__ __cube__ void c()\n__global__ __vector__ void v()", None),  # two types: the default cores
    (b"__global__ __vector__ void v()", None),
    (b"__global__ __cube__ void c()\n__global__ __mix__(1, 2) void m()", "KERNEL_TYPE_MIX_AIC_1_2"),
])
def test_the_build_reads_the_kernel_type(source, kernel_type):
    from sage_npu.npu_eval.build import coop_define

    defines = coop_define(source)
    assert defines.get("SAGE_SIM_KERNEL_TYPE") == kernel_type
    assert ("SAGE_SIM_COOP" in defines) == (kernel_type is not None and "MIX_AIC_1_" in kernel_type)


def test_the_kernel_type_scan_reads_only_the_branches_the_defines_select():
    # matmul_ibshareB: scenario 2 is a __cube__ kernel with ASCENDC_CUBE_ONLY, scenario 1 the same
    # kernel undeclared (so MIX 1:2 for its Matmul); both are #if SCENARIO_NUM branches of one file
    from sage_npu.npu_eval.build import coop_define

    src = b"""#if SCENARIO_NUM == 2
#define ASCENDC_CUBE_ONLY
#endif
#include "lib/matmul_intf.h"
#if SCENARIO_NUM == 2
extern "C" __global__ __cube__ void k(GM_ADDR x)
#else
extern "C" __global__ __aicore__ void k(GM_ADDR x)
#endif
"""
    assert coop_define(src, defines={"SCENARIO_NUM": "1"})["SAGE_SIM_KERNEL_TYPE"] == "KERNEL_TYPE_MIX_AIC_1_2"
    assert coop_define(src, defines={"SCENARIO_NUM": "2"})["SAGE_SIM_KERNEL_TYPE"] == "KERNEL_TYPE_AIC_ONLY"
    # undecidable (SCENARIO_NUM unknown): every branch is read, the first type found wins
    assert coop_define(src)["SAGE_SIM_KERNEL_TYPE"] == "KERNEL_TYPE_AIC_ONLY"


@pytest.mark.parametrize("expr, macros, value", [
    ("SCENARIO_NUM == 2", {"SCENARIO_NUM": "2"}, True),
    ("defined(A) && (B + 1) * 2 >= 4 || !C", {"A": "", "B": "1", "C": "0"}, True),
    ("defined A && !defined(B)", {"A": "1"}, True),
    ("010 == 8 && 0x10 == 16", {}, True),
    ("X > 1 // a comment", {"X": "1"}, False),
    ("UNKNOWN == 1", {}, None),          # a header's macro: undecided
    ("__import__('os')", {}, None),      # not an #if expression: undecided, never run
    ("1 / 0", {}, None),
])
def test_if_expressions(expr, macros, value):
    from sage_npu.npu_eval.cpp_conditionals import evaluate

    assert evaluate(expr, macros) is value


def test_active_text_keeps_line_numbers_and_nesting():
    from sage_npu.npu_eval.cpp_conditionals import active_text

    src = (b"#if 0\n#if 1\nd\n#endif\n#else\ne\n#endif\n#ifdef M\nm\n#elif N == 1\nn\n#else\no\n#endif\n"
           b"#undef M\n#ifdef M\nx\n#endif")
    out = active_text(src, {"M": "", "N": "1"}).split(b"\n")
    assert len(out) == len(src.split(b"\n"))
    assert [ln for ln in out if ln and not ln.startswith(b"#")] == [b"e", b"m"]


CUBE_ONLY_KERNEL = r"""
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace AscendC;
using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using FloatGm = MatmulType<TPosition::GM, CubeFormat::ND, float>;

// The AIC computes C = A x B with a pure-cube Matmul object and goes on past REGIST_MATMUL_OBJ to
// set the flag; each AIV then applies ReLU to its half of C's rows (matmul_fused_manual's shape).
extern "C" __global__ __mix__(1, 2) void mm_relu(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR y)
{
    TPipe pipe;
    TCubeTiling t{};
    t.M = t.N = t.Ka = t.Kb = t.singleCoreM = t.singleCoreN = t.singleCoreK = 32;
    t.baseM = t.baseN = t.baseK = 32, t.stepKa = t.stepKb = t.depthA1 = t.depthB1 = 1;
    t.dbL0A = t.dbL0B = t.dbL0C = 1, t.stepM = t.stepN = 1, t.usedCoreNum = 1;
    GlobalTensor<float> cGm, yGm;
    cGm.SetGlobalBuffer((__gm__ float *)c, 32 * 32);
    yGm.SetGlobalBuffer((__gm__ float *)y, 32 * 32);
    if ASCEND_IS_AIC {
        GlobalTensor<half> aGm, bGm;
        aGm.SetGlobalBuffer((__gm__ half *)a, 32 * 32);
        bGm.SetGlobalBuffer((__gm__ half *)b, 32 * 32);
        Matmul<HalfGm, HalfGm, FloatGm> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        mm.SetTensorA(aGm);
        mm.SetTensorB(bGm);
        mm.IterateAll(cGm);
        mm.End();
        CrossCoreSetFlag<2, PIPE_FIX>(3);
    }
    if ASCEND_IS_AIV {
        CrossCoreWaitFlag(3);
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 16 * 32 * sizeof(float));
        LocalTensor<float> x = buf.Get<float>();
        const int at = GetSubBlockIdx() * 16 * 32;
        DataCopy(x, cGm[at], 16 * 32);
        PipeBarrier<PIPE_ALL>();
        Relu(x, x, 16 * 32);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm[at], x, 16 * 32);
    }
}
"""

CUBE_ONLY_HOST = """
import torch
from sage_npu.npu_eval import Launch

def launch(a, b):
    c = torch.zeros(32, 32, dtype=torch.float32)
    y = torch.zeros(32, 32, dtype=torch.float32)
    return Launch(kernel="mm_relu", block_dim=1, args=[a, b, c, y], outputs=[y])
"""

CUBE_ONLY_REFERENCE = """
import torch

class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.relu(a.float() @ b.float())

def get_inputs():
    g = torch.Generator().manual_seed(3)
    return [torch.randint(-4, 5, (32, 32), generator=g).half(), torch.randint(-4, 5, (32, 32), generator=g).half()]

def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("cube_only", [True, False])
def test_a_cube_only_matmul_runs_on_the_aic_which_goes_on_past_its_registration(ev, tmp_path, cube_only):
    folder = tmp_path / f"cube_only_{cube_only}"
    folder.mkdir()
    kernel = CUBE_ONLY_KERNEL if cube_only else CUBE_ONLY_KERNEL.replace("#define ASCENDC_CUBE_ONLY\n", "")
    (folder / "mm_relu.cpp").write_text(kernel)
    (folder / "host.py").write_text(CUBE_ONLY_HOST)
    (folder / "reference.py").write_text(CUBE_ONLY_REFERENCE)
    report = ev.evaluate(folder).report
    if cube_only:
        assert report.status == "correct", report.diagnostics
    else:
        # without the define the AIC serves the (absent) AIV clients from REGIST_MATMUL_OBJ and ends
        # there, as on the device: the flag after it is never set
        assert report.status == "runtime_error"
        wait = [i + 1 for i, ln in enumerate(kernel.splitlines()) if "CrossCoreWaitFlag(3);" in ln][0]
        assert ("flag-deadlock", wait) in {(d.code, d.line) for d in report.diagnostics}, report.diagnostics


SERVED_KERNEL = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace AscendC;
using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using FloatGm = MatmulType<TPosition::GM, CubeFormat::ND, float>;

// A MIX Matmul (no kernel type, no ASCENDC_CUBE_ONLY): each AIV computes its 16 rows of C = A x B
// through the AI Core's one AIC, which serves the two calls one after the other.
extern "C" __global__ __aicore__ void mm_served(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    TPipe pipe;
    TCubeTiling t{};
    t.M = 32, t.N = t.Ka = t.Kb = t.singleCoreN = t.singleCoreK = 32, t.singleCoreM = 16;
    t.baseM = 16, t.baseN = t.baseK = 32, t.stepKa = t.stepKb = t.depthA1 = t.depthB1 = 1;
    t.dbL0A = t.dbL0B = t.dbL0C = 1, t.stepM = t.stepN = 1, t.usedCoreNum = 2;
    Matmul<HalfGm, HalfGm, FloatGm> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    const int row0 = GetBlockIdx() * 16;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a + row0 * 32, 16 * 32);
    bGm.SetGlobalBuffer((__gm__ half *)b, 32 * 32);
    cGm.SetGlobalBuffer((__gm__ float *)c + row0 * 32, 16 * 32);
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm);
    mm.End();
}
"""

SERVED_HOST = """
import torch
from sage_npu.npu_eval import Launch

def launch(a, b):
    c = torch.zeros(32, 32, dtype=torch.float32)
    return Launch(kernel="mm_served", block_dim=1, args=[a, b, c], outputs=[c])
"""


# B IBSHARE on the IBShare template: the AIC keeps one L1 copy of B for both AIVs' calls.
SHARED_B = (("using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;",
             "using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;\n"
             "using SharedGm = MatmulType<TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NONE, true>;"),
            ("Matmul<HalfGm, HalfGm, FloatGm> mm;", "Matmul<HalfGm, SharedGm, FloatGm, FloatGm, CFG_IBSHARE_NORM> mm;"))


@pytest.mark.parametrize("share_b", [False, True], ids=["own-b", "ibshare-b"])
def test_a_mix_matmul_call_is_served_on_the_aic_timeline(ev, tmp_path, share_b):
    """Each AIV's Init, IterateAll and End are messages (a scalar GM round trip on the AIV, the server's
    handling on the AIC) the AIC serves: the cube work and the Matmul's own scalar work (each object's
    Init, each K step) of both AIVs' objects are on the AIC's timeline, none on the AIVs'. Init and End
    are posted without waiting (the device client's); the IterateAll waits for the AIC's reply, and
    each AIV ends after it; the AIC serves the calls one after the other. With B IBSHARE on CFG_IBSHARE_NORM
    the AIC copies B (the same GM tensor for both) to L1 once, A (each AIV's own rows) twice."""
    from sage_npu.npu_eval.cost_model import estimate

    folder = tmp_path / "served"
    folder.mkdir()
    kernel = SERVED_KERNEL
    for old, new in SHARED_B if share_b else ():
        assert old in kernel
        kernel = kernel.replace(old, new)
    (folder / "mm_served.cpp").write_text(kernel)
    (folder / "host.py").write_text(SERVED_HOST)
    (folder / "reference.py").write_text(CUBE_ONLY_REFERENCE.replace("torch.relu(a.float() @ b.float())",
                                                                     "a.float() @ b.float()"))
    evaluation = ev.evaluate(folder)
    assert evaluation.report.status == "correct", evaluation.report.diagnostics
    assert not evaluation.report.diagnostics, evaluation.report.diagnostics
    trace = evaluation.trace.trace
    aic = next(b for b, (k, _) in trace.cores.items() if k == "AIC")
    aivs = [b for b, (k, _) in trace.cores.items() if k == "AIV"]
    cube = [r for r in trace.blocks[aic] if r.kind == "I" and r.pipe in ("MTE1", "M", "FIX")]
    assert [r.api for r in cube if r.pipe == "M"] == ["Mmad", "Mmad"]  # one a call
    apis = [r.api for r in trace.blocks[aic] if r.pipe == "S" and r.kind == "I"]
    assert apis.count(protocol.MATMUL_SERVE) == 6 and protocol.MATMUL_MESSAGE not in apis
    assert apis.count(protocol.MATMUL_INIT) == 2 and apis.count(protocol.MATMUL_KSTEP) == 2
    copies = [r.bytes for r in trace.blocks[aic] if r.kind == "I" and r.pipe == "MTE2"]
    assert sorted(copies) == ([16 * 32 * 2] * 2 + [32 * 32 * 2] * (1 if share_b else 2))  # A's, B's
    assert apis.count(protocol.MATMUL_COPY) == len(copies)  # a B found in the shared L1 copy costs no copy
    for b in aivs:
        recs = trace.blocks[b]
        assert not [r for r in recs if r.kind == "I" and r.pipe in ("MTE1", "M", "FIX")]
        assert [r.kind for r in recs if r.kind in ("xset", "xwait")] == ["xset", "xset", "xwait", "xset"]
        assert [r.api for r in recs if r.pipe == "S" and r.kind == "I"] == [protocol.MATMUL_MESSAGE] * 3
    chip = chip_profile("910B2")
    est = estimate(trace, chip, default_costs(chip.family), evaluation.trace.block_dim)
    by_block = {s.block: s for s in est.schedules}
    replies = sorted(by_block[aic].xsets.values())
    assert len(replies) == 2 and replies[0] < replies[1]
    assert sorted(by_block[b].cycles for b in aivs)[1] > replies[-1]
    # the AIVs spend most of their time waiting for the AIC, which is the slowest core itself when it
    # serves their End messages after they are done: either way the profile describes the AIC's pipes
    aic_last = by_block[aic].cycles >= max(by_block[b].cycles for b in aivs)
    assert est.profiled_core == ("" if aic_last else "AIC 0"), est.profiled_core
    assert {"MTE2", "MTE1", "M", "FIX"} <= set(est.pipes), est.pipes
    held = sum(end - start for _, start, end in by_block[aivs[0]].xheld)
    assert held >= 0.5 * by_block[aivs[0]].cycles
    # the Chrome trace names a mixed launch's blocks by their AIC/AIV
    from sage_npu.npu_eval.chrome_trace import chrome_trace

    events = chrome_trace(est, trace, chip)["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert names == {f"block {aic} (AIC 0)"} | {f"block {b} (AIV {trace.cores[b][1]})" for b in aivs}, names
