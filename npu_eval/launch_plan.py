"""The launch plan: what the plan stage (host.py and reference.py, run in the plan worker)
hands the rest of the pipeline, and the worker's request and answer around it.

The worker builds these models and sends them as JSON over its pipe; the parent validates
the answer once, where it arrives (`plan_client`), so a malformed answer is a clear error
there and every later stage reads typed attributes. The models are frozen: a stage that
needs more (the entry's parameter names, say) passes it beside the plan.

No torch here: the parent process imports this module.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Element types the harness carries, by the name the report and the compare stage use.
DType = Literal["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]
# An op attribute's value as the reference Model holds it: a number (bool 0/1), a string, a list of numbers.
ModelAttr = float | str | list[float]


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TensorArg(_Plan):
    """A tensor argument: a GM buffer the harness loads from `path` before the launch."""

    kind: Literal["tensor"] = "tensor"
    role: Literal["in", "out", "work"] = Field(
        description="in: an input or model weight; out: compared with the reference; work: a scratch buffer")
    path: str = Field(description="the raw array file the plan stage wrote")
    dtype: DType
    shape: list[int]
    bytes: int = Field(ge=0, description="size of the buffer in bytes")


class ScalarArg(_Plan):
    """An int, float or bool argument, as the C++ literal text the manifest carries."""

    kind: Literal["scalar"] = "scalar"
    value: str


class TilingArg(_Plan):
    """A `Tiling(...)` struct: fields set by name, as literal text, at the host.py line that made it."""

    kind: Literal["tiling"] = "tiling"
    type: str | None = Field(None, description="the struct type, when host.py named it")
    fields: dict[str, str]
    file: str | None = None
    line: int | None = None


LaunchArg = Annotated[TensorArg | ScalarArg | TilingArg, Field(discriminator="kind")]


class Output(_Plan):
    """One reference output: which argument the kernel writes it to, and the expected array."""

    arg: int = Field(ge=0, description="index into TrialPlan.args")
    expected: str = Field(description="the raw array file of the reference's output; empty when the plan "
                          "checks nothing (PlanRequest.check)")
    dtype: DType
    shape: list[int]


class ArgKind(_Plan):
    """The build-relevant shape of one argument: what must agree between trials."""

    kind: Literal["tensor", "scalar", "tiling"]
    type: str | None = None          # tiling: the struct type
    fields: list[str] = []           # tiling: the field names, sorted


class Signature(_Plan):
    """What the build depends on: the same for every trial, so one binary serves them all."""

    kernel: str = Field(description="the entry as host.py named it; may carry template arguments")
    kinds: list[ArgKind]
    defines: dict[str, str] = Field(description="Launch(defines=...): macros for the kernel build")


class TrialPlan(_Plan):
    """One trial's launch: `kernel<<<block_dim>>>(*args)` on that trial's inputs."""

    block_dim: int = Field(ge=1, le=65535)
    args: list[LaunchArg]
    outputs: list[Output]
    tolerance: float | None = Field(None, description="Launch(tolerance=...): overrides the dtype's threshold")
    chip: str | None = Field(None, description="Launch(chip=...): overrides the settings' chip")
    tiling_key: int | None = Field(None, ge=0, lt=2**64,
                                   description="Launch(tiling_key=...): what the kernel's TILING_KEY_IS tests")
    launch_file: str = Field(description="where host.py made the Launch")
    launch_line: int
    inputs_summary: list[list[int]] = Field([], description="the shapes of the trial's input tensors")

    @property
    def tensors(self) -> list[TensorArg]:
        return [a for a in self.args if isinstance(a, TensorArg)]


class LaunchPlan(_Plan):
    """Every trial's launch and the signature they share: the plan stage's result."""

    signature: Signature
    trials: list[TrialPlan] = Field(min_length=1)
    model_attrs: dict[str, ModelAttr] = Field(
        default_factory=dict, description="an op project's reference Model's number (bools as 0/1), string and "
        "number-list attributes: the values of the OpDef attributes of the same names")

    @property
    def first(self) -> TrialPlan:
        """Trial 0: its arguments generate the harness, its trace is estimated."""
        return self.trials[0]


class PlanRequest(_Plan):
    """What the parent asks the plan worker: run this task's reference and host code."""

    task_root: str
    reference: str
    host: str | None = Field(description="host.py; None for an op project, whose tiling comes later from op_host")
    op_entry: str | None = Field(None, description="an op project's kernel entry: the launch passes the inputs, "
                                 "then fresh outputs (npu_eval/op_project.py adds the workspace and tiling)")
    out_dir: str = Field(description="where the worker writes the trials' arrays")
    seed: int
    trials: int = Field(ge=1)
    check: bool = Field(True, description="false: the reference's outputs are only shaped (torch's meta device), "
                        "nothing computed or written: an estimate-only run checks nothing")
    timeout_s: float = Field(120.0, gt=0, description="host.py's and reference.py's time limit")


class PlanFailure(_Plan):
    """host.py or reference.py failed: a diagnostic at the user's line, when one is known."""

    code: Literal["host-error", "reference-error"]
    message: str
    file: str | None = None
    line: int | None = None


class PlanAnswer(_Plan):
    """The worker's answer to one request: exactly one of a plan or a failure."""

    ok: LaunchPlan | None = None
    error: PlanFailure | None = None
    notes: list[str] = Field(default_factory=list, description="confinement layers the platform refused for this plan")

    @model_validator(mode="after")
    def _one_of(self) -> PlanAnswer:
        if (self.ok is None) == (self.error is None):
            raise ValueError("the answer must hold exactly one of 'ok' and 'error'")
        return self

    def result(self) -> LaunchPlan | PlanFailure:
        return self.ok if self.ok is not None else self.error or PlanFailure(code="host-error", message="no answer")
