"""The plan stage: run reference.py and host.py (in the plan worker, where torch lives) and
write each trial's input arrays, expected outputs and launch description.

The result is a `LaunchPlan` (npu_eval/launch_plan.py), sent to the parent as JSON so the
parent process never imports torch.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import inspect
import linecache
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import torch

from sage_npu.npu_eval.launch import Launch, Tiling
from sage_npu.npu_eval.launch_plan import (
    ArgKind,
    DType,
    LaunchArg,
    LaunchPlan,
    ModelAttr,
    Output,
    PlanAnswer,
    PlanFailure,
    PlanRequest,
    ScalarArg,
    Signature,
    TensorArg,
    TilingArg,
    TrialPlan,
)

# torch dtypes the harness can carry, by the name the report and the compare stage use.
DTYPES: dict[torch.dtype, DType] = {
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.bool: "bool",
}

# Factories whose result counts as a fresh buffer (docs/task-format.md: args tensors are the
# inputs themselves or fresh empty buffers).
_FACTORIES = ("empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
              "full_like", "empty_strided")


class PlanError(Exception):
    def __init__(self, code: Literal["host-error", "reference-error"], message: str, file: str | None = None,
                 line: int | None = None):
        super().__init__(message)
        self.code: Literal["host-error", "reference-error"] = code
        self.message, self.file, self.line = message, file, line

    def failure(self) -> PlanFailure:
        return PlanFailure(code=self.code, message=self.message, file=self.file, line=self.line)


def _user_frame(tb, files: set[str]) -> tuple[str | None, int | None]:
    """The innermost traceback frame in one of the user's files."""
    found = (None, None)
    for frame in traceback.extract_tb(tb):
        if str(Path(frame.filename).resolve()) in files:
            found = (frame.filename, frame.lineno)
    return found


@dataclass(frozen=True)
class UserSources:
    """reference.py's and host.py's text, read before the plan child gives up its rights (the
    unprivileged user may not reach the task folder: pytest's and /root's are private)."""

    reference: str
    host: str  # empty for an op project


def read_sources(req: PlanRequest) -> UserSources:
    return UserSources(Path(req.reference).read_text(encoding="utf-8", errors="replace"),
                       Path(req.host).read_text(encoding="utf-8", errors="replace") if req.host else "")


def answer(req: PlanRequest, sources: UserSources) -> PlanAnswer:
    """The plan, or the failure at the user's line: whatever the user's code does, an answer."""
    try:
        return PlanAnswer(ok=plan(req, sources))
    except PlanError as e:
        return PlanAnswer(error=e.failure())
    except Exception as e:  # noqa: BLE001 - the plan process must answer, whatever the user's code does
        return PlanAnswer(error=PlanFailure(code="host-error", message=f"{type(e).__name__}: {e}"))


def timeout_failure(frame: FrameType | None, req: PlanRequest, seconds: float) -> PlanFailure:
    """The time limit ran out while `frame` ran: the failure at the innermost line of
    reference.py or host.py on its stack, so a slow reference.py is reported on reference.py."""
    ref = str(Path(req.reference).resolve())
    host = str(Path(req.host).resolve()) if req.host else ref
    while frame is not None and frame.f_code.co_filename not in (ref, host):
        frame = frame.f_back
    if frame is None:
        return PlanFailure(code="host-error", message=f"host.py and reference.py did not finish within {seconds:.0f} s")
    is_ref = frame.f_code.co_filename == ref
    name = "reference.py" if is_ref else "host.py"
    return PlanFailure(code="reference-error" if is_ref else "host-error", file=frame.f_code.co_filename,
                       line=frame.f_lineno, message=f"{name} did not finish within {seconds:.0f} s; it was here")


def _load_module(path: Path, name: str, source: str):
    """Run `source` as module `name` whose file is `path`: tracebacks name the user's lines."""
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    linecache.cache[str(path)] = (len(source), None, source.splitlines(keepends=True), str(path))
    sys.modules[name] = module
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - the user's code, confined
    return module


class _FreshBuffers:
    """Records tensors made by torch factories during launch(), with their version counter,
    so a buffer filled in by host code (a precomputed answer) is told from a fresh one."""

    def __init__(self) -> None:
        self.made: dict[int, tuple[torch.Tensor, int, bool]] = {}
        self._saved: dict[str, Any] = {}

    def __enter__(self):
        for name in _FACTORIES:
            original = getattr(torch, name)
            self._saved[name] = original

            def wrapped(*a, __orig=original, __empty=name.startswith("empty"), **k):
                t = __orig(*a, **k)
                self.made[id(t)] = (t, t._version, __empty)
                return t

            setattr(torch, name, wrapped)
        return self

    def __exit__(self, *exc):
        for name, original in self._saved.items():
            setattr(torch, name, original)

    def fresh(self, t: torch.Tensor) -> tuple[bool, bool]:
        """(is a fresh factory buffer untouched since, was it made by an empty* factory)."""
        entry = self.made.get(id(t))
        if entry is None or entry[0] is not t:
            return False, False
        return t._version == entry[1], entry[2]


