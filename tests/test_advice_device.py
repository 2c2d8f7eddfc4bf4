"""The advisor on the device backend (`--backend ascend`) against the fake CANN of tests/fake_cann.py:
a correct device evaluation carries the findings of the emulator's trace of the same kernel,
labelled as the CPU model's, and the editor's verification of the top one measures the changed
copy on the device, so its title and calibration record carry the fake device's times (docs/advisor.md)."""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from pathlib import Path

import pytest

from sage_npu.npu_eval import evaluate as evaluate_module
from sage_npu.npu_eval.backends import ascend_env
from sage_npu.npu_eval.evaluate import MODEL_BUILD_THREAD, Cancelled, Evaluator
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.task import load_task
from sage_npu.server.features.advice_actions import calibration, candidate, variant, verified
from tests.fake_cann import make_fake_cann
from tests.perf_tasks import materialise

NAME = "perf_two_cores"  # half z = x + y (what the fake device computes) on 2 of 48 vector cores
# The fake device's Task Duration per launch shape: the planted two blocks, and the 48 the fix uses.
TWO_BLOCKS_US, ALL_CORES_US = 40.0, 4.5


@pytest.fixture
def settings(tmp_path, monkeypatch) -> EvalSettings:
    cann = make_fake_cann(tmp_path / "cann", profile={"duration_us": 99.0, "block_dim": 8,
                                                      "duration_by_block_dim": {"2": TWO_BLOCKS_US,
                                                                                "48": ALL_CORES_US}})
    for var in ascend_env.HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    for k, v in cann.env().items():
        monkeypatch.setenv(k, v)
    return EvalSettings(backend="ascend", trials=2, cache_dir=tmp_path / "cache")


def test_device_findings_are_model_estimates_and_their_verification_is_measured(settings, tmp_path):
    task = load_task(materialise(tmp_path / "tasks")[NAME])
    with Evaluator(settings) as ev:
        before = ev.evaluate(task).report
        assert before.backend == "ascend" and before.status == "correct", before.diagnostics
        assert before.timing is not None and before.timing.estimated is False
        assert before.timing.estimated_us == TWO_BLOCKS_US  # the device's time, not the model's
        top = before.advice[0]
        assert top.code == "perf-few-cores" and top.change.startswith("block_dim 2 -> 48") and top.estimated
        assert "would save est. ~" in top.message and "(CPU model)" in top.message
        assert f"on the device: measured {TWO_BLOCKS_US:.2f} us (the saving is the CPU model's" in top.message
        # the saving is the model's: its before time is the model's estimate, not the device's
        assert top.before_us != TWO_BLOCKS_US and 0 < top.saving_us < top.before_us

        found = candidate(task, before)
        assert found is not None and found[0] == top
        copy = variant(task, found[1].files, tmp_path / "verify" / NAME)
        assert copy is not None and "block_dim=48" in (copy.root / "host.py").read_text()
        after = ev.evaluate(copy).report
    assert after.backend == "ascend" and after.timing is not None and after.timing.estimated_us == ALL_CORES_US
    change = verified(task, top, found[1], before, after)
    assert change is not None and change.file == (task.root / "host.py").resolve()
    gain = TWO_BLOCKS_US - ALL_CORES_US
    assert re.search(rf"^SAGE: {re.escape(top.change)}: verified measured {gain:.2f} us faster \(device\), "
                     rf"correct on 2/2 trials \(the CPU model estimated {top.saving_us:.2f}\)$", change.title), \
        change.title
    record = calibration(task, top, before, after)
    assert record is not None and record.delivered_us == gain and record.estimated_us == top.saving_us
    assert record.measured and record.verified_by == "editor"


def test_no_model_build_when_device_advice_is_off(settings, tmp_path):
    task = load_task(materialise(tmp_path / "tasks")[NAME])
    with Evaluator(settings.model_copy(update={"device_advice": False})) as ev:
        evaluation = ev.evaluate(task)
    assert evaluation.report.status == "correct" and evaluation.report.advice == []
    # nothing built for the emulator: its cache holds the plan and the device's build only
    assert {p.name for p in Path(settings.cache_dir or tmp_path).iterdir()} == {"plans", "ascend"}


def _stalled_compiler(folder: Path) -> tuple[Path, Path]:
    """A C++ compiler that answers --version and otherwise writes its pid and sleeps a minute: the
    emulator's build that is still under way when the evaluation ends."""
    folder.mkdir(parents=True)
    pids, cxx = folder / "pids", folder / "stalled-c++"
    cxx.write_text(f'#!/bin/sh\ncase "$1" in --version) echo stalled-c++ 1; exit 0;; esac\n'
                   f'echo $$ >> {pids}\nexec sleep 60\n')
    cxx.chmod(0o755)
    return cxx, pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # a zombie has ended


def test_a_cancelled_device_evaluation_leaves_no_model_build_behind(settings, tmp_path, monkeypatch):
    """Cancelled (a newer save) during the device's trials while the emulator's build for the
    advisor still compiles: the compiler is killed, its thread has ended and its folders are gone
    when evaluate() has raised, not a minute later."""
    cxx, pids = _stalled_compiler(tmp_path / "cxx")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where build() compiles
    task = load_task(materialise(tmp_path / "tasks")[NAME])
    (tmp_path / "s").mkdir()
    ev = Evaluator(settings.model_copy(update={"cxx": str(cxx), "prebuilt": False}), scratch_root=tmp_path / "s")

    def trials_cancelled_while_compiling(plan, run):
        deadline = time.monotonic() + 60
        while not pids.exists() and time.monotonic() < deadline:  # the model build's compiler started
            time.sleep(0.05)
        ev.cancel()  # as a newer save does, from another thread
        run.check_cancel()
        raise AssertionError("check_cancel did not raise")

    monkeypatch.setattr(evaluate_module, "run_trials", trials_cancelled_while_compiling)
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        ev.evaluate(task)
    assert time.monotonic() - t0 < 40  # not the stalled compiler's minute
    [pid] = [int(p) for p in pids.read_text().split()]
    assert not _alive(pid)
    assert not any(t.name.startswith(MODEL_BUILD_THREAD) for t in threading.enumerate())
    ev.close()  # waits for the scratch folder's removal
    assert list(temp.iterdir()) == [] and list((tmp_path / "s").iterdir()) == []
