"""An msopgen op project's host tiling, run on the CPU: the stage that stands in for host.py.

A custom-operator project (docs/task-format.md) has no host.py: its `op_host/<op>.cpp` defines
the operator (`OpDef`, `OP_ADD`) and a `TilingFunc(gert::TilingContext*)` that reads the input
shapes and sets blockDim, the tiling key, workspace sizes and the tiling bytes. Here that file is
compiled with the emulated CANN host headers (sim/include/register/op_def_registry.h) and the
driver sim/include/sage_sim/op_tiling_main.h, built and cached like any harness (build.py), and
run once in the sandbox for every trial of the plan (reference.py gave the shapes and dtypes).
Its answers complete each trial's launch: the kernel gets the inputs, the outputs, a workspace
buffer of the sizes summed and the tiling bytes as a uint8 GM buffer its GET_TILING_DATA reads,
as the struct REGISTER_TILING_DATA_CLASS named (SAGE_TILING_TYPE, its header SAGE_TILING_HEADER).

Whatever goes wrong in the user's files comes back as a `StageFailure` with one-line
diagnostics at the right file and line.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from sage_npu.npu_eval.build import BuildCache, build, compile_flags, default_cache_dir
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.launch_plan import ArgKind, DType, LaunchPlan, ModelAttr, TensorArg, TrialPlan
from sage_npu.npu_eval.op_candidate import source_line
from sage_npu.npu_eval.report import Diagnostic, Status, diagnostic
from sage_npu.npu_eval.sandbox import SandboxLimits, prepare_scratch, run_sandboxed
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import Entry

# ge::DataType's numbers (sim/include/graph/types.h) for the dtypes a plan carries.
GE_DTYPES: dict[DType, int] = {"float32": 0, "float16": 1, "int8": 2, "int32": 3, "uint8": 4, "int16": 6,
                               "int64": 9, "float64": 11, "bool": 12, "bfloat16": 27}
_GE_NAMES = {0: "DT_FLOAT", 1: "DT_FLOAT16", 2: "DT_INT8", 3: "DT_INT32", 4: "DT_UINT8", 6: "DT_INT16",
             9: "DT_INT64", 11: "DT_DOUBLE", 12: "DT_BOOL", 27: "DT_BF16"}
# The tiling buffer's capacity, TILING_CAPACITY in sage_sim/op_tiling_main.h (a test checks they agree).
TILING_CAPACITY = 64 * 1024
_WORKSPACE_LIMIT = 1 << 30  # a workspace larger than this is refused rather than allocated
_OPTIONAL, _DYNAMIC = 1, 3  # ops::OPTIONAL, ops::DYNAMIC
_DRIVER = "sage_sim/op_tiling_main.h"


class _Msg(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class OpParam(_Msg):
    name: str
    param: int
    value_depend: int = 0  # ops::Option: IGNORE (0) unless the tiling reads the input's values
    dtypes: list[int]


class TilingClass(_Msg):
    op: str
    type: str
    bytes: int


class OpAttr(_Msg):
    name: str
    param: int
    kind: int = 0  # gert::SageAttrValue::Kind
    has_value: bool


class OpDefinition(_Msg):
    """What the op_host file's OpDef declares (the driver's first line)."""

    op: str
    inputs: list[OpParam]
    outputs: list[OpParam]
    attrs: list[OpAttr]
    socs: list[str]
    tiling: bool  # OpDef's SetTiling or IMPL_OP_OPTILING(...).Tiling named a function
    infer_shape: bool = False  # SetInferShape or IMPL_OP(...).InferShape did
    classes: list[TilingClass]


class InferOutcome(_Msg):
    """One call of the infer-shape function: its status and the output shapes it set."""

    infer_status: int
    shapes: list[list[int]]


class TilingOutcome(_Msg):
    """One call of TilingFunc: what it returned and set."""

    status: int
    block_dim: int
    block_dim_set: bool
    key: int
    workspaces: list[int]
    data_size: int
    overflow: int  # the size of a struct SaveToBuffer could not fit (0: none)
    overflow_capacity: int  # the buffer size SaveToBuffer was given then
    bytes: str  # hex
    infer: InferOutcome | None = None  # the infer-shape call before it, when the op has one


@dataclass(frozen=True)
class OpTiling:
    """The op project's plan, complete: each trial with its blockDim, key, workspace and tiling."""

    plan: LaunchPlan


