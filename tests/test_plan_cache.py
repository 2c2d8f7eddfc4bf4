"""The plan cache (npu_eval/plan_cache.py): a kept plan is reused while the task's Python files
and data are unchanged, whatever happens to the kernel, and recomputed when they change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    with Evaluator(EvalSettings(trials=2, cache_dir=tmp_path_factory.mktemp("cache"))) as ev:
        yield ev


def task(tmp_path: Path) -> Path:
    d = tmp_path / "add"
    shutil.copytree(ADD, d)
    return d


def comparable(report):
    """A report without what differs from run to run."""
    return report.model_copy(update={"timing": None}).model_dump_json()


def test_a_kept_plan_serves_kernel_edits_and_gives_the_same_report(evaluator, tmp_path):
    d = task(tmp_path)
    first = evaluator.evaluate(d)
    again = evaluator.evaluate(d)
    assert not first.stages.plan_cached and again.stages.plan_cached
    assert comparable(first.report) == comparable(again.report)
    kernel = d / "add_custom.cpp"
    kernel.write_text(kernel.read_text().replace("Add(zLocal, xLocal, yLocal", "Sub(zLocal, xLocal, yLocal"))
    edited = evaluator.evaluate(d)
    assert edited.stages.plan_cached, "a kernel edit keeps the plan"
    assert edited.report.status == "mismatch", "the kept plan still holds the reference's outputs"


def test_python_and_data_changes_make_a_new_plan(evaluator, tmp_path):
    d = task(tmp_path)
    evaluator.evaluate(d)
    ref = d / "reference.py"
    ref.write_text(ref.read_text() + "\n# a comment is a change too\n")
    assert not evaluator.evaluate(d).stages.plan_cached
    data = d / "weights.bin"
    data.write_bytes(b"\0" * 16)
    assert not evaluator.evaluate(d).stages.plan_cached, "a new data file"
    assert evaluator.evaluate(d).stages.plan_cached
    os.utime(data, ns=(1, 1))
    assert not evaluator.evaluate(d).stages.plan_cached, "a data file with another modification time"


def test_a_kept_plan_missing_its_arrays_is_computed_again(evaluator, tmp_path):
    d = task(tmp_path)
    evaluator.evaluate(d)
    kept = [p for p in (evaluator.settings.cache_dir / "plans").rglob("*") if p.is_file() and p.name != "plan.json"]
    for p in kept:
        p.unlink()
    again = evaluator.evaluate(d)
    assert not again.stages.plan_cached and again.report.status == "correct"


def test_the_cache_can_be_turned_off(tmp_path):
    d = task(tmp_path)
    with Evaluator(EvalSettings(trials=1, cache_dir=tmp_path / "c", plan_cache=False)) as ev:
        assert [ev.evaluate(d).stages.plan_cached for _ in range(2)] == [False, False]
    assert not (tmp_path / "c" / "plans").exists()


def test_a_failing_plan_is_not_kept(evaluator, tmp_path):
    d = task(tmp_path)
    (d / "reference.py").write_text((d / "reference.py").read_text() + "\nraise RuntimeError('boom')\n")
    for _ in range(2):
        ev = evaluator.evaluate(d)
        assert ev.report.status == "harness_error" and not ev.stages.plan_cached
