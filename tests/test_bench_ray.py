"""`sage-npu bench` at scale: episodes as Ray tasks on a local Ray instance (started once for the module:
its start-up costs seconds) give the same rows and the same memory as `--jobs 2` (the one writer credits
each wave in suite order); a worker killed mid-run is retried; a hung task ends as a timeout; an
interrupted bench writes its partial summary and resumes from its journal without redoing finished tasks."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from sage_npu.agent.bench import run_suite
from sage_npu.agent.bench_cli import add_bench_parser, run_bench
from sage_npu.agent.bench_journal import journal_path, read_entries
from sage_npu.agent.settings import AgentSettings, BenchSettings
from sage_npu.cli import _global_flags, _overrides, build_parser
from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings

ray = pytest.importorskip("ray")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"
EPISODE_TITLE = "ray::episode_task"   # a Ray worker's process title while it runs an episode


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """Three tasks in two waves of 2: two that improve, one whose seed is wrong."""
    root = tmp_path_factory.mktemp("ray-suite")
    for name in ("vadd_naive", "sub_custom"):
        shutil.copytree(EXAMPLES / name, root / name)
    wrong = root / "wrong_sub"
    shutil.copytree(EXAMPLES / "sub_custom", wrong)
    kernel = wrong / "sub_custom.cpp"
    kernel.write_text(kernel.read_text().replace("AscendC::Sub(", "AscendC::Add("))
    return root


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> EvalSettings:
    return EvalSettings(trials=2, cache_dir=tmp_path_factory.getbasetemp() / "bench-ray-cache")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _agent(**bench) -> AgentSettings:
    return AgentSettings(turns=2, bench=BenchSettings(wave=2, **bench))


def _memory(path: Path) -> MemorySettings:
    return MemorySettings(db=path, embedder="hashing")


def _rows(result) -> list[tuple]:
    return [(r.name, r.status, r.correct, r.turns, r.seed_us, r.best_us, r.speedup) for r in result.rows]


def _snapshot(db: Path) -> dict:
    """What the memory learned, field by field (ids, utilities, counters, statuses) and its resident set."""
    memory = ExperienceMemory.open(_memory(db), create=False)
    items = {it.id: (it.kind, it.u, it.n_ret, it.n_ado, sorted(it.adopted_ops), it.p, it.status)
             for it in memory.store.fetch("items")}
    return {"items": items, "resident": sorted(i for i, v in items.items() if v[-1] == "resident"),
            "episodes": memory.stats().episodes}


@pytest.fixture(scope="module")
def two_jobs(suite, settings, tmp_path_factory):
    db = tmp_path_factory.mktemp("mem") / "jobs2"
    return run_suite(suite, settings, _agent(), jobs=2, memory_settings=_memory(db)), _snapshot(db)


def test_ray_gives_the_rows_and_memory_of_two_jobs(local_ray, two_jobs, suite, settings, tmp_path):
    jobs, expected = two_jobs
    result = run_suite(suite, settings, _agent(ray=True), memory_settings=_memory(tmp_path / "mem"))
    assert (result.runner, jobs.runner, jobs.jobs) == ("ray", "process", 2)
    assert _rows(result) == _rows(jobs)
    assert [r.status for r in result.rows] == ["improved", "improved", "seed_not_correct"]
    assert result.metrics()["s_self"] == jobs.metrics()["s_self"]
    got = _snapshot(tmp_path / "mem")
    assert got["episodes"] == expected["episodes"] == 3
    learned = {i for i, v in got["items"].items() if v[2]}   # shown in some episode
    assert learned, "the episodes retrieved nothing: the memory rule was not exercised"
    assert got == expected


def _ray_pids() -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if (d / "cmdline").read_bytes().replace(b"\0", b" ").strip().startswith(EPISODE_TITLE.encode()):
                    pids.append(int(d.name))
    return pids


def test_a_killed_worker_is_retried(local_ray, suite, settings):
    killed: list[int] = []
    stop = threading.Event()

    def kill_one() -> None:   # the first worker seen running an episode is killed, as a lost node would be
        while not stop.is_set() and not killed:
            for pid in _ray_pids():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.05)

    t = threading.Thread(target=kill_one)
    t.start()
    try:
        result = run_suite(suite, settings, _agent(ray=True))
    finally:
        stop.set()
        t.join()
    assert killed, "no worker was seen running an episode"
    assert [r.status for r in result.rows] == ["improved", "improved", "seed_not_correct"]


def test_a_hung_task_is_recorded_as_timeout(local_ray, settings, tmp_path):
    hung = tmp_path / "suite" / "hung_add"
    shutil.copytree(EXAMPLES / "vadd_naive", hung)
    ref = hung / "reference.py"   # its inputs never come (well within plan_timeout_s)
    ref.write_text(ref.read_text() + "\n\n_groups = get_input_groups\n\n\ndef get_input_groups():\n"
                   "    import time\n    time.sleep(90)\n    return _groups()\n")
    t0 = time.monotonic()
    result = run_suite(hung.parent, settings.model_copy(update={"plan_timeout_s": 100.0}),
                       _agent(ray=True, task_timeout_s=15.0, max_retries=0))
    [row] = result.rows
    assert row.status == "timeout" and "task_timeout_s" in row.reason and row.wall_s >= 15.0
    assert time.monotonic() - t0 < 60


def _bench(argv: list[str], eval_settings: EvalSettings, memory: MemorySettings) -> int:
    parser = argparse.ArgumentParser(prog="sage-npu")
    add_bench_parser(parser.add_subparsers(dest="command"), _global_flags())
    return run_bench(eval_settings, memory, _agent(), parser.parse_args(["bench", *argv]))


def test_an_interrupted_bench_resumes_without_redoing_tasks(two_jobs, suite, settings, tmp_path, monkeypatch):
    from sage_npu.agent import bench_cli

    out, db = tmp_path / "out" / "results.json", tmp_path / "mem"
    row = bench_cli.Progress.row

    def interrupt_after_first(self, r, done, total):
        row(self, r, done, total)
        raise KeyboardInterrupt

    monkeypatch.setattr(bench_cli.Progress, "row", interrupt_after_first)
    with contextlib.redirect_stdout(io.StringIO()):
        assert _bench([str(suite), "--out", str(out)], settings, _memory(db)) == 130
    partial = json.loads(out.read_text())
    assert partial["run"]["complete"] is False and "resume" in partial["run"]["stopped"]
    [first] = partial["tasks"]
    monkeypatch.setattr(bench_cli.Progress, "row", row)

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert _bench([str(suite), "--out", str(out)], settings, _memory(db)) == 0
    data = json.loads(out.read_text())
    assert data["run"]["complete"] is True and data["run"]["id"] == partial["run"]["id"]
    rows = {r["name"]: r for r in data["tasks"]}
    assert rows[first["name"]] == first          # journaled, not run again (same wall time, same episode)
    assert len(rows) == 3 and "[3/3]" in buf.getvalue()
    done = [e for e in read_entries(journal_path(out)) if e.kind == "task"]
    assert len(done) == 3                        # each task ran once over both runs
    assert _snapshot(db) == two_jobs[1]          # the same memory as a run that was never interrupted


def test_the_root_wires_ray_wave_and_timeout_into_settings():
    parser = build_parser()
    args = parser.parse_args(["bench", "suite", "--ray", "--wave", "4", "--timeout", "30"])
    assert _overrides(args)["agent"]["bench"] == {"ray": True, "ray_address": None, "wave": 4, "task_timeout_s": 30.0}
    args = parser.parse_args(["bench", "suite", "--ray", "127.0.0.1:6379"])
    assert _overrides(args)["agent"]["bench"]["ray_address"] == "127.0.0.1:6379"
    assert "agent" not in _overrides(parser.parse_args(["bench", "suite"]))
    assert "agent" not in _overrides(parser.parse_args(["run", "x.asc", "--timeout", "3"]))