@dataclass(frozen=True)
class OpFailure:
    status: Status
    diagnostics: list[Diagnostic]


def _line_of(path: Path, pattern: str) -> int:
    """The first line of `path` matching `pattern` (1 when none does)."""
    try:
        for n, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if re.search(pattern, text):
                return n
    except OSError:
        pass
    return 1


def _registered_line(host: Path, registrars: str, context: str) -> int:
    """Where the function a registrar call names (`SetTiling(TilingFunc)`) is defined, else the call."""
    text = host.read_text(errors="replace")
    m = re.search(rf"(?:{registrars})\s*\(\s*([\w:]+)\s*[,)]", text)
    if m is None:
        return 1
    name = m.group(1).split("::")[-1]
    line = _line_of(host, rf"\b{re.escape(name)}\s*\(\s*(gert::)?{context}\b")
    return line if line > 1 else text[:m.start()].count("\n") + 1


def tiling_func_line(host: Path) -> int:
    """Where the tiling function (OpDef's SetTiling, or IMPL_OP_OPTILING's .Tiling) is defined."""
    return _registered_line(host, r"\bSetTiling|\.\s*Tiling", "TilingContext")


def infer_shape_line(host: Path) -> int:
    """Where the infer-shape function (SetInferShape, or IMPL_OP's .InferShape) is defined."""
    return _registered_line(host, r"\bSetInferShape|\.\s*InferShape", "InferShapeContext")


def _tiling_header(host: Path) -> Path | None:
    """The op_host header that defines the tiling struct (REGISTER_TILING_DATA_CLASS)."""
    found = [h for h in sorted(host.parent.glob("*.h")) if "BEGIN_TILING_DATA_DEF" in h.read_text(errors="replace")]
    registered = [h for h in found if "REGISTER_TILING_DATA_CLASS" in h.read_text(errors="replace")]
    return (registered or found or [None])[0]


def _driver_source(host: Path) -> str:
    return (f"// Generated by sage-npu: op_host's tiling on the CPU. Do not edit.\n"
            f"#include {json.dumps(str(host))}\n#include \"{_DRIVER}\"\n")


def _write_spec(plan: LaunchPlan, work: Path) -> Path:
    """The driver's input file, with a copy of every input tensor in `work` (the sandboxed driver
    reads a ValueDepend input's values there, and may not reach, or touch, the plan's files)."""
    if work.exists():
        shutil.rmtree(work)
    (work / "in").mkdir(parents=True)
    lines = [_attr_line(k, v) for k, v in plan.model_attrs.items() if re.fullmatch(r"\w+", k)]
    for i, trial in enumerate(plan.trials):
        ins = [a for a in trial.args if isinstance(a, TensorArg) and a.role == "in"]
        copies = [work / "in" / f"t{i}_{k}.bin" for k in range(len(ins))]
        for a, copy in zip(ins, copies, strict=True):
            shutil.copyfile(a.path, copy)
        lines += _trial_lines(trial, ins, copies)
    spec = work / "trials.txt"
    spec.write_text("\n".join(lines) + "\n")
    prepare_scratch(work)
    return spec


def _trial_lines(trial: TrialPlan, ins: list[TensorArg], copies: list[Path]) -> list[str]:
    """The driver's lines for a trial: each input's dtype, shape and file (a ValueDepend input's
    values are read from it), then each output's."""
    lines = [f"trial {len(ins)} {len(trial.outputs)}"]
    for a, copy in zip(ins, copies, strict=True):
        lines.append(" ".join(str(v) for v in (GE_DTYPES[a.dtype], len(a.shape), *a.shape, _hex(str(copy)))))
    for o in trial.outputs:
        lines.append(" ".join(str(v) for v in (GE_DTYPES[o.dtype], len(o.shape), *o.shape, "x")))
    return lines


def _hex(text: str) -> str:
    return "x" + text.encode().hex()


