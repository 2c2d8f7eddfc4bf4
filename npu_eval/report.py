"""The evaluation report: the one shape the CLI, the agent and the server consume.

The pydantic models are the source of truth (docs/report.md); `report_json_schema()` exports
the JSON Schema that tests/golden/report.schema.json pins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from sage_npu.npu_eval.codes import DiagnosticCode

SCHEMA_VERSION = 1

Status = Literal[
    "correct",
    "mismatch",
    "compile_error",
    "runtime_error",
    "timeout",
    "crash",
    "harness_error",
    "compiled",
    "estimated",  # an estimate-only run (eval --estimate-only): ran to its end, its values not checked
]
Severity = Literal["error", "warning", "info"]

class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Diagnostic(_Model):
    """A finding at a place in the user's files; positions are 1-based. `code` is one of the
    registry's (npu_eval/codes.py)."""

    file: str
    line: int = Field(ge=1)
    column: int = Field(default=1, ge=1)
    end_line: int = Field(ge=1)
    end_column: int = Field(ge=1)
    severity: Severity
    code: DiagnosticCode
    message: str
    block: int | None = None


class Mismatch(_Model):
    index: int
    got: float
    expected: float
    block: int | None = None
    line: int | None = None
    output: int = 0  # which entry of Launch.outputs
    trial: int = 0


class Correctness(_Model):
    trials: int
    passed: int
    max_abs_err: float
    mean_rel_err: float
    max_rel_err: float
    first_mismatch: Mismatch | None = None


class HotLine(_Model):
    file: str
    line: int
    us: float


# Where the estimated time goes (docs/profile.md): the op head; along the slowest core's busiest pipe,
# that pipe's work, its head, UB bank conflicts and the bandwidth the other cores take; the time that
# pipe waited on the others; and what the roofline bound adds.
TimeCauseName = Literal["op_head", "pipe_work", "pipe_heads", "bank_conflicts", "bandwidth_share", "waits",
                        "roofline"]


class TimeCause(_Model):
    cause: TimeCauseName
    pipe: str = ""  # the pipe a pipe_* cause, bank_conflicts or bandwidth_share is on
    us: float


class Timing(_Model):
    # True for the emulator's cost model, False for a device measurement (msprof): every surface
    # labels its figures through `labelled()` from this flag.
    estimated: bool = True
    estimated_us: float
    launch_overhead_us: float
    roofline_us: float
    bottleneck: str
    pipes: dict[str, float]
    hot_lines: list[HotLine] = []
    causes: list[TimeCause] = []  # parts of estimated_us by cause (estimates only)
    # The L2 cache (estimates only; docs/cost-model.md "L2 cache"): GM bytes the launch read, how many
    # of them the model found in L2, and the MTE2 time those hits saved on the slowest core.
    gm_read_bytes: int = Field(default=0, ge=0)
    l2_hit_bytes: int = Field(default=0, ge=0)
    l2_saved_us: float = Field(default=0.0, ge=0.0)
    # Whose pipes, causes, hot lines and L2 saving these are, when not the slowest core's: the core the
    # slowest one waits for (a MIX kernel's AIC serving its AIVs' Matmul calls), as "AIC 0" (estimates
    # only; docs/profile.md).
    profiled_core: str = ""

    @property
    def core_label(self) -> str:
        """The core the profile describes, as the surfaces print it."""
        return f"{self.profiled_core}, which the slowest core waits for" if self.profiled_core else "slowest core"


# The performance advisor's findings (npu_eval/advisor.py, docs/advisor.md); each code is also one
# of the registry's (npu_eval/codes.py), which the diagnostics that show them carry.
AdviceCode = Literal["perf-single-buffer", "perf-few-cores", "perf-small-tiles", "perf-scalar-loop",
                     "perf-unaligned-gm", "perf-fragmented-gm", "perf-bank-conflict", "perf-strong-barrier",
                     "perf-redundant-copy", "perf-slow-reduction"]
