"""Every bundled example task (examples/tasks/*) evaluates correct on the emulator: all trials
pass and no error diagnostic is raised. The examples are written for the real CANN API, so a
failure here is either an emulator gap or a broken example."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"
# A task folder has host.py, or is an op project whose op_host/ tiling stands in for it.
TASKS = sorted(p.name for p in EXAMPLES.iterdir()
               if p.is_dir() and ((p / "host.py").exists() or (p / "op_host").is_dir()))


@pytest.fixture(scope="module")
def example_evaluator():
    # The default build cache: the examples rarely change, so warm builds keep this module fast.
    ev = Evaluator(EvalSettings())
    yield ev
    ev.close()


def test_examples_are_found():
    assert len(TASKS) >= 13, TASKS


@pytest.mark.parametrize("name", TASKS)
def test_example_is_correct(example_evaluator, name):
    report = example_evaluator.evaluate(EXAMPLES / name).report
    errors = [d for d in report.diagnostics if d.severity == "error"]
    summary = "\n".join(f"{d.file}:{d.line}: [{d.code}] {d.message}" for d in report.diagnostics)
    assert report.status == "correct", f"{name}: {report.status}\n{summary}"
    assert not errors, summary
    assert report.correctness is not None
    assert report.correctness.trials >= 1
    assert report.correctness.passed == report.correctness.trials, report.correctness
    # none of them copies in GM bytes its UB still holds: a redundant-copy finding would be a false one
    assert "perf-redundant-copy" not in {f.code for f in report.advice}, report.advice
