"""Reading what `msprof op` and `msprof op simulator` write (docs/device.md names the pages).

`msprof op --output=DIR app` leaves `DIR/OPPROF_{timestamp}_XXX/` with `OpBasicInfo.csv` (one
row per kernel: `Op Name`, `Task Duration(us)`, `Block Dim`, `Current Freq`, ...) and, with
`--aic-metrics=PipeUtilization`, `PipeUtilization.csv` (one row per block: `aiv_vec_ratio`,
`aiv_mte2_ratio`, `aiv_time(us)`, ..., the `aic_*` columns on a cube core); several kernels put
them one folder down, `OPPROF_*/[deviceN/]OpName/N/`, with a time suffix on each name. The
simulator writes `OPPROF_*/simulator/core*.veccore*/core*.veccore*_code_exe.csv` with a `code`
(`file:line`), `cycles` and `running_time(us)` per source line.

Columns are found by name, case-insensitively, with `μs` read as `us` and spaces ignored: CANN
versions spell them differently (`Task Duration(us)` / `Task Duration(μs)`, `Device Id` /
`Device ID`). Nothing here runs msprof.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.cost_model import LATENCY_BOUND_BELOW
from sage_npu.npu_eval.report import HotLine, Timing

# PipeUtilization's ratio columns -> the report's pipe names (the emulator's: S, V, MTE1-3, M, FIX).
PIPE_COLUMNS = {"aiv_vec_ratio": "V", "aiv_scalar_ratio": "S", "aiv_mte2_ratio": "MTE2", "aiv_mte3_ratio": "MTE3",
                "aic_mac_ratio": "M", "aic_cube_ratio": "M", "aic_scalar_ratio": "S", "aic_mte1_ratio": "MTE1",
                "aic_mte2_ratio": "MTE2", "aic_fixpipe_ratio": "FIX"}


class ProfileError(ValueError):
    """msprof left no file to read, or one without the columns it documents."""


def _key(name: str) -> str:
    return re.sub(r"\s+", "", name.replace("μ", "u").replace("µ", "u")).lower()


def read_rows(path: Path) -> list[dict[str, str]]:
    """A CSV's rows keyed by normalised column name (`taskduration(us)`, `aiv_vec_ratio`)."""
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as e:
        raise ProfileError(f"cannot read {path}: {e.strerror}") from e
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if not header:
        raise ProfileError(f"{path} is empty")
    keys = [_key(h) for h in header]
    return [dict(zip(keys, (c.strip() for c in row), strict=False)) for row in reader if any(c.strip() for c in row)]


def number(row: dict[str, str], column: str) -> float | None:
    """A cell as a number; None when the column is absent or says N/A."""
    try:
        return float(row.get(_key(column), ""))
    except ValueError:
        return None


def latest_opprof(out_dir: Path) -> Path:
    """The newest `OPPROF_*` folder msprof made under `out_dir` (or `out_dir` itself, if it is one)."""
    if out_dir.name.startswith("OPPROF_") and out_dir.is_dir():
        return out_dir
    found = sorted((p for p in out_dir.glob("OPPROF_*") if p.is_dir()), key=lambda p: p.name)
    if not found:
        raise ProfileError(f"msprof left no OPPROF_* folder in {out_dir}")
    return found[-1]


def _csv(folder: Path, stem: str) -> Path | None:
    """`stem.csv`, or `stem_<time>.csv`, at the top of `folder` or in its per-operator folders."""
    for pattern in (f"{stem}.csv", f"{stem}_*.csv", f"**/{stem}.csv", f"**/{stem}_*.csv"):
        hits = sorted(folder.glob(pattern))
        if hits:
            return hits[-1]
    return None


@dataclass(frozen=True)
class Measurement:
    """One kernel's msprof op figures."""

    op: str
    duration_us: float
    block_dim: int
    pipes: dict[str, float]        # the slowest block's busy share per pipe
    freq_mhz: float | None = None