# A finding saving at least this share of the estimate shows as information, a smaller one as a hint.
HINT_BELOW_SHARE = 0.10


class AdviceFinding(_Model):
    """One finding: what to change (`change`), where (`file`, `line`, 1-based: the line a person
    edits, host.py's included) and what the cost model says it saves (`saving_us` of `before_us`,
    leaving `after_us`), re-scheduling the trace as the change would run it."""

    code: AdviceCode
    message: str
    file: str
    line: int = Field(ge=1)
    saving_us: float
    before_us: float
    after_us: float
    change: str
    # a CPU-model figure (True; on the device too: the findings come from the emulator's trace) or
    # re-measured on a device (False: nothing sets it yet; the editor's verification measures instead)
    estimated: bool = True

    @property
    def severity(self) -> Literal["info", "hint"]:
        return "hint" if self.saving_us < HINT_BELOW_SHARE * self.before_us else "info"


class Report(_Model):
    schema_version: Literal[1] = SCHEMA_VERSION
    task: str
    kernel: str
    backend: Literal["sim", "ascend"] = "sim"
    chip: str = "910B2"
    status: Status
    diagnostics: list[Diagnostic] = []
    correctness: Correctness | None = None
    timing: Timing | None = None
    advice: list[AdviceFinding] = []  # the advisor's findings, largest saving first (estimates only)
    stdout: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "correct"

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def timing_label(estimated: bool) -> str:
    """The one place that names where a time comes from: the CPU cost model's estimate, or a
    measurement on a device."""
    return "est. (CPU model)" if estimated else "measured"


def labelled(value: str, estimated: bool) -> str:
    """A time or speedup with its provenance: `est. 1.08 us (CPU model)` or `measured 1.08 us`."""
    return f"est. {value} (CPU model)" if estimated else f"measured {value}"


def _line_span(file: str, line: int, column: int = 1) -> tuple[int, int, int]:
    """(column, end_line, end_column) covering the statement's text on that line."""
    try:
        text = Path(file).read_text(errors="replace").splitlines()[line - 1]
    except (OSError, IndexError):
        return column, line, column + 1
    start = len(text) - len(text.lstrip()) + 1
    col = column if column > 1 else start
    return col, line, max(len(text.rstrip()) + 1, col + 1)


def diagnostic(file: str, line: int | None, severity: str, code: str, message: str, column: int = 1,
               block: int | None = None) -> Diagnostic:
    """A Diagnostic spanning the statement on `line` of `file` (line 1 when unknown). `severity`
    and `code` are validated by the model (the harness's TSV files carry them as text)."""
    line = max(int(line or 1), 1)
    col, end_line, end_col = _line_span(file, line, column)
    return Diagnostic(file=file, line=line, column=col, end_line=end_line, end_column=end_col,
                      severity=cast(Severity, severity), code=cast(DiagnosticCode, code), message=message, block=block)


def diagnostic_order(d: Diagnostic) -> tuple:
    """How a report lists its diagnostics: errors first, then by file and line."""
    return (0 if d.severity == "error" else 1, d.file, d.line)


def report_json_schema() -> dict:
    return Report.model_json_schema()


class Advice(_Model):
    """`sage-npu advise --json`: the evaluated task's findings, largest saving first."""

    schema_version: Literal[1] = SCHEMA_VERSION
    task: str
    kernel: str
    chip: str
    status: Status
    estimated: bool = True
    estimated_us: float | None = None
    findings: list[AdviceFinding] = []

    @classmethod
    def of(cls, report: Report) -> Advice:
        t = report.timing
        return cls(task=report.task, kernel=report.kernel, chip=report.chip, status=report.status,
                   estimated=t.estimated if t else True, estimated_us=t.estimated_us if t else None,
                   findings=report.advice)


def advice_json_schema() -> dict:
    return Advice.model_json_schema()