def _attr_line(name: str, value: ModelAttr) -> str:
    """The driver's line for one of the Model's attributes (op_tiling_main.h's set_attr)."""
    if isinstance(value, str):
        return f"attr {name} s {_hex(value)}"
    if isinstance(value, list):
        return " ".join([f"attr {name} l {len(value)}", *(repr(v) for v in value)])
    return f"attr {name} n {value!r}"


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def run_op_tiling(host: Path, user_files: set[str], plan: LaunchPlan, s: EvalSettings, chip: ChipProfile,
                  work: Path, entry: str) -> tuple[OpDefinition, list[TilingOutcome]] | OpFailure:
    """Build op_host's tiling with the driver and call it for every trial, in the sandbox."""
    func_line = tiling_func_line(host)
    flags = [*compile_flags(chip, "-O0", {}), "-iquote", str(host.parent)]
    built = build(_driver_source(host), flags, s.cxx, BuildCache(s.cache_dir or default_cache_dir()),
                  user_files, source_line(host, func_line), s.compile_timeout_s)
    if not built.ok or built.binary is None:
        return OpFailure("compile_error", [diagnostic(d.file, d.line, d.severity, d.code, d.message, d.column)
                                           for d in built.diagnostics])
    spec = _write_spec(plan, work)
    limits = SandboxLimits(timeout_s=s.run_timeout_s, memory_bytes=s.memory_limit_mb << 20)
    res = run_sandboxed([str(built.binary), str(spec), _pascal(entry)], work, limits, 1 << 20)

    def broken(why: str, line: int = func_line) -> OpFailure:
        return OpFailure("harness_error", [diagnostic(*source_line(host, line), "error", "host-error", why)])

    if res.timed_out:
        return broken(f"the tiling function ran past its {s.run_timeout_s:.0f} s limit")
    out = _read_driver(res.stdout.splitlines())
    if out.error is not None:
        attr = re.match(r"attribute '(\w+)'", out.error)
        return (broken(out.error, _line_of(host, rf'\bAttr\s*\(\s*"{attr.group(1)}"')) if attr else
                broken(out.error if out.definition else f"{host.name}: {out.error}"))
    if out.definition is None or len(out.outcomes) != len(plan.trials):
        tail = res.stderr.strip().splitlines()[-1:] or [f"exit {res.returncode}"]
        if out.definition is not None and out.definition.infer_shape and out.pending is None:
            return broken(f"the infer-shape function did not finish (trial {len(out.outcomes)}): {tail[0][:300]}",
                          infer_shape_line(host))
        return broken(f"the tiling function did not finish (trial {len(out.outcomes)}): {tail[0][:300]}")
    return out.definition, out.outcomes


class _DriverError(_Msg):
    error: str


@dataclass
class _DriverOutput:
    """The driver's lines, read: the definition, each finished trial, and how it stopped."""

    definition: OpDefinition | None = None
    outcomes: list[TilingOutcome] = field(default_factory=list)
    pending: InferOutcome | None = None  # an infer-shape call whose tiling call did not finish
    error: str | None = None


def _read_driver(lines: list[str]) -> _DriverOutput:
    out = _DriverOutput()
    for n, line in enumerate(lines):
        try:
            out.error = _DriverError.model_validate_json(line).error
            return out
        except ValidationError:
            pass
        try:
            if n == 0:
                out.definition = OpDefinition.model_validate_json(line)
            elif '"infer_status"' in line:
                out.pending = InferOutcome.model_validate_json(line)
            else:
                out.outcomes.append(TilingOutcome.model_validate_json(line).model_copy(update={"infer": out.pending}))
                out.pending = None
        except ValidationError:
            return out
    return out


def _weights_unused(definition: OpDefinition, trial: TrialPlan) -> int:
    """How many of the Model's weights (the plan passes them after the inputs) the OpDef does not
    take: all of them when it declares fewer inputs than the inputs and weights together."""
    given = sum(1 for a in trial.args if isinstance(a, TensorArg) and a.role == "in")
    return 0 if len(definition.inputs) >= given else given - len(trial.inputs_summary)


