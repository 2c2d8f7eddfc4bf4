"""`sage-npu bench`: offline episodes over a small suite built from the examples (two optimizable tasks,
one whose seed is wrong, one broken folder), its rows and metrics, the JSON output, and the same rows
when the tasks run in two worker processes that share one memory."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import statistics
from pathlib import Path

import pytest

from sage_npu.agent.bench import BenchResult, TaskRow, discover, format_table
from sage_npu.agent.bench_cli import add_bench_parser, run_bench
from sage_npu.agent.settings import AgentSettings
from sage_npu.cli import _global_flags
from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"


SINGLE_FILE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return {op}


def get_inputs():
    return [torch.randn(256)]
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    for name in ("vadd_naive", "sub_custom"):
        shutil.copytree(EXAMPLES / name, root / name)
    wrong = root / "wrong_sub"
    shutil.copytree(EXAMPLES / "sub_custom", wrong)
    kernel = wrong / "sub_custom.cpp"
    kernel.write_text(kernel.read_text().replace("AscendC::Sub(", "AscendC::Add("))
    (root / "half_done").mkdir()
    shutil.copy(EXAMPLES / "vadd_naive" / "reference.py", root / "half_done" / "reference.py")
    (root / "kernel_only").mkdir()   # a kernel with nothing to check it against: broken
    shutil.copy(EXAMPLES / "sub_custom" / "sub_custom.cpp", root / "kernel_only" / "sub_custom.cpp")
    (root / "notes").mkdir()  # not a task folder at all: skipped, not a row
    (root / "notes" / "README.txt").write_text("not a task")
    # a KernelBench single-file task, and an NPUKernelBench one in a level folder with its JSON sidecar
    (root / "3_Relu.py").write_text(SINGLE_FILE.format(op="torch.relu(x)"))
    (root / "level1").mkdir()
    (root / "level1" / "5_Neg.py").write_text(SINGLE_FILE.format(op="-x"))
    (root / "level1" / "5_Neg.json").write_text('{"inputs": [{"shape": [64]}]}\n')
    return root


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> EvalSettings:
    return EvalSettings(trials=2, cache_dir=tmp_path_factory.getbasetemp() / "bench-cache")


def _memory(path: Path) -> MemorySettings:
    return MemorySettings(db=path, embedder="hashing")  # the real MiniLM is tested in the memory tests


def _bench(argv: list[str], eval_settings: EvalSettings, memory: MemorySettings) -> int:
    parser = argparse.ArgumentParser(prog="sage-npu")
    add_bench_parser(parser.add_subparsers(dest="command"), _global_flags())
    return run_bench(eval_settings, memory, AgentSettings(), parser.parse_args(["bench", *argv]))


@pytest.fixture(scope="module")
def serial(suite, settings, tmp_path_factory):
    """One run with --jobs 1, recorded in a memory; its JSON output and stdout."""
    out = tmp_path_factory.mktemp("out") / "sub" / "results.json"
    db = tmp_path_factory.getbasetemp() / "bench-mem"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = _bench([str(suite), "--turns", "3", "--out", str(out)], settings, _memory(db))
    return rc, json.loads(out.read_text()), buf.getvalue(), db


def test_rows_metrics_and_json(serial, suite):
    rc, data, stdout, _ = serial
    assert rc == 0
    rows = {r["name"]: r for r in data["tasks"]}
    assert list(rows) == sorted(rows) == ["3_Relu", "5_Neg", "half_done", "kernel_only", "sub_custom", "vadd_naive",
                                          "wrong_sub"]

    vadd = rows["vadd_naive"]
    assert vadd["status"] == "improved" and vadd["correct"] and vadd["turns"] == 3
    assert vadd["best_us"] < vadd["seed_us"] and vadd["speedup"] == pytest.approx(vadd["seed_us"] / vadd["best_us"])
    assert vadd["wall_s"] > 0 and vadd["episode_id"] and vadd["applied"]
    sub = rows["sub_custom"]
    assert sub["correct"] and sub["status"] in ("improved", "no_improvement") and sub["speedup"] >= 1.0

    wrong = rows["wrong_sub"]  # a wrong seed is an unsolved task, not an error
    assert wrong["status"] == "seed_not_correct" and not wrong["correct"] and wrong["speedup"] is None
    assert wrong["seed_status"] == "mismatch" and "seed kernel is not correct (mismatch" in wrong["reason"]
    draft = rows["half_done"]   # a reference alone: a model would draft the kernel; offline it stays unsolved
    assert draft["status"] == "unsolved" and "SAGE_NPU_LLM_BASE_URL" in draft["reason"]
    broken = rows["kernel_only"]
    assert broken["status"] == "broken" and "missing reference.py" in broken["reason"]
    assert rows["3_Relu"]["status"] == rows["5_Neg"]["status"] == "unsolved"
    staged = Path(rows["5_Neg"]["path"])
    assert staged.parent.name == "level1" and (staged / "5_Neg.json").is_file() and suite not in staged.parents

    m = data["metrics"]
    assert m["tasks"] == 7 and m["solved"] == 2 and m["execution_rate"] == pytest.approx(2 / 7)
    assert m["s_self"] == pytest.approx(statistics.median([vadd["seed_us"] / vadd["best_us"],
                                                           sub["seed_us"] / sub["best_us"]]))
    assert m["fast_1_0"] is None and m["tokens"] == 0
    assert m["total_turns"] == vadd["turns"] + sub["turns"] + wrong["turns"]
    assert m["wall_s"] >= max(r["wall_s"] for r in data["tasks"])
    assert data["suite"] == str(suite) and data["turns"] == 3 and data["jobs"] == 1 and data["trials"] == 2
    assert data["timing_label"] == "est. (CPU model)" and data["schema_version"] == 1

    assert "[7/7]" in stdout and "Fast_1.0        n/a" in stdout and "execution rate  28.6% (2/7" in stdout
    assert f"S_self          {m['s_self']:.2f}x" in stdout
    assert "missing reference.py" in stdout and "results written to" in stdout


def test_episodes_are_recorded_in_the_memory(serial):
    db = serial[3]
    # three episodes ran (broken and unsolved tasks never start one); the wrong seed is recorded too
    assert ExperienceMemory.open(_memory(db), create=False).stats().episodes == 3


def test_two_jobs_give_the_same_rows_and_share_the_memory(serial, suite, settings, capsys):
    _, first, _, db = serial
    rc = _bench([str(suite), "--turns", "3", "--jobs", "2", "--json"], settings, _memory(db))
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["jobs"] == 2

    def key(d):
        return [(r["name"], r["status"], r["correct"], r["turns"], r["seed_us"], r["best_us"]) for r in d["tasks"]]

    assert key(data) == key(first)
    assert data["metrics"]["s_self"] == pytest.approx(first["metrics"]["s_self"])
    assert ExperienceMemory.open(_memory(db), create=False).stats().episodes == 6


def test_no_memory_configured_means_no_episodes(suite, settings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # where a default memory would go
    only = tmp_path / "one"
    only.mkdir()
    shutil.copytree(suite / "vadd_naive", only / "vadd_naive")
    assert _bench([str(only), "--turns", "1", "--json"], settings, MemorySettings()) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["memory"] is None and data["tasks"][0]["turns"] == 1
    assert not (tmp_path / "data").exists()


def test_usage_errors_exit_2(tmp_path, settings, capsys):
    assert _bench([str(tmp_path / "nope")], settings, MemorySettings()) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert _bench([str(tmp_path / "empty")], settings, MemorySettings()) == 2
    assert "no tasks in it" in capsys.readouterr().err
    assert _bench([str(tmp_path), "--jobs", "0"], settings, MemorySettings()) == 2
    assert "at least 1" in capsys.readouterr().err


def test_metrics_on_synthetic_rows():
    def row(name, speedup, correct=True, turns=2):
        return TaskRow(name, "/x/" + name, "improved" if correct else "seed_not_correct", correct=correct,
                       speedup=speedup, turns=turns, seed_us=1.0, best_us=1.0)

    rows = [row("a", 1.0), row("b", 3.0), row("c", 2.0), row("d", 5.0), row("e", None, correct=False, turns=1)]
    r = BenchResult("/x", "sim", "910B2", 3, 1, 2, None, rows, 1.5)
    m = r.metrics()
    assert m["s_self"] == 2.5 and m["execution_rate"] == pytest.approx(0.8) and m["total_turns"] == 9
    none = BenchResult("/x", "sim", "910B2", 3, 1, 2, None, [row("e", None, correct=False)], 0.1)
    assert none.metrics()["s_self"] is None and "S_self          n/a" in format_table(none)


def test_discover_skips_non_task_folders(suite):
    tasks, broken = discover(suite)
    assert [t.name for t in tasks] == ["3_Relu", "half_done", "5_Neg", "sub_custom", "vadd_naive", "wrong_sub"]
    assert [b.name for b in broken] == ["kernel_only"]


def test_discover_reads_multikernelbench_as_it_ships(tmp_path):
    """MultiKernelBench's reference/<category>/<name>.py files, its NPUKernelBench levels with their JSON
    cases beside them: each a staged task to draft, its category the staged folder's parent."""
    ref = tmp_path / "MultiKernelBench" / "reference"
    (ref / "activation").mkdir(parents=True)
    (ref / "activation" / "relu.py").write_text(SINGLE_FILE.format(op="torch.relu(x)"))
    (ref / "npukernelbench_level1").mkdir()
    (ref / "npukernelbench_level1" / "10_layer_norm.py").write_text(SINGLE_FILE.format(op="-x"))
    (ref / "npukernelbench_level1" / "10_layer_norm.json").write_text('{"inputs": [{"shape": [64]}]}\n')
    tasks, broken = discover(ref)
    assert [(t.parent.name, t.name) for t in tasks] == [("activation", "relu"),
                                                        ("npukernelbench_level1", "10_layer_norm")]
    assert not broken and (tasks[1] / "10_layer_norm.json").is_file() and (tasks[0] / "reference.py").is_file()


