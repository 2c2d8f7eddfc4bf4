"""`sage-npu bench compare A.json B.json`: two runs' results (`--out` files) side by side (docs/bench.md).

The metrics (execution rate, Fast_1.0 where both have it, S_self) with B - A, what each run was (model,
code version, wave, seed, whether it is complete), and the per-task deltas: the status of each, the
speedup of each and its ratio, tasks only one run has.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError


class CompareError(Exception):
    """A file that is not a `sage-npu bench --out` document."""


class RowDoc(BaseModel):
    name: str
    path: str
    status: str
    correct: bool = False
    speedup: float | None = None
    turns: int = 0


class RunDoc(BaseModel):
    id: str = ""
    runner: str = ""
    wave: int = 0
    seed: int = 0
    complete: bool = True
    code_version: str = ""


class MetricsDoc(BaseModel):
    tasks: int
    solved: int
    execution_rate: float
    fast_1_0: float | None = None
    s_self: float | None = None


class BenchDoc(BaseModel):
    """The part of `BenchResult.to_json()` a comparison reads (older files have no `run` block)."""

    suite: str
    model: str = "offline"
    turns: int = 0
    run: RunDoc = RunDoc()
    tasks: list[RowDoc]
    metrics: MetricsDoc


def load(path: Path) -> BenchDoc:
    try:
        return BenchDoc.model_validate(json.loads(path.read_text()))
    except OSError as e:
        raise CompareError(f"cannot read {path}: {e.strerror}") from e
    except (ValueError, ValidationError) as e:
        raise CompareError(f"{path} is not a sage-npu bench --out file ({str(e).splitlines()[0]})") from e


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 100:.1f}%"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _delta(a: float | None, b: float | None, pct: bool) -> str:
    if a is None or b is None:
        return ""
    d = b - a
    return f"{d * 100:+.1f} pts" if pct else f"{d:+.2f}"


def compare_json(a: BenchDoc, b: BenchDoc) -> dict:
    """The comparison as data: metrics of both with deltas, and a row per task of either run."""
    ra, rb = {r.name: r for r in a.tasks}, {r.name: r for r in b.tasks}
    rows = []
    for name in sorted(ra.keys() | rb.keys()):
        x, y = ra.get(name), rb.get(name)
        sx, sy = (x.speedup if x else None), (y.speedup if y else None)
        rows.append({"name": name, "a": x.status if x else None, "b": y.status if y else None,
                     "a_speedup": sx, "b_speedup": sy, "ratio": sy / sx if sx and sy else None})
    metrics = {k: {"a": getattr(a.metrics, k), "b": getattr(b.metrics, k)}
               for k in ("execution_rate", "fast_1_0", "s_self", "solved", "tasks")}
    return {"a": {"model": a.model, **a.run.model_dump()}, "b": {"model": b.model, **b.run.model_dump()},
            "metrics": metrics, "tasks": rows}


def format_compare(a: BenchDoc, b: BenchDoc, names: tuple[str, str] = ("A", "B")) -> str:
    data = compare_json(a, b)
    lines = [f"{label} = {n}: {d.model}, {d.run.code_version or 'unknown version'}, {d.run.runner or 'process'}, "
             f"waves of {d.run.wave or '?'}, seed {d.run.seed}, {d.turns} turns"
             + ("" if d.run.complete else ", NOT COMPLETE")
             for label, n, d in zip("AB", names, (a, b), strict=True)]
    ma, mb = a.metrics, b.metrics
    lines += ["",
              f"execution rate  {_pct(ma.execution_rate):>7} -> {_pct(mb.execution_rate):>7}  "
              f"{_delta(ma.execution_rate, mb.execution_rate, True)}",
              f"Fast_1.0        {_pct(ma.fast_1_0):>7} -> {_pct(mb.fast_1_0):>7}  "
              f"{_delta(ma.fast_1_0, mb.fast_1_0, True)}",
              f"S_self          {_x(ma.s_self):>7} -> {_x(mb.s_self):>7}  {_delta(ma.s_self, mb.s_self, False)}",
              "", f"{'task':<24} {'A status':<17} {'B status':<17} {'A':>8} {'B':>8} {'B/A':>6}"]
    for r in data["tasks"]:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"{r['name'][:24]:<24} {r['a'] or '(absent)':<17} {r['b'] or '(absent)':<17} "
                     f"{_x(r['a_speedup']):>8} {_x(r['b_speedup']):>8} {ratio:>6}")
    return "\n".join(lines)