def _without_weights(trial: TrialPlan, drop: int) -> TrialPlan:
    if not drop:
        return trial
    n = len(trial.inputs_summary)
    return trial.model_copy(update={"args": [*trial.args[:n], *trial.args[n + drop:]],
                                    "outputs": [o.model_copy(update={"arg": o.arg - drop}) for o in trial.outputs]})


def _count_check(definition: OpDefinition, plan: LaunchPlan, host: Path, reference: str) -> str | None:
    trial = plan.first
    ins = [a for a in trial.args if isinstance(a, TensorArg) and a.role == "in"]
    required = sum(1 for p in definition.inputs if p.param != _OPTIONAL)
    if not required <= len(ins) <= len(definition.inputs):
        names = ", ".join(p.name for p in definition.inputs)
        weights = len(ins) - len(trial.inputs_summary)
        return (f"{definition.op} declares {len(definition.inputs)} inputs ({names}) but {Path(reference).name} "
                f"gives {len(trial.inputs_summary)} tensors" + (f" and its Model {weights} weights" if weights else ""))
    if len(definition.outputs) != len(trial.outputs):
        return (f"{definition.op} declares {len(definition.outputs)} outputs but the reference returns "
                f"{len(trial.outputs)}")
    for p, a in zip(definition.inputs, ins, strict=False):
        if p.dtypes and GE_DTYPES[a.dtype] not in p.dtypes:
            allowed = ", ".join(_GE_NAMES.get(d, str(d)) for d in p.dtypes)
            return f"input '{p.name}' takes {allowed} but reference.py gives {a.dtype}"
    return None


def _infer_problem(o: TilingOutcome, definition: OpDefinition, trial: TrialPlan) -> str | None:
    """How the infer-shape call's answer disagrees with reference.py's outputs (None: it agrees)."""
    if o.infer is None:
        return None
    if o.infer.infer_status != 0:
        return f"the infer-shape function returned {o.infer.infer_status:#x} (not ge::GRAPH_SUCCESS)"
    for k, (got, out) in enumerate(zip(o.infer.shapes, trial.outputs, strict=False)):
        if got != out.shape:
            name = definition.outputs[k].name if k < len(definition.outputs) else str(k)
            return f"the infer-shape function gives output '{name}' shape {got} but reference.py's is {out.shape}"
    return None


def _outcome_problem(o: TilingOutcome, cls: TilingClass | None) -> str | None:
    if o.status != 0:
        return f"TilingFunc returned {o.status:#x} (not ge::GRAPH_SUCCESS)"
    if not o.block_dim_set:
        return "TilingFunc set no blockDim: call context->SetBlockDim(n)"
    if not 1 <= o.block_dim <= 65535:
        return f"TilingFunc set blockDim {o.block_dim}: give 1 to 65535"
    if o.overflow:
        return (f"the tiling struct is {o.overflow} bytes, more than the tiling buffer's {o.overflow_capacity} "
                "(SaveToBuffer did not copy it)")
    if o.data_size > TILING_CAPACITY:
        return f"SetDataSize({o.data_size}) is more than the tiling buffer's capacity {TILING_CAPACITY}"
    if cls is not None and o.data_size < cls.bytes:
        return (f"the tiling data size is {o.data_size} bytes but the kernel's GET_TILING_DATA reads "
                f"{cls.bytes} ({cls.type}): call context->GetRawTilingData()->SetDataSize(tiling.GetDataSize())")
    if sum(o.workspaces) > _WORKSPACE_LIMIT:
        return f"the workspace sizes add up to {sum(o.workspaces)} bytes, more than the {_WORKSPACE_LIMIT} allowed"
    return None


def _tiling_class(definition: OpDefinition) -> TilingClass | None:
    mine = [c for c in definition.classes if c.op == definition.op]
    return (mine or definition.classes or [None])[0]


