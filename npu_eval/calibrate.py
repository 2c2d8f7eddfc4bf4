"""`sage-npu calibrate`: fit the cost model's constants to measured kernel times.

Input: a CSV with a header and columns `task,measured_us` (device time of one launch of the
task's first trial, e.g. from msprof or a torch_npu profiler export, or the `msprof op` output
folder to read it from; `chip` optional), or the pairs `sage-npu calibrate --from-device` measures. Each
task is evaluated once to get its trace; then a few multiplicative factors on the cost table
(vector cycles, GM bandwidth, per-transfer setup, per-kernel heads, issue) are fitted by coordinate search
in log space to minimise the mean squared log error. The fitted table is saved as a user chip
profile, which later evaluations on that chip use.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.cost_model import estimate
from sage_npu.npu_eval.costs import CostTable, HeadLine, VecCost
from sage_npu.npu_eval.trace import Trace


class CalibrationError(ValueError):
    pass


@dataclass
class Measurement:
    task: Path
    measured_us: float


@dataclass
class Sample:
    trace: Trace
    block_dim: int
    measured_us: float
    name: str


def read_measurements(path: Path) -> list[Measurement]:
    if not Path(path).is_file():
        raise CalibrationError(f"{path}: no such measurements file (a CSV with the columns task,measured_us)")
    try:
        rows = list(csv.DictReader(Path(path).read_text().splitlines()))
    except OSError as e:
        raise CalibrationError(f"cannot read {path}: {e.strerror}") from e
    if not rows or not {"task", "measured_us"} <= set(rows[0]):
        raise CalibrationError(f"{path}: expected a header with the columns task,measured_us")
    out = []
    for i, row in enumerate(rows, 2):
        us = _measured_us(Path(path), i, row["measured_us"])
        if us <= 0:
            raise CalibrationError(f"{path}:{i}: measured_us must be positive")
        if not (row["task"] or "").strip():
            raise CalibrationError(f"{path}:{i}: the task column is empty")
        task = Path(row["task"])
        if not task.is_absolute():
            task = Path(path).resolve().parent / task
        if not task.exists():
            raise CalibrationError(f"{path}:{i}: task {row['task']!r}: no such task folder ({task}; a relative "
                                   "path is read from the CSV's folder)")
        out.append(Measurement(task, us))
    return out


def _measured_us(csv_path: Path, row: int, cell: str | None) -> float:
    """A measured_us cell: a number, or an `msprof op` output folder (an OPPROF_* folder or the
    --output folder holding it, relative to the CSV), whose OpBasicInfo.csv Task Duration it means."""
    try:
        return float(cell or "")
    except ValueError:
        pass
    folder = csv_path.resolve().parent / (cell or "").strip()
    if not (cell or "").strip() or not folder.is_dir():
        raise CalibrationError(f"{csv_path}:{row}: measured_us {cell!r} is neither a number nor an msprof op "
                               "output folder")
    from sage_npu.npu_eval.backends import msprof

    try:
        return msprof.read_opprof(msprof.latest_opprof(folder)).duration_us
    except msprof.ProfileError as e:
        raise CalibrationError(f"{csv_path}:{row}: {e}") from None


# The factors fitted: each scales fields of the cost table.
FACTORS: dict[str, Callable[[CostTable, float], object]] = {
    "vector": lambda t, f: _scale_vec(t, f),
    "bandwidth": lambda t, f: _scale_bandwidth(t, f),
    "setup": lambda t, f: _scale_setup(t, f),
    "latency": lambda t, f: _scale_heads(t, f),
    "issue": lambda t, f: setattr(t, "issue_cycles", t.issue_cycles * f),
}


def _scale_vec(t: CostTable, f: float) -> None:
    """Vector work: k and b of every API, and the vector pipe's head."""
    t.vec = {k: VecCost(k=v.k * f, b=v.b * f) for k, v in t.vec.items()}
    t.vec_head_cycles *= f


def _scale_bandwidth(t: CostTable, f: float) -> None:
    """The GM rates: a and b of every transfer (a + b / active cores), and the cube's chip-wide GM -> L1
    rates (the one-core cap on them scales with `load`)."""
    for name in ("load", "load_small", "store"):
        x = getattr(t, name)
        setattr(t, name, x.model_copy(update={"a": x.a * f, "b": x.b * f}))
    t.store_middle_bytes_per_cycle *= f
    if t.cube_load_hbm_gbps and t.cube_load_l2_gbps:
        t.cube_load_hbm_gbps *= f
        t.cube_load_l2_gbps *= f


def _scale_setup(t: CostTable, f: float) -> None:
    """The fixed cycles of every transfer (h)."""
    for name in ("load", "load_small", "store"):
        x = getattr(t, name)
        setattr(t, name, x.model_copy(update={"h": x.h * f}))


def _scale_heads(t: CostTable, f: float) -> None:
    """The per-kernel fixed costs: the MTE2 and MTE3 pipe heads, the op head, and hand-overs between pipes."""
    t.mte2_head = HeadLine(k=t.mte2_head.k * f, b=t.mte2_head.b * f)
    t.mte2_head_small = HeadLine(k=t.mte2_head_small.k * f, b=t.mte2_head_small.b * f)
    t.mte3_head_cycles *= f
    t.op_head_cycles *= f
    t.event_cycles *= f


def apply_factors(base: CostTable, factors: dict[str, float]) -> CostTable:
    t = base.model_copy(deep=True)
    for name, f in factors.items():
        FACTORS[name](t, f)
    return t


def loss(samples: list[Sample], chip: ChipProfile, table: CostTable) -> float:
    err = 0.0
    for s in samples:
        est = estimate(s.trace, chip, table, s.block_dim).estimated_us
        err += (math.log(est) - math.log(s.measured_us)) ** 2
    return err / len(samples)


def fit(samples: list[Sample], chip: ChipProfile, base: CostTable, rounds: int = 8) -> tuple[CostTable, dict, float]:
    """Coordinate search over log-factors; returns (table, factors, final loss)."""
    if not samples:
        raise CalibrationError("no measurements to fit")
    factors = {name: 1.0 for name in FACTORS}
    best = loss(samples, chip, base)
    step = math.log(4.0)
    for _ in range(rounds):
        for name in FACTORS:
            improved = True
            while improved:
                improved = False
                for direction in (1, -1):
                    trial = dict(factors)
                    trial[name] = factors[name] * math.exp(direction * step)
                    if not 1 / 64 <= trial[name] <= 64:
                        continue
                    val = loss(samples, chip, apply_factors(base, trial))
                    if val < best - 1e-12:
                        best, factors, improved = val, trial, True
                        break
        step /= 2
    table = apply_factors(base, factors)
    table.sources = {**base.sources, "calibrated": f"fitted to {len(samples)} measurements, factors "
                     + ", ".join(f"{k}={v:.3g}" for k, v in factors.items())}
    return table, factors, best


def user_profile_path(profile_dir: Path, chip: str) -> Path:
    return Path(profile_dir) / f"{chip}.costs.json"


def save_user_costs(profile_dir: Path, chip: str, table: CostTable) -> Path:
    path = user_profile_path(profile_dir, chip)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table.model_dump_json(indent=2))
    return path


def load_user_costs(profile_dir: Path | None, chip: str) -> CostTable | None:
    if profile_dir is None:
        return None
    path = user_profile_path(profile_dir, chip)
    if not path.is_file():
        return None
    try:
        return CostTable.model_validate(json.loads(path.read_text()))
    except (OSError, ValueError) as e:
        raise CalibrationError(f"the calibrated profile {path} is unreadable ({e}); recalibrate or delete it") from e