def _op_row(rows: list[dict[str, str]], kernel: str | None) -> dict[str, str]:
    if kernel:
        named = [r for r in rows if kernel in r.get("opname", "") or kernel in r.get("optype", "")]
        rows = named or rows
    return rows[-1]


def read_opprof(folder: Path, kernel: str | None = None) -> Measurement:
    """The kernel's duration, block dim and pipes from an `OPPROF_*` folder (the last row naming
    `kernel`, when given)."""
    basic = _csv(folder, "OpBasicInfo")
    if basic is None:
        raise ProfileError(f"{folder} has no OpBasicInfo.csv (was the kernel launched under msprof op?)")
    rows = read_rows(basic)
    if not rows:
        raise ProfileError(f"{basic} has no rows: msprof op saw no kernel launch")
    row = _op_row(rows, kernel)
    duration = number(row, "Task Duration(us)")
    if duration is None:
        raise ProfileError(f"{basic} has no Task Duration(us) column (columns: {', '.join(row)})")
    pipes: dict[str, float] = {}
    util = _csv(folder, "PipeUtilization")
    if util is not None:
        pipes = _slowest_block_pipes(read_rows(util))
    return Measurement(op=row.get("opname", ""), duration_us=duration, block_dim=int(number(row, "Block Dim") or 0),
                       pipes=pipes, freq_mhz=number(row, "Current Freq"))


def _slowest_block_pipes(rows: list[dict[str, str]]) -> dict[str, float]:
    """Each pipe's busy share on the block that ran longest (the emulator's pipes are the slowest
    core's too)."""
    if not rows:
        return {}

    def length(r: dict[str, str]) -> float:
        return max(number(r, "aiv_time(us)") or 0.0, number(r, "aic_time(us)") or 0.0)

    slowest = max(rows, key=length)
    pipes: dict[str, float] = {}
    for column, pipe in PIPE_COLUMNS.items():
        v = number(slowest, column)
        if v is not None:
            pipes[pipe] = round(max(pipes.get(pipe, 0.0), min(1.0, max(0.0, v))), 4)
    return dict(sorted(pipes.items()))


def bottleneck(pipes: dict[str, float]) -> str:
    """The busiest pipe when it is busy at least half the time, else `latency` (the cost model's rule)."""
    if not pipes:
        return "none"
    busiest = max(pipes, key=lambda p: pipes[p])
    return busiest if pipes[busiest] >= LATENCY_BOUND_BELOW else "latency"


def code_lines(folder: Path, top: int = 5) -> list[HotLine]:
    """`msprof op simulator`'s per-line time of the slowest core: the `top` lines by time."""
    per_core: dict[str, dict[tuple[str, int], float]] = {}
    for f in sorted(folder.glob("**/core*_code_exe*.csv")):
        lines: dict[tuple[str, int], float] = {}
        for r in read_rows(f):
            file, _, line = r.get("code", "").rpartition(":")
            us = number(r, "running_time(us)")
            if file and line.isdigit() and us is not None:
                lines[(file, int(line))] = lines.get((file, int(line)), 0.0) + us
        per_core[f.name] = lines
    if not per_core:
        return []
    slowest = max(per_core.values(), key=lambda d: sum(d.values()))
    hot = sorted(slowest.items(), key=lambda kv: -kv[1])[:top]
    return [HotLine(file=file, line=line, us=round(us, 4)) for (file, line), us in hot]


def timing(m: Measurement, roofline_us: float, hot_lines: list[HotLine] | None = None) -> Timing:
    """The report's timing from a measurement: `estimated` false, the launch already inside
    msprof's Task Duration."""
    return Timing(estimated=False, estimated_us=round(m.duration_us, 4), launch_overhead_us=0.0,
                  roofline_us=round(roofline_us, 4), bottleneck=bottleneck(m.pipes), pipes=m.pipes,
                  hot_lines=hot_lines or [])