def test_compare_two_runs(tmp_path, settings, capsys):
    def row(name, speedup, status="improved"):
        return TaskRow(name, "/x/" + name, status, correct=speedup is not None, speedup=speedup, turns=2)

    a = BenchResult("/x", "sim", "910B2", 3, 1, 2, None, [row("add", 2.0), row("sub", None, "seed_not_correct")], 1.0)
    b = BenchResult("/x", "sim", "910B2", 3, 2, 2, None, [row("add", 3.0), row("sub", 1.5), row("mul", 1.2)], 1.0,
                    model="qwen", stopped="interrupted")
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(json.dumps(a.to_json()))
    fb.write_text(json.dumps(b.to_json()))
    assert _bench(["compare", str(fa), str(fb)], settings, MemorySettings()) == 0
    out = capsys.readouterr().out
    assert "B = " in out and "qwen" in out and "NOT COMPLETE" in out
    assert "execution rate    50.0% ->  100.0%  +50.0 pts" in out and "S_self            2.00x ->   1.50x  -0.50" in out
    assert any(line.split()[:3] == ["mul", "(absent)", "improved"] for line in out.splitlines())
    assert _bench(["compare", str(fa), str(fb), "--json"], settings, MemorySettings()) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["name"]: r["ratio"] for r in data["tasks"]}["add"] == pytest.approx(1.5)
    assert _bench(["compare", str(fa)], settings, MemorySettings()) == 2
    (tmp_path / "bad.json").write_text("{}")
    assert _bench(["compare", str(fa), str(tmp_path / "bad.json")], settings, MemorySettings()) == 2
    assert "not a sage-npu bench --out file" in capsys.readouterr().err


def test_several_models_get_a_run_and_a_memory_each(suite, settings, tmp_path, capsys):
    only = tmp_path / "one"
    only.mkdir()
    shutil.copytree(suite / "vadd_naive", only / "vadd_naive")
    out, db = tmp_path / "runs" / "r.json", tmp_path / "mem"
    argv = [str(only), "--turns", "1", "--out", str(out), "--model", "coder-a", "--model", "org/coder-b"]
    parser = argparse.ArgumentParser(prog="sage-npu")
    add_bench_parser(parser.add_subparsers(dest="command"), _global_flags())
    args = parser.parse_args(["bench", *argv])
    agent = AgentSettings.model_validate({"bench": {"models": args.model}})
    assert run_bench(settings, _memory(db), agent, args) == 0
    stdout = capsys.readouterr().out
    assert "== model coder-a" in stdout and "== model org/coder-b" in stdout
    assert sorted(p.name for p in out.parent.glob("*.json")) == ["r.coder-a.json", "r.org_coder-b.json"]
    for slug in ("coder-a", "org_coder-b"):
        assert ExperienceMemory.open(_memory(db / slug), create=False).stats().episodes == 1
