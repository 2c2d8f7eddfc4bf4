"""The evaluation report: the one shape the CLI, the agent and the server consume.

The pydantic models are the source of truth (DESIGN section 4); `report_json_schema()` exports
the JSON Schema that tests/golden/report.schema.json pins.
"""

from __future__ import annotations

from typing import Literal

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


def report_json_schema() -> dict:
    return Report.model_json_schema()
