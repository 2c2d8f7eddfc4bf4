"""The backend seam: what the pipeline needs from whatever builds and runs a kernel.

A backend is one module here, `npu_eval/backends/<name>.py`, exposing `open_backend(settings,
scratch) -> Backend`. `EvalSettings.backend` names it; nothing else in the pipeline changes
when one is added. There are `sim` (the CPU emulator) and `ascend` (CANN's bisheng, msprof and
an NPU: ascend.py). `ascend` on a machine without them gives `unavailable()`'s reason, one line
naming what is missing, which evaluate() turns into a harness_error report and the CLI into exit
code 2. `auto` is no module: `concrete()` turns it into `ascend` when every part is found, else
`sim`, before anything runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from sage_npu.npu_eval.build import PathMap
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.launch_plan import LaunchPlan, TrialPlan
from sage_npu.npu_eval.report import Diagnostic, Status, Timing
from sage_npu.npu_eval.run import TrialRun
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import Entry
from sage_npu.npu_eval.task import Task
from sage_npu.npu_eval.trace import Trace

if TYPE_CHECKING:
    from sage_npu.npu_eval.backends.ascend_env import DeviceSetup

Concrete = Literal["sim", "ascend"]


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


_DETECTED: dict[tuple, DeviceSetup] = {}


def device_setup() -> DeviceSetup:
    """What the device path finds here (npu_eval/backends/ascend_env.py), looked up once per
    process and environment: detection runs `npu-smi info` on machines with CANN."""
    from sage_npu.npu_eval.backends.ascend_env import HOME_VARS, detect

    key = tuple(os.environ.get(v) for v in (*HOME_VARS, "PATH"))
    if key not in _DETECTED:
        _DETECTED[key] = detect()
    return _DETECTED[key]


def device_missing() -> str | None:
    """Why the device cannot be used here (one line), or None."""
    return device_setup().reason()


def unavailable(name: str) -> str | None:
    """Why the backend `name` cannot run here, or None when it can (`auto` always can)."""
    if name == "auto":
        return None
    if name == "ascend":
        return device_missing()
    if name.isidentifier() and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return None
    return f"there is no backend named {name!r}"


def resolve(name: str) -> tuple[Concrete, str | None]:
    """The backend `name` stands for here, and for `auto` on the emulator, why not the device."""
    if name != "auto":
        return ("ascend" if name == "ascend" else "sim"), None
    why = device_missing()
    return ("sim", why) if why else ("ascend", None)


def concrete(settings: EvalSettings) -> EvalSettings:
    """`settings` with `auto` replaced by the backend it stands for here (an estimate-only run's
    is the emulator: the estimate is the cost model's, and skipping values is the emulator's)."""
    if settings.backend != "auto":
        return settings
    return settings.model_copy(update={"backend": resolve("auto")[0] if settings.check else "sim"})


def estimate_only_refusal(settings: EvalSettings) -> str | None:
    """Why an estimate-only evaluation (`check` false) cannot run with these settings, or None."""
    if settings.check:
        return None
    if settings.backend == "ascend":
        return ("--estimate-only runs on the emulator (--backend sim): on a device every value is computed "
                "anyway, so evaluate there with the check")
    if not settings.estimate:
        return "--estimate-only without the estimate (estimate = false) has nothing to report"
    return None


def open_backend(settings: EvalSettings, scratch: Path) -> Backend:
    """The backend `settings.backend` names, for one evaluation in `scratch`. Check unavailable() first."""
    return importlib.import_module(f"{__name__}.{settings.backend}").open_backend(settings, scratch)