def _as_tuple(out) -> tuple:
    if isinstance(out, torch.Tensor):
        return (out,)
    if isinstance(out, (list, tuple)):
        return tuple(out)
    raise TypeError(f"Model.forward returned {type(out).__name__}; expected a tensor or a tuple of tensors")


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _write(t: torch.Tensor, path: Path) -> None:
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        t.view(torch.int16).numpy().tofile(path)
    else:
        t.numpy().tofile(path)


def _poison(t: torch.Tensor) -> None:
    """Fill a torch.empty buffer the way a fresh device buffer looks: garbage, here NaN or
    0x5A bytes, so a kernel that skips part of its output cannot pass by luck."""
    with torch.no_grad():
        if t.dtype.is_floating_point:
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.view(torch.uint8).fill_(0x5A) if t.is_contiguous() else t.fill_(0x5A)


def plan(req: PlanRequest, sources: UserSources | None = None) -> LaunchPlan:
    """Run the reference and host code for every trial; write arrays under req.out_dir.
    `sources`: the two files' text, read earlier (default: read them now)."""
    sources = sources or read_sources(req)
    ref_path = Path(req.reference).resolve()
    host_path = Path(req.host).resolve() if req.host else ref_path
    files = {str(ref_path), str(host_path)}
    out = Path(req.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, req.task_root)
    try:
        ref, model, launch_fn = _load(ref_path, host_path if req.host else None, req.task_root, files, sources)
        wants_model = launch_fn is not None and "model" in inspect.signature(launch_fn).parameters
        n_groups = None
        result_trials: list[TrialPlan] = []
        signature = None
        t = 0
        # every input group is a trial of a checked plan; an estimate-only one runs the first alone
        while t < req.trials or (n_groups is not None and t < n_groups and req.check):
            torch.manual_seed(req.seed + t)
            inputs, expected, n_groups = _reference_trial(ref, model, t, files, shaped=not req.check)
            trial_dir = out / f"trial_{t}"
            trial_dir.mkdir(exist_ok=True)
            try:
                with _FreshBuffers() as fresh:
                    if launch_fn is None:
                        result = _op_launch(req.op_entry or "", inputs, expected, str(ref_path), model)
                    else:
                        result = launch_fn(*inputs, model=model) if wants_model else launch_fn(*inputs)
            except Exception as e:  # noqa: BLE001
                f, ln = _user_frame(e.__traceback__, files)
                raise PlanError("host-error", f"host.py launch() failed: {type(e).__name__}: {e}", f, ln) from e
            trial, sig = _describe(result, inputs, model, expected, fresh, trial_dir, host_path)
            if signature is None:
                signature = sig
            elif sig != signature:
                raise PlanError("host-error", "host.py launches a different kernel, argument kinds or tiling "
                                "fields in different trials; one build must serve every trial",
                                trial.launch_file, trial.launch_line)
            result_trials.append(trial)
            t += 1
        assert signature is not None  # trials >= 1
        attrs = {} if launch_fn is not None else _model_attrs(model)
        return LaunchPlan(signature=signature, trials=result_trials, model_attrs=attrs)
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(req.task_root)


# The longest string (UTF-8 bytes) and list attribute an op's tiling is given (op_tiling_main.h's read_hex and
# set_attr take these; a test checks they agree); a longer one is no op attribute.
MAX_ATTR_STRING = 4000
MAX_ATTR_LIST = 65536


def _model_attrs(model) -> dict[str, ModelAttr]:
    """The Model's own number, string and number-list attributes (`self.negative_slope = 0.01`,
    `self.reduction = "mean"`, `self.dims = (0, 2)`): an op's attribute values."""
    found: dict[str, ModelAttr] = {}
    for k, v in vars(model).items():
        if k.startswith("_") or k == "training":
            continue
        if isinstance(v, str) and len(v.encode()) <= MAX_ATTR_STRING:
            found[k] = v
        elif isinstance(v, (bool, int, float)):
            found[k] = float(v)
        elif (isinstance(v, (list, tuple)) and len(v) <= MAX_ATTR_LIST
              and all(isinstance(x, (bool, int, float)) for x in v)):
            found[k] = [float(x) for x in v]  # torch.Size is a tuple
    return found


