"""Calibration of the advisor per finding kind (docs/advisor.md): each verified finding (the editor's
quick fix, an optimizer episode's evaluation of the finding's exact change) is stored in the memory
as a Calibration (estimated beside delivered saving), and `sage-npu memory stats` shows per kind
how many, the median delivered/estimated and the share within 25%."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from sage_npu.agent.calibration import calibration_refusal
from sage_npu.agent.driver import advice_calibration
from sage_npu.agent.transforms import Sources, for_finding
from sage_npu.memory import migrations, models
from sage_npu.memory.cli import add_memory_parser, run_memory
from sage_npu.memory.experience_memory import CALIBRATION_WITHIN, ExperienceMemory, calibration_by_kind
from sage_npu.memory.models import Calibration
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store
from sage_npu.npu_eval.advisor import WITHIN
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.report import AdviceFinding, Report, Timing
from sage_npu.npu_eval.task import Task, load_task
from sage_npu.server.features.advice_actions import calibration

VADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "vadd_naive"


def cal(code: str, est: float, got: float, by: models.VerifiedBy = "editor") -> Calibration:
    return Calibration(code=code, change=f"{code} change", estimated_us=est, delivered_us=got, verified_by=by)


def test_the_memory_bar_is_the_advisors():
    assert CALIBRATION_WITHIN == WITHIN


def test_per_kind_n_median_ratio_and_share_within():
    rows = [cal("perf-few-cores", 1.0, 1.0), cal("perf-few-cores", 2.0, 1.0), cal("perf-few-cores", 1.0, 1.1),
            cal("perf-small-tiles", 1.0, 0.5), cal("perf-small-tiles", 1.0, 0.9)]
    [cores, tiles] = calibration_by_kind(rows)
    assert (cores.code, cores.n, cores.median_ratio, cores.within) == ("perf-few-cores", 3, 1.0, round(2 / 3, 4))
    assert (tiles.code, tiles.n, tiles.median_ratio, tiles.within) == ("perf-small-tiles", 2, 0.7, 0.5)
    assert calibration_by_kind([cal("perf-scalar-loop", 1.0, -0.2)])[0].within == 0.0  # slower is never within


def test_the_same_verification_twice_is_one_record():
    assert cal("perf-few-cores", 1.0, 1.0).id == cal("perf-few-cores", 1.0, 1.0).id
    assert cal("perf-few-cores", 1.0, 1.0).id != cal("perf-few-cores", 1.0, 1.0, "optimizer").id


def _parser() -> argparse.ArgumentParser:
    g = argparse.ArgumentParser(add_help=False)
    g.add_argument("--db", type=Path)
    g.add_argument("--json", action="store_true")
    p = argparse.ArgumentParser(prog="sage-npu")
    add_memory_parser(p.add_subparsers(dest="command", required=True), g)
    return p


def test_memory_stats_shows_calibration_per_kind(tmp_path, capsys):
    settings = MemorySettings(db=tmp_path / "mem", embedder="hashing", hashing_dim=64, load_starter=False)
    mem = ExperienceMemory.open(settings)
    mem.record_calibration([cal("perf-few-cores", 1.0, 1.0), cal("perf-few-cores", 1.0, 1.0),
                            cal("perf-single-buffer", 1.0, 0.6, "optimizer"),
                            Calibration(code="perf-few-cores", change="c", estimated_us=1.0, delivered_us=0.7,
                                        verified_by="editor", measured=True)])
    run_memory(settings, _parser().parse_args(["memory", "stats"]))
    out = capsys.readouterr().out
    assert "perf-few-cores         n=1    median ratio 1.00, 100% within 25%" in out, out
    assert "perf-single-buffer     n=1    median ratio 0.60, 0% within 25%" in out, out
    # a device's measured delivery is counted apart from the CPU model's
    assert "perf-few-cores (device) n=1    median ratio 0.70, 0% within 25%" in out, out
    run_memory(settings, _parser().parse_args(["memory", "stats", "--json"]))
    data = json.loads(capsys.readouterr().out)
    assert [(k["code"], k["measured"], k["n"]) for k in data["calibration"]] == [
        ("perf-few-cores", False, 1), ("perf-few-cores", True, 1), ("perf-single-buffer", False, 1)]


def test_a_schema_1_memory_gains_the_calibration_table_on_open(tmp_path):
    path = tmp_path / "old"
    Store.create(path, "hashing-8", 8, MemorySettings(embedder="hashing", hashing_dim=8))
    store = Store.open(path, MemorySettings(embedder="hashing", hashing_dim=8))
    store._db.drop_table("calibration")  # as schema 1 wrote it
    meta = json.loads((path / "memory.json").read_text())
    (path / "memory.json").write_text(json.dumps({**meta, "schema_version": 1}))
    reopened = Store.open(path, MemorySettings(embedder="hashing", hashing_dim=8))
    assert reopened.meta.schema_version == models.SCHEMA_VERSION == 3
    assert reopened.count("calibration") == 0


def test_a_schema_2_memory_gains_measured_on_open(tmp_path):
    settings = MemorySettings(embedder="hashing", hashing_dim=8)
    path = tmp_path / "old"
    Store.create(path, "hashing-8", 8, settings)
    store = Store.open(path, settings)
    with store.lock():
        store.upsert("calibration", [cal("perf-few-cores", 1.0, 1.0)])
    store.table("calibration").drop_columns(["measured"])  # as schema 2 wrote it
    meta = json.loads((path / "memory.json").read_text())
    (path / "memory.json").write_text(json.dumps({**meta, "schema_version": 2}))
    reopened = Store.open(path, settings)
    assert reopened.meta.schema_version == models.SCHEMA_VERSION
    assert reopened.fetch_arrow("calibration", columns=["measured"]).column("measured").to_pylist() == [False]


def test_the_schema_3_step_adds_its_own_column_only_with_the_fields_default(tmp_path):
    """The step names its column: it neither adds another column the table lacks (a later field's,
    which a later step fills with its own default) nor picks its column by type."""
    settings = MemorySettings(embedder="hashing", hashing_dim=8)
    Store.create(tmp_path / "m", "hashing-8", 8, settings)
    store = Store.open(tmp_path / "m", settings)
    with store.lock():
        store.upsert("calibration", [cal("perf-few-cores", 1.0, 1.0)])
    store.table("calibration").drop_columns(["measured", "operator"])
    with store.lock():
        migrations.add_calibration_measured(store)
        migrations.add_calibration_measured(store)  # a second run finds the column: nothing to do
    names = store.table("calibration").schema.names
    assert "measured" in names and "operator" not in names
    assert store.fetch_arrow("calibration", columns=["measured"]).column("measured").to_pylist() == [
        Calibration.model_fields["measured"].default]
    with pytest.raises(KeyError, match="Calibration.nope"):
        migrations.add_field_column(store, Calibration, field="nope")


def _report(us: float, advice: list[AdviceFinding] | None = None, status: str = "correct") -> Report:
    timing = Timing(estimated_us=us, launch_overhead_us=0.0, roofline_us=0.0, bottleneck="MTE2", pipes={})
    return Report(task="t", kernel="k.cpp", status=status, timing=timing, advice=advice or [])  # type: ignore[arg-type]


def _double_buffering(saving_us: float) -> tuple[Task, dict[str, str], AdviceFinding, dict[str, str]]:
    """vadd_naive, its files, a perf-single-buffer finding saving `saving_us` of 10 us, and the
    files with the change the optimizer's transform makes for it."""
    task = load_task(VADD)
    assert task.host is not None
    base = {task.kernel.name: task.kernel.read_text(), "host.py": task.host.read_text()}
    f = AdviceFinding(code="perf-single-buffer", message="m", file=str(task.kernel), line=1, saving_us=saving_us,
                      before_us=10.0, after_us=10.0 - saving_us, change="double buffering (BUFFER_NUM 1 -> 2)")
    made = for_finding(f, Sources(task.kernel.name, base[task.kernel.name], base["host.py"]), chip_profile("910B2"))
    assert made is not None
    return task, base, f, {**base, **made.files}