def _write_buffers(o: TilingOutcome, folder: Path) -> tuple[TensorArg, TensorArg]:
    folder.mkdir(parents=True, exist_ok=True)
    ws, tiling = folder / "workspace.bin", folder / "tiling.bin"
    size = sum(o.workspaces)
    ws.write_bytes(b"\x5a" * size)  # as fresh device memory: garbage
    data = bytes.fromhex(o.bytes)
    tiling.write_bytes(data)
    return (TensorArg(role="work", path=str(ws), dtype="uint8", shape=[size], bytes=size),
            TensorArg(role="in", path=str(tiling), dtype="uint8", shape=[len(data)], bytes=len(data)))


def complete_plan(task_host: Path, kernel: Path, reference: str, user_files: set[str], plan: LaunchPlan,
                  entry: Entry, s: EvalSettings, chip: ChipProfile, work: Path) -> OpTiling | OpFailure:
    """The plan of an op project: reference.py's trials, with op_host's tiling for each."""
    ran = run_op_tiling(task_host, user_files, plan, s, chip, work, entry.name)
    if isinstance(ran, OpFailure):
        return ran
    definition, outcomes = ran
    func_line = tiling_func_line(task_host)

    def fail(message: str, file: Path = task_host, line: int = func_line) -> OpFailure:
        return OpFailure("harness_error", [diagnostic(*source_line(file, line), "error", "host-error", message)])

    if not definition.tiling:
        return fail(f"{definition.op} registers no tiling function: this->AICore().SetTiling(TilingFunc) or "
                    f"IMPL_OP_OPTILING({definition.op}).Tiling(TilingFunc)", line=_line_of(task_host, r"\bAICore\s*\("))
    drop = _weights_unused(definition, plan.first)
    kinds = plan.signature.kinds[drop:]  # every argument so far is a tensor: drop any `drop` of them
    plan = plan.model_copy(update={"trials": [_without_weights(t, drop) for t in plan.trials],
                                   "signature": plan.signature.model_copy(update={"kinds": kinds})})
    dynamic = [p.name for p in (*definition.inputs, *definition.outputs) if p.param == _DYNAMIC]
    if dynamic:
        return fail(f"'{dynamic[0]}' is ParamType(DYNAMIC), a list of tensors, which is not emulated yet: declare "
                    "each tensor as its own REQUIRED input", line=_line_of(task_host, rf'"{re.escape(dynamic[0])}"'))
    bad = _count_check(definition, plan, task_host, reference)
    if bad:
        return fail(bad, line=_line_of(task_host, r"\b(Input|Output)\s*\("))
    want = len(plan.first.args) + 2
    if len(entry.params) != want:
        return fail(f"{entry.name} takes {len(entry.params)} parameters; an op kernel takes its "
                    f"{len(plan.first.args)} inputs and outputs, then workspace and tiling ({want})",
                    kernel, entry.line)
    cls = _tiling_class(definition)
    launch = source_line(task_host, func_line)
    trials = []
    for i, (trial, o) in enumerate(zip(plan.trials, outcomes, strict=True)):
        wrong_shape = _infer_problem(o, definition, trial)
        if wrong_shape:
            return fail(f"{wrong_shape} (trial {i}, inputs {trial.inputs_summary})", line=infer_shape_line(task_host))
        problem = _outcome_problem(o, cls)
        if problem:
            return fail(f"{problem} (trial {i}, inputs {trial.inputs_summary})")
        ws, tiling = _write_buffers(o, work / f"trial_{i}")
        trials.append(trial.model_copy(update={
            "block_dim": o.block_dim, "tiling_key": o.key, "args": [*trial.args, ws, tiling],
            "launch_file": launch[0], "launch_line": launch[1]}))
    sig = plan.signature
    defines = dict(sig.defines)
    header = _tiling_header(task_host)
    if cls is not None and header is not None:
        defines.setdefault("SAGE_TILING_HEADER", json.dumps(str(header)))
        if not entry.tiling_type:  # else the kernel's REGISTER_TILING_DEFAULT names the struct
            defines.setdefault("SAGE_TILING_TYPE", cls.type)
    signature = sig.model_copy(update={"kernel": entry.qualified, "defines": defines,
                                       "kinds": [*sig.kinds, ArgKind(kind="tensor"), ArgKind(kind="tensor")]})
    return OpTiling(LaunchPlan(signature=signature, trials=trials, model_attrs=plan.model_attrs))