def _op_launch(entry: str, inputs: list, expected: tuple, ref_file: str, model) -> Launch:
    """An op project's launch before its tiling: the input tensors, the Model's weights (an op
    may take them as inputs: LayerNorm's gamma and beta), then a fresh buffer per reference
    output, as the op's kernel takes them (op_project.py keeps the weights the OpDef declares and
    adds the workspace and the tiling bytes from op_host's TilingFunc)."""
    outs = [torch.empty_like(e, device="cpu") for e in expected]  # an estimate-only plan's are on meta
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    tensors += [w.detach() for w in (*model.parameters(), *model.buffers())]
    return Launch(kernel=entry, block_dim=1, args=[*tensors, *outs], outputs=outs, file=ref_file, line=1)


def _load(ref_path: Path, host_path: Path | None, task_root: str, files: set[str], sources: UserSources):
    """(reference module, its Model instance, host.py's launch function; None for an op project)."""
    try:
        ref = _load_module(ref_path, f"sage_reference_{abs(hash(task_root))}", sources.reference)
        model = ref.Model(*getattr(ref, "get_init_inputs", lambda: [])())
        model.eval()
    except Exception as e:  # noqa: BLE001 - the user's code can raise anything
        f, ln = _user_frame(e.__traceback__, files)
        raise PlanError("reference-error", f"reference.py failed: {type(e).__name__}: {e}", f, ln) from e
    if host_path is None:
        return ref, model, None
    try:
        host_mod = _load_module(host_path, f"sage_host_{abs(hash(task_root))}", sources.host)
        launch_fn = host_mod.launch
    except Exception as e:  # noqa: BLE001
        f, ln = _user_frame(e.__traceback__, files)
        raise PlanError("host-error", f"host.py failed to load: {type(e).__name__}: {e}", f, ln) from e
    return ref, model, launch_fn


def _reference_trial(ref, model, t: int, files: set[str], shaped: bool = False) -> tuple[list, tuple, int | None]:
    """Trial t's inputs, the reference's outputs on them, and the number of input groups (None
    without get_input_groups). `shaped`: the outputs only shaped, on torch's meta device, where the
    reference can (an estimate-only run checks nothing)."""
    groups = getattr(ref, "get_input_groups", None)
    n_groups = None
    try:
        if groups is not None:
            all_groups = list(groups())
            n_groups = len(all_groups)
            if not n_groups:
                raise ValueError("get_input_groups() returned no groups")
            inputs = list(all_groups[t % n_groups])
        else:
            inputs = list(ref.get_inputs())
        expected = (_shaped_outputs(model, inputs) if shaped else None) or _forward(model, inputs)
    except Exception as e:  # noqa: BLE001
        f, ln = _user_frame(e.__traceback__, files)
        raise PlanError("reference-error", f"reference.py failed: {type(e).__name__}: {e}", f, ln) from e
    return inputs, expected, n_groups


def _forward(model, inputs: list) -> tuple:
    with torch.no_grad():
        return _as_tuple(model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))


def _shaped_outputs(model, inputs: list) -> tuple | None:
    """The reference's outputs on torch's meta device (shapes and dtypes, nothing computed: a
    production-size matmul's reference takes as long as the estimate-only run), or None when the
    reference does not run there (an op without a meta kernel, a .item() on a value)."""
    try:
        meta = copy.deepcopy(model).to("meta")
        args = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            return _as_tuple(meta(*args))
    except Exception:  # noqa: BLE001 - any failure means: compute them for real
        return None


