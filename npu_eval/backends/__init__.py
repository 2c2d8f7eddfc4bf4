"""The backend seam: what the pipeline needs from whatever builds and runs a kernel.

A backend is one module here, `npu_eval/backends/<name>.py`, exposing `open_backend(settings,
scratch) -> Backend`. `EvalSettings.backend` names it; nothing else in the pipeline changes
when one is added. Today there is `sim` (the CPU emulator). `ascend` (CANN's bisheng compiler
and an NPU) is not built yet: asking for it gives `unavailable()`'s reason, which evaluate()
turns into a harness_error report and the CLI into exit code 2.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sage_npu.npu_eval.build import PathMap
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.launch_plan import LaunchPlan, TrialPlan
from sage_npu.npu_eval.report import Diagnostic, Status, Timing
from sage_npu.npu_eval.run import TrialRun
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import Entry
from sage_npu.npu_eval.task import Task
from sage_npu.npu_eval.trace import Trace

# Why a backend EvalSettings.backend may name has no module yet.
_MISSING = {
    "ascend": "the ascend backend is not available: it is not built yet (it needs CANN's bisheng compiler "
              "and torch_npu, and an NPU). Use --backend sim, the CPU emulator.",
}


@dataclass(frozen=True)
class Binary:
    """A built kernel with its harness, ready to run every trial of one plan."""

    path: Path
    chip: ChipProfile             # the chip it was built for (its UB size binds the run)
    seconds: float
    cached: bool
    paths: PathMap = field(default_factory=PathMap)  # the neutral names it reports the task's files by


@dataclass(frozen=True)
class BuildFailed:
    """The kernel (or its harness) did not build: the findings, on the user's lines."""

    status: Status                # compile_error, or harness_error when the launch and entry disagree
    diagnostics: list[Diagnostic]
    seconds: float = 0.0


@dataclass(frozen=True)
class Measured:
    """A trial's time: the cost model's estimate on `sim` (with the trace it read), a device
    measurement elsewhere (no trace)."""

    timing: Timing | None
    trace: Trace | None = None


class Backend(Protocol):
    """Builds a kernel for a plan, runs one trial of it, and times a run."""

    name: str

    def prepare(self, task: Task, chip: ChipProfile) -> None:
        """Start, in the background, what build() will likely need for `task` on `chip` (the plan
        runs meanwhile); returns at once. build() must not depend on it having finished."""
        ...

    def build(self, task: Task, entry: Entry, plan: LaunchPlan, chip: ChipProfile) -> Binary | BuildFailed:
        """Build the harness for `entry` and the plan's signature (one binary serves every trial)."""
        ...

    def run(self, binary: Binary, trial: TrialPlan, index: int, names: list[str], trace: bool) -> TrialRun:
        """Run one trial; `names` are the entry's parameter names (for messages), `trace` asks
        for what measure() needs."""
        ...

    def measure(self, run: TrialRun, trial: TrialPlan, chip: ChipProfile, diags: dict[tuple, Diagnostic],
                trace_out: Path | None) -> Measured:
        """The trial's time; findings the timing reveals (missing-sync) are added to `diags`."""
        ...


def unavailable(name: str) -> str | None:
    """Why the backend `name` cannot run here, or None when it can."""
    if name.isidentifier() and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return None
    return _MISSING.get(name, f"there is no backend named {name!r}")


def open_backend(settings: EvalSettings, scratch: Path) -> Backend:
    """The backend `settings.backend` names, for one evaluation in `scratch`. Check unavailable() first."""
    return importlib.import_module(f"{__name__}.{settings.backend}").open_backend(settings, scratch)
