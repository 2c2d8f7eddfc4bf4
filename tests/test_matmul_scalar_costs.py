"""The Matmul API's own scalar work (docs/cost-model.md "The Matmul API's scalar work"): the cost
table's figures are the arithmetic of public measurements, redone here from the numbers the sources
print (asc-devkit at 82b89a15f263), and the emulator records one scalar record per unit they cost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.cost_model import estimate, scalar_cost
from sage_npu.npu_eval.costs import default_costs
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.trace import Rec

COSTS = default_costs(910)
GHZ = 1.85  # matmul_high_performance/README_en.md:447, the clock of its measurements (the guide pages print none)
# K steps a core at M = N = K = 8192 with [128, 256, 64] base blocks and K in 64-wide steps: Case 2 splits 2 x 12
# (singleM 4096, singleN 683 and a tail of 679: every core 32 x 3 blocks, README_en.md:151); Cases 3-6 split 4 x 6
# (singleM 2048, singleN 1536 and a tail of 512, line 196: five columns of cores have 6 N blocks, one has 2), and
# aic_scalar_time is a core's mean.
STEPS_2x12 = 32 * 3 * 128
STEPS_4x6 = 16 * (5 * 6 + 2) / 6 * 128
# matmul_high_performance/README_en.md, the runtime-tiling cases (one IterateAll each, Case 6 two): (aic_scalar_time
# us, K steps a core, GM -> L1 copies a K step = 1/stepKa + 1/stepKb), by table line. stepKa is printed (Case 4
# line 230: 2; Case 5 line 269: 8); stepKb follows from depthB1 = 8 (line 274, which Cases 4 and 5 keep) and the
# README's rule depthB1 / (stepN * stepKb) = 2 (line 234): 4.
HP_CASES = {
    107: (508787.509, 128 ** 3, 2.0),  # Case 0: one core, [64, 64, 64] blocks, CFG_NORM (one base block a copy)
    138: (63608.818, 64 * 32 * 128, 2.0),  # Case 1: one core, CFG_NORM
    169: (2987.47, STEPS_2x12, 2.0),  # Case 2
    203: (2656.33, STEPS_4x6, 2.0),  # Case 3
    244: (2073.97, STEPS_4x6, 1 / 2 + 1 / 4),  # Case 4: CFG_MDL
    288: (1464.492, STEPS_4x6, 1 / 8 + 1 / 4),  # Case 5: L1 filled
    341: (1753.463, STEPS_4x6, 1 / 8 + 1 / 4),  # Case 6: Case 5 over A's two halves
}


def _line() -> tuple[float, float, list[float]]:
    """The least-squares line of scalar cycles a K step against copies a K step: (intercept, slope,
    each case's relative residual)."""
    pts = [(x, us * GHZ * 1e3 / steps) for us, steps, x in HP_CASES.values()]
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    icpt = my - slope * mx
    return icpt, slope, [(icpt + slope * x) / y - 1 for x, y in pts]


def test_the_k_step_and_copy_figures_are_the_readme_cases_line():
    """Cases 0-6 of matmul_high_performance: a K step's scalar work and a copy's are the line's
    intercept and slope. The four CFG_NORM cases (base blocks of 64 and of 128 x 256, one core and 24)
    give 449-450 cycles a K step and lie within 0.5% of it; Cases 4-6 within 15% (Case 5 the farthest:
    the line is 14.4% above it, and Case 6, the same tiling, 4.5% below)."""
    icpt, slope, residuals = _line()
    assert COSTS.matmul_kstep_cycles == pytest.approx(icpt, rel=0.01)
    assert COSTS.matmul_copy_cycles == pytest.approx(slope, rel=0.01)
    assert max(abs(r) for r in residuals[:4]) < 0.005 and max(abs(r) for r in residuals) < 0.15, residuals
    assert "README_en.md:107, 138, 169, 203, 244, 288, 341" in COSTS.sources["matmul_kstep_cycles"]


def test_the_init_figures_and_the_constant_share_are_the_pages():
    """Init: the constant-tiling guide page's time to the first MTE2, 3.536 us on the host's tiling and
    2.185 us on a constant one (lines 73, 136); the rest of a constant tiling's scalar work: Case 7's
    aic_scalar_time over Case 6's (README_en.md:341, 376), the same kernel on the two tilings."""
    assert COSTS.matmul_init_cycles == pytest.approx(3.536 * GHZ * 1e3, rel=0.001)
    assert COSTS.matmul_static_init_cycles == pytest.approx(2.185 * GHZ * 1e3, rel=0.001)
    assert COSTS.matmul_static_share == pytest.approx(968.616 / 1753.463, rel=0.001)


def test_the_serve_figure_is_the_pure_cube_pages_mix_difference():
    """The pure Cube page (lines 52-58, 66, 158): one AI Core's aic_scalar_time is 15.02 us in MIX mode
    (two AIVs, each 128 x 640 x 64: three [128, 256] blocks, A copied once, B three times) and 5.17 us
    pure Cube (one AIC, 128 x 1280 x 64: five blocks, six copies). MIX adds the second object's Init,
    one K step, two copies and six messages (each AIV's Init, IterateAll and End); what is left of
    the difference over the six is one message's handling."""
    extra = (15.02 - 5.17) * GHZ * 1e3
    known = COSTS.matmul_init_cycles + COSTS.matmul_kstep_cycles + 2 * COSTS.matmul_copy_cycles
    assert COSTS.matmul_serve_cycles == pytest.approx((extra - known) / 6, rel=0.01)


def _rec(api: str, dtype: str = "") -> Rec:
    return Rec("I", "S", api, dtype, 0, 0, 0, 0, 0, (0, 0), (0, 0), (0, 0))


def test_each_matmul_record_takes_its_figure_and_a_constant_tiling_its_share():
    c = COSTS
    assert scalar_cost(_rec(protocol.MATMUL_INIT), c) == c.matmul_init_cycles
    assert scalar_cost(_rec(protocol.MATMUL_INIT, protocol.STATIC_TILING), c) == c.matmul_static_init_cycles
    assert scalar_cost(_rec(protocol.MATMUL_KSTEP), c) == c.matmul_kstep_cycles
    assert scalar_cost(_rec(protocol.MATMUL_KSTEP, protocol.STATIC_TILING), c) == pytest.approx(
        c.matmul_kstep_cycles * c.matmul_static_share)
    assert scalar_cost(_rec(protocol.MATMUL_COPY, protocol.STATIC_TILING), c) == pytest.approx(
        c.matmul_copy_cycles * c.matmul_static_share)
    assert scalar_cost(_rec(protocol.MATMUL_SERVE), c) == c.matmul_serve_cycles
    assert scalar_cost(_rec(protocol.MATMUL_MESSAGE), c) == c.scalar_gm_cycles
    assert scalar_cost(_rec("GetValue"), c) == c.scalar_ub_cycles


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_matmul_example_records_its_init_each_k_step_and_each_copy(tmp_path):
    """The bundled matmul_adv (pure Cube, CFG_NORM, a tiling from the host): per core one Init, one K-step
    record per Mmad and one copy record per GM -> L1 DataCopy, all on the user's lines, none marked
    constant; the estimate's scalar time is at least their sum."""
    task = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "matmul_adv"
    with Evaluator(EvalSettings(trials=1, advise=False, cache_dir=tmp_path / "cache")) as ev:
        evaluation = ev.evaluate(task)
    assert evaluation.report.status == "correct", evaluation.report.diagnostics
    trace = evaluation.trace.trace
    assert trace.blocks
    for recs in trace.blocks.values():
        instr = [r for r in recs if r.kind == "I"]
        apis = [r.api for r in instr]
        assert apis.count(protocol.MATMUL_INIT) == 1
        assert apis.count(protocol.MATMUL_KSTEP) == sum(r.pipe == "M" for r in instr) > 0
        assert apis.count(protocol.MATMUL_COPY) == sum(r.pipe == "MTE2" for r in instr) > 0
        assert not [r for r in instr if r.api.startswith("Matmul") and r.dtype == protocol.STATIC_TILING]
        assert not [r for r in instr if r.api in (protocol.MATMUL_SERVE, protocol.MATMUL_MESSAGE)]
    chip = chip_profile("910B2")
    est = estimate(trace, chip, COSTS, evaluation.trace.block_dim)
    for sched in est.schedules:
        own = sum(scalar_cost(r, COSTS) for r in trace.blocks[sched.block] if r.kind == "I" and r.pipe == "S")
        assert own >= COSTS.matmul_init_cycles
        assert sched.busy["S"] >= own and sched.cycles > own


CONSTANT = ("    AscendC::Matmul<AType, BType, CType> mm;",
            "    constexpr static MatmulShapeParams SHAPE{32, 128, 256, 32, 128, 64};\n"
            "    constexpr static MatmulConfig CFG = GetMMConfig<MatmulConfigMode::CONFIG_MDL>(SHAPE);\n"
            "    constexpr static auto CONSTANT_CFG = AscendC::GetMatmulApiTiling<AType, BType, CType, CType>(CFG);\n"
            "    AscendC::Matmul<AType, BType, CType, CType, CONSTANT_CFG> mm;")
NULL_TILING = ("REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);",
               "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, (TCubeTiling*)nullptr);")


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("full", [True, False], ids=["null-tiling", "with-tiling"])
def test_only_a_fully_constant_tiling_marks_the_matmuls_scalar_work(tmp_path, full):
    """matmul_adv on a constant tiling (the constant-tiling page's steps: GetMMConfig, GetMatmulApiTiling)
    for its first shape's core share, 32 x 256 x 128 on four cores: registered with a null TCubeTiling
    (fully constant) every Matmul record says so and costs the constant figures; registered with the
    host's tiling (partly constant) none does."""
    task = tmp_path / "matmul_adv"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "tasks" / "matmul_adv", task)
    ref = task / "reference.py"
    ref.write_text(ref.read_text().replace("shapes = [(128, 256, 128), (100, 70, 50), (37, 200, 300)]",
                                           "shapes = [(128, 256, 128)]"))
    kernel = task / "matmul_adv.cpp"
    text = kernel.read_text()
    for old, new in (CONSTANT, NULL_TILING) if full else (CONSTANT,):
        assert old in text
        text = text.replace(old, new)
    kernel.write_text(text)
    with Evaluator(EvalSettings(trials=1, advise=False, cache_dir=tmp_path / "cache")) as ev:
        evaluation = ev.evaluate(task)
    assert evaluation.report.status == "correct", evaluation.report.diagnostics
    mm = [r for recs in evaluation.trace.trace.blocks.values() for r in recs
          if r.kind == "I" and r.api in (protocol.MATMUL_INIT, protocol.MATMUL_KSTEP, protocol.MATMUL_COPY)]
    assert len(mm) >= 4 * 3  # an Init, K steps and copies on each of four cores
    assert {r.dtype for r in mm} == ({protocol.STATIC_TILING} if full else {""})
    init = next(r for r in mm if r.api == protocol.MATMUL_INIT)
    assert scalar_cost(init, COSTS) == (COSTS.matmul_static_init_cycles if full else COSTS.matmul_init_cycles)