def _describe(result, inputs, model, expected, fresh: _FreshBuffers, trial_dir: Path, host_path: Path
              ) -> tuple[TrialPlan, Signature]:
    if not isinstance(result, Launch):
        raise PlanError("host-error", f"launch() returned {type(result).__name__}; return a Launch(...)",
                        str(host_path), None)
    file, line = result.file, result.line

    def bad(msg: str, ln: int | None = None) -> PlanError:
        return PlanError("host-error", msg, file, ln or line)

    if not isinstance(result.kernel, str) or not result.kernel.strip():
        raise bad("Launch(kernel=...) must name the kernel entry, e.g. kernel=\"add_custom\"")
    if not isinstance(result.block_dim, int) or not 1 <= result.block_dim <= 65535:
        raise bad(f"Launch(block_dim={result.block_dim!r}): give an int between 1 and 65535")
    key = result.tiling_key
    if key is not None and (isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < 2**64):
        raise bad(f"Launch(tiling_key={key!r}): give an int between 0 and 2**64 - 1 (the key TILING_KEY_IS tests)")
    input_tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    model_tensors = list(model.parameters()) + list(model.buffers())
    outputs = list(result.outputs)
    if len(outputs) != len(expected):
        raise bad(f"Launch(outputs=...) has {len(outputs)} tensors; the reference returns {len(expected)}")

    args: list[LaunchArg] = []
    kinds: list[ArgKind] = []
    for i, a in enumerate(result.args):
        if isinstance(a, Tiling):
            for k, v in a.fields.items():
                if not isinstance(v, (int, float, bool)):
                    raise PlanError("host-error", f"Tiling field {k}={v!r}: tiling fields take ints, floats "
                                    "or bools", a.file, a.line)
            args.append(TilingArg(type=a.type, fields={k: _scalar_text(v) for k, v in a.fields.items()},
                                  file=a.file, line=a.line))
            kinds.append(ArgKind(kind="tiling", type=a.type, fields=sorted(a.fields)))
        elif isinstance(a, torch.Tensor):
            args.append(_tensor_arg(i, a, input_tensors, model_tensors, outputs, fresh, trial_dir, bad))
            kinds.append(ArgKind(kind="tensor"))
        elif isinstance(a, (bool, int, float)):
            args.append(ScalarArg(value=_scalar_text(a)))
            kinds.append(ArgKind(kind="scalar"))
        else:
            raise bad(f"Launch argument {i} is a {type(a).__name__}; pass tensors, Tiling(...), ints or floats")

    out_args = []
    for k, (o, idx) in enumerate(zip(outputs, _output_indices(result, outputs, bad), strict=True)):
        exp = expected[k]
        if o.dtype != exp.dtype or o.numel() != exp.numel():
            raise bad(f"output {k} is {DTYPES.get(o.dtype, o.dtype)}{list(o.shape)} but the reference returns "
                      f"{DTYPES.get(exp.dtype, exp.dtype)}{list(exp.shape)}")
        path = trial_dir / f"expected_{k}.bin"
        if not exp.is_meta:
            _write(exp, path)
        out_args.append(Output(arg=idx, expected="" if exp.is_meta else str(path), dtype=DTYPES[exp.dtype],
                               shape=list(exp.shape)))
        args[idx] = args[idx].model_copy(update={"role": "out"})

    defines = {str(k): str(v) for k, v in (result.defines or {}).items()}
    trial = TrialPlan(block_dim=result.block_dim, args=args, outputs=out_args, tolerance=result.tolerance,
                      chip=result.chip, tiling_key=key, launch_file=file, launch_line=line,
                      inputs_summary=[list(x.shape) for x in input_tensors])
    return trial, Signature(kernel=result.kernel.strip(), kinds=kinds, defines=defines)


def _output_indices(result: Launch, outputs: list, bad) -> list[int]:
    """Where each output is among Launch.args (the kernel must write it, so it must be one)."""
    at = []
    for k, o in enumerate(outputs):
        idx = next((i for i, a in enumerate(result.args) if a is o), None)
        if idx is None:
            raise bad(f"output {k} is not one of Launch.args: the kernel must write it, so pass it as an argument")
        at.append(idx)
    return at


def _scalar_text(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def _tensor_arg(i, a, input_tensors, model_tensors, outputs, fresh, trial_dir: Path, bad) -> TensorArg:
    if a.dtype not in DTYPES:
        raise bad(f"Launch argument {i} has dtype {a.dtype}, which the harness does not carry")
    if a.device.type != "cpu":
        raise bad(f"Launch argument {i} lives on {a.device}; keep host.py tensors on the CPU")
    is_input = any(a is x or _same_memory(a, x) for x in input_tensors)
    is_model = any(a is x or _same_memory(a, x) for x in model_tensors)
    is_fresh, made_empty = fresh.fresh(a)
    if not (is_input or is_model or is_fresh):
        raise bad(f"Launch argument {i} is a tensor host.py computed; pass the inputs themselves, the model's "
                  "weights, or fresh buffers (torch.empty/zeros/full...): the kernel must do the computing")
    if is_fresh and made_empty:
        _poison(a)
    path = trial_dir / f"arg_{i}.bin"
    _write(a, path)
    is_output = any(a is o for o in outputs)
    return TensorArg(role="in" if (is_input or is_model) and not is_output else "work", path=str(path),
                     dtype=DTYPES[a.dtype], shape=list(a.shape),
                     bytes=a.numel() * a.element_size())
