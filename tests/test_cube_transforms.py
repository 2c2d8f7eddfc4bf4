"""The offline optimizer's cube transforms (agent/transforms.py): a bigger base block and two L1
buffers, located in a basic-API matmul, proposed only when the cube's buffers still fit, and each
verified (correct on every trial, faster by the estimate) before it can be suggested."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sage_npu.agent.driver import run_episode
from sage_npu.agent.offline import CatalogSearcher
from sage_npu.agent.transforms import Sources, cube_base_block, l1_double_buffering, propose
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings
from tests.test_cube_cost_order import REFERENCE as REFERENCE_TEMPLATE

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "matmul_basic"
CHIP = chip_profile("910B2")

REFERENCE = REFERENCE_TEMPLATE.format(m=512, k=1024, n=1024)


def draft_kernel() -> str:
    """matmul_basic with one buffer in each L1 queue (its L0 queues keep two)."""
    k = (EXAMPLE / "matmul_basic.cpp").read_text()
    for q, pos in (("qa1", "A1"), ("qb1", "B1")):
        k = k.replace(f"TQue<TPosition::{pos}, BUFFER_NUM> {q};", f"TQue<TPosition::{pos}, 1> {q};")
        k = k.replace(f"pipe.InitBuffer({q}, BUFFER_NUM,", f"pipe.InitBuffer({q}, 1,")
    assert k.count("TQue<TPosition::A1, 1>") == 1 and k.count("InitBuffer(qb1, 1,") == 1
    return k


def draft_host(base: str = "64, 64, 64") -> str:
    h = (EXAMPLE / "host.py").read_text()
    old = next(line for line in h.splitlines() if line.startswith("BASE_M, BASE_N, BASE_K = "))
    return h.replace(old, f"BASE_M, BASE_N, BASE_K = {base}")


def test_base_block_grows_while_l0a_l0b_and_l0c_hold_it():
    src = Sources("matmul_basic.cpp", draft_kernel(), draft_host())
    got = {c.description.split(":")[0]: c.files["host.py"] for c in cube_base_block(src, CHIP)}
    assert set(got) == {"BASE_M 64 -> 128", "BASE_N 64 -> 128"}
    assert "BASE_M, BASE_N, BASE_K = 128, 64, 64" in got["BASE_M 64 -> 128"]
    assert "BASE_M, BASE_N, BASE_K = 64, 128, 64" in got["BASE_N 64 -> 128"]
    # 128 x 256: L0C holds one 128 KB float block, L0B two 32 KB B tiles: neither side can double.
    assert cube_base_block(Sources("matmul_basic.cpp", draft_kernel(), draft_host("128, 256, 64")), CHIP) == []
    # 128 x 128: baseN 256 fits (L0B 2 x 32 KB, L0C 128 KB), baseM 256 too (L0A 2 x 32 KB).
    wide = cube_base_block(Sources("matmul_basic.cpp", draft_kernel(), draft_host("128, 128, 64")), CHIP)
    assert {c.description.split(":")[0] for c in wide} == {"BASE_M 128 -> 256", "BASE_N 128 -> 256"}
    # A vector kernel has no cube buffers: nothing to propose.
    vadd = EXAMPLE.parent / "vadd_naive"
    assert cube_base_block(Sources("vadd_naive.cpp", (vadd / "vadd_naive.cpp").read_text(),
                                   (vadd / "host.py").read_text()), CHIP) == []


def test_l1_double_buffering_edits_both_queues_and_only_when_l1_holds_them():
    src = Sources("matmul_basic.cpp", draft_kernel(), draft_host())
    (c,) = l1_double_buffering(src, CHIP)
    k = c.files["matmul_basic.cpp"]
    assert c.transform == "l1-double-buffering" and c.description.startswith("qa1, qb1: 1 -> 2 buffers")
    for q, pos in (("qa1", "A1"), ("qb1", "B1")):
        assert f"TQue<TPosition::{pos}, 2> {q};" in k and f"pipe.InitBuffer({q}, 2," in k
    assert "TQue<TPosition::A2, BUFFER_NUM> qa2;" in k  # the L0 queues are left alone
    # Already two buffers (the bundled example): nothing to do.
    assert l1_double_buffering(Sources("matmul_basic.cpp", (EXAMPLE / "matmul_basic.cpp").read_text(),
                                       draft_host()), CHIP) == []
    # baseK 512 at 128 x 256: one A1 (128 KB) and one B1 (256 KB) fit the 512 KB of L1, two do not.
    assert l1_double_buffering(Sources("matmul_basic.cpp", draft_kernel(), draft_host("128, 256, 512")), CHIP) == []
    assert {x.transform for x in propose(src, CHIP)} >= {"cube-base-block", "l1-double-buffering"}


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    e = Evaluator(EvalSettings(trials=1, cache_dir=tmp_path_factory.getbasetemp() / "cube-tr-cache"))
    yield e
    e.close()


def test_each_cube_transform_is_verified_faster_before_it_is_suggested(ev, tmp_path):
    task = tmp_path / "mm"
    shutil.copytree(EXAMPLE, task)
    (task / "matmul_basic.cpp").write_text(draft_kernel())
    (task / "host.py").write_text(draft_host())  # 24 cores already: only the cube transforms apply
    (task / "reference.py").write_text(REFERENCE)
    seen = []
    r = run_episode(task, ev, CatalogSearcher(), turns=3, on_attempt=seen.append)
    assert r.status == "improved" and r.seed.timing is not None
    assert sorted(a.transform for a in seen) == ["cube-base-block", "cube-base-block", "l1-double-buffering"]
    for a in seen:
        assert a.status == "correct" and a.estimated_us is not None
        assert a.estimated_us < r.seed.timing.estimated_us, a.description
    assert r.best.status == "correct" and r.best.correctness.passed == r.best.correctness.trials