def test_an_optimizer_turn_that_makes_a_findings_exact_change_is_calibrated():
    chip = chip_profile("910B2")
    task, base, f, files = _double_buffering(2.0)
    [rec] = advice_calibration("vadd_naive", task.kernel.name, base, _report(10.0, [f]), files, _report(8.2), chip)
    assert (rec.code, rec.estimated_us, rec.delivered_us, rec.verified_by) == ("perf-single-buffer", 2.0, 1.8,
                                                                               "optimizer")
    # another change, or an incorrect result, verifies nothing
    other = {**base, "host.py": base["host.py"].replace("MAX_CORES = 2", "MAX_CORES = 4")}
    assert advice_calibration("vadd_naive", task.kernel.name, base, _report(10.0, [f]), other, _report(8.0), chip) == []
    assert advice_calibration("vadd_naive", task.kernel.name, base, _report(10.0, [f]), files,
                              _report(8.0, status="mismatch"), chip) == []


def _timed(us: float, estimated: bool = True) -> Report:
    r = _report(us)
    assert r.timing is not None
    return r.model_copy(update={"timing": r.timing.model_copy(update={"estimated": estimated})})


@pytest.mark.parametrize(("before", "after", "reason"), [
    (_timed(10.0, estimated=False), _timed(0.0, estimated=False), "not a positive finite number"),
    (_timed(10.0, estimated=False), _timed(float("nan"), estimated=False), "not a positive finite number"),
    (_timed(float("inf")), _timed(8.0), "not a positive finite number"),
    (_timed(10.0), _timed(8.0, estimated=False), "not of one kind"),
    # a measured saving of 9.0 us for an estimated 0.5 us: 18 times, a broken measurement
    (_timed(10.0, estimated=False), _timed(1.0, estimated=False), "18.0 times the estimate"),
])
def test_an_optimizer_turn_with_unusable_times_is_not_calibrated(before, after, reason):
    """A measured time of 0 or NaN, a model figure against a measurement, or a measured saving far
    from the estimate would stand in the calibration for good: refused, with the reason."""
    chip = chip_profile("910B2")
    task, base, f, files = _double_buffering(0.5)
    assert before.timing is not None and after.timing is not None
    assert reason in (calibration_refusal(f.saving_us, before.timing, after.timing) or "")
    assert advice_calibration("vadd_naive", task.kernel.name, base, before.model_copy(update={"advice": [f]}),
                              files, after, chip) == []
    # the same change measured sensibly (a saving of 0.6 us) is calibrated, as measured
    [rec] = advice_calibration("vadd_naive", task.kernel.name, base, _timed(10.0, False).model_copy(
        update={"advice": [f]}), files, _timed(9.4, False), chip)
    assert rec.measured and rec.delivered_us == 0.6
    assert before.timing is not None and calibration_refusal(0.0, before.timing, before.timing) is not None


def test_the_editors_verification_is_calibrated_faster_or_not():
    task = load_task(VADD)
    f = AdviceFinding(code="perf-few-cores", message="m", file="host.py", line=1, saving_us=3.0, before_us=10.0,
                      after_us=7.0, change="MAX_CORES 2 -> 48")
    rec = calibration(task, f, _report(10.0, [f]), _report(10.5))
    assert rec is not None and (rec.delivered_us, rec.verified_by, rec.operator) == (-0.5, "editor", "vadd_naive")
    assert calibration(task, f, _report(10.0, [f]), None) is None
    # the same guard as the optimizer's: a device that reports 0 us after the change delivered no 10 us
    assert calibration(task, f, _timed(10.0, False), _timed(0.0, False)) is None
    assert calibration(task, f, _timed(10.0, False), _timed(7.5, False)) is not None
