"""The evaluation's stages, each a function with a result type (`ready_to_build` chains the
first four for every run of a task, an evaluation or a debug build; evaluate.py adds the rest):

check (the task can run: an entry, reference.py and host.py, host.py within its allow-list)
-> plan (host.py and reference.py in the plan worker: a `LaunchPlan`)
-> api check (no API the plan's chip lacks)
-> entry (the plan's kernel names one of the kernel's entries)
-> build (the backend: harness + kernel, cached) -> run + compare + estimate, per trial.

A stage that fails returns a `StageFailure` (a status and its diagnostics); evaluate.py turns
the first one into the Report. Nothing a user's files do escapes as an exception.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.analysis import analyze
from sage_npu.npu_eval.backends import Backend, Binary, Measured
from sage_npu.npu_eval.build import compile_flags, default_cache_dir, syntax_check
from sage_npu.npu_eval.chips import ChipProfile, UnknownChip, chip_profile
from sage_npu.npu_eval.compare import compare, itemsize, load_array
from sage_npu.npu_eval.host_rules import check_host_file
from sage_npu.npu_eval.host_split import kernel_part
from sage_npu.npu_eval.launch_plan import LaunchPlan, PlanFailure, PlanRequest, TrialPlan
from sage_npu.npu_eval.op_project import OpFailure, complete_plan
from sage_npu.npu_eval.plan_cache import PlanCache, plan_key
from sage_npu.npu_eval.plan_client import PlanWorker, PlanWorkerError
from sage_npu.npu_eval.report import Correctness, Diagnostic, Mismatch, Status, diagnostic, diagnostic_order
from sage_npu.npu_eval.run import Fault, TrialRun
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import Entry, find_entries, match_entry
from sage_npu.npu_eval.symbolize import definition_line
from sage_npu.npu_eval.task import Task


@dataclass(frozen=True)
class StageFailure:
    """Why the pipeline stopped (for a kernel alone, `compiled` once it compiles): the report's
    status and its findings."""

    status: Status
    diagnostics: list[Diagnostic]


@dataclass(frozen=True)
class Planned:
    plan: LaunchPlan
    seconds: float
    cached: bool = False  # reused from the plan cache: host.py and reference.py did not run


def check_task(task: Task, settings: EvalSettings) -> list[Entry] | StageFailure:
    """The kernel's entries, when the task can run; a task without reference.py or host.py is
    only compiled: a `compiled` report, or compile_error with the errors at their lines."""
    kernel = str(task.kernel)
    entries = find_entries(task.kernel.read_bytes())
    if not entries:
        return StageFailure("compile_error", [diagnostic(
            kernel, 1, "error", "compile-error",
            "no kernel entry: declare one as extern \"C\" __global__ __aicore__ void name(GM_ADDR ...)")])
    if not task.runnable:
        return _compile_only(task, entries[0], settings)
    if settings.host_allow_list and task.host is not None:
        bad = check_host_file(task.host)
        if bad:
            return StageFailure("harness_error", [
                diagnostic(str(task.host), v.line, "error", "host-error", v.message, v.column) for v in bad])
    return entries


def api_check(task: Task, chip: ChipProfile) -> StageFailure | None:
    """The kernel's calls of APIs the chip lacks (api-unsupported, from the APIs' asc-devkit doc
    pages): the chip's compiler would refuse them, so the kernel is not built; None when there is none."""
    lacking = analyze(task.kernel.read_bytes(), chip, codes=("api-unsupported",))
    if not lacking:
        return None
    return StageFailure("compile_error", [f.diagnostic(str(task.kernel)) for f in lacking])


def _compile_only(task: Task, entry: Entry, s: EvalSettings) -> StageFailure:
    kernel = str(task.kernel)
    lacking = api_check(task, chip_profile(s.chip))
    if lacking is not None:
        return lacking
    missing = " and ".join(n for n, p in (("reference.py", task.reference), ("host.py", task.host)) if p is None)
    cache_dir = s.cache_dir or default_cache_dir()
    errors = syntax_check(kernel_part(task.kernel, cache_dir),
                          compile_flags(chip_profile(s.chip), s.opt_level, {}) + ["-iquote", str(task.root)], s.cxx,
                          task.user_files(), (kernel, entry.line), s.compile_timeout_s)
    diags = [diagnostic(d.file, d.line, d.severity, d.code, d.message, d.column) for d in errors]
    diags.append(diagnostic(kernel, entry.line, "info", "task-error",
                            f"no {missing} beside the kernel: add them to run and check it (the task format: "
                            "docs/task-format.md); until then it is only compiled"))
    return StageFailure("compile_error" if errors else "compiled", diags)


def plan_stage(worker: PlanWorker, task: Task, settings: EvalSettings, out_dir: Path,
               op_entry: str | None = None) -> Planned | StageFailure:
    """host.py and reference.py, run in the plan worker: every trial's launch and arrays; or the
    plan kept from an earlier run of the same files (npu_eval/plan_cache.py). An op project
    (no host.py) names its kernel entry `op_entry`: its launches lack the tiling yet (op_stage)."""
    t0 = time.monotonic()
    cache = PlanCache(settings.cache_dir or default_cache_dir()) if settings.plan_cache else None
    trials = settings.trials if settings.check else 1  # nothing to check: the one run the estimate needs
    key = plan_key(task, settings.seed, trials, settings.check) if cache else None
    if cache and key:
        kept = cache.lookup(key)
        if kept is not None:
            return Planned(kept, time.monotonic() - t0, cached=True)
    request = PlanRequest(task_root=str(task.root), reference=str(task.reference),
                          host=str(task.host) if task.host else None, op_entry=op_entry,
                          out_dir=str(out_dir), seed=settings.seed, trials=trials,
                          check=settings.check, timeout_s=settings.plan_timeout_s)
    try:
        answer = worker.plan(request, timeout=settings.plan_timeout_s)
    except PlanWorkerError as e:
        return StageFailure("harness_error", [diagnostic(str(task.host or task.reference), 1, "error", "host-error",
                                                         str(e))])
    if isinstance(answer, PlanFailure):
        file = answer.file or str(task.host if answer.code == "host-error" and task.host else task.reference)
        return StageFailure("harness_error", [diagnostic(file, answer.line, "error", answer.code, answer.message)])
    if cache and key:
        cache.store(key, answer, out_dir)
    return Planned(answer, time.monotonic() - t0)


def entry_stage(entries: list[Entry], plan: LaunchPlan, task: Task) -> Entry | StageFailure:
    """The entry the plan's Launch(kernel=...) names; a template needs its arguments named."""
    first, kernel_call = plan.first, plan.signature.kernel
    entry = match_entry(entries, kernel_call)
    if entry is None:
        names = ", ".join(e.qualified for e in entries)
        return StageFailure("harness_error", [diagnostic(
            first.launch_file, first.launch_line, "error", "host-error",
            f"Launch(kernel={kernel_call!r}) names no __global__ entry in {task.kernel.name} (entries: {names})")])
    if entry.template and "<" not in kernel_call:
        return StageFailure("harness_error", [diagnostic(
            first.launch_file, first.launch_line, "error", "host-error",
            f"{entry.qualified} is a template {entry.template}: name its arguments, e.g. "
            f"Launch(kernel=\"{entry.qualified}<...>\")")])
    return entry


def _op_entry(entries: list[Entry], task: Task) -> Entry:
    """An op kernel's entry: the one named as its file, else the first."""
    return next((e for e in entries if e.name == task.kernel.stem), entries[0])


def op_stage(task: Task, planned: Planned, entry: Entry, settings: EvalSettings, chip: ChipProfile,
             work: Path) -> Planned | StageFailure:
    """An op project's tiling (npu_eval/op_project.py): op_host's TilingFunc, run for each trial,
    completes the plan with blockDim, the tiling key, the workspace and the tiling bytes."""
    assert task.op_host is not None and task.reference is not None
    t0 = time.monotonic()
    done = complete_plan(task.op_host, task.kernel, str(task.reference), task.user_files(), planned.plan, entry,
                         settings, chip, work)
    if isinstance(done, OpFailure):
        return StageFailure(done.status, done.diagnostics)
    return Planned(done.plan, planned.seconds + time.monotonic() - t0, planned.cached)


@dataclass(frozen=True)
class Ready:
    """A task through every stage before the build: its plan, the chip it runs on, the entry it launches."""

    planned: Planned
    chip: ChipProfile
    entry: Entry


def ready_to_build(task: Task, settings: EvalSettings, worker: PlanWorker, backend: Backend, plan_dir: Path,
                   on_plan: Callable[[Planned, ChipProfile], None] = lambda planned, chip: None,
                   before_entry: Callable[[], None] = lambda: None) -> Ready | StageFailure:
    """check -> plan -> api check -> entry, the chain every run of a task goes through (an
    evaluation, a debug build). The backend starts its background preparation while the plan
    runs; `on_plan` sees the plan and its chip as soon as they are known (the evaluation records
    them even when a later stage fails); `before_entry` may raise to cancel."""
    entries = check_task(task, settings)
    if isinstance(entries, StageFailure):
        return entries
    try:
        backend.prepare(task, chip_profile(settings.chip))  # in the background, while the plan runs
    except UnknownChip:
        pass
    op_entry = _op_entry(entries, task) if task.op_host else None
    planned = plan_stage(worker, task, settings, plan_dir, op_entry.name if op_entry else None)
    if isinstance(planned, StageFailure):
        return planned
    chip = chip_profile(planned.plan.first.chip or settings.chip)
    if task.op_host and op_entry:
        planned = op_stage(task, planned, op_entry, settings, chip, plan_dir.parent / "op_tiling")
        if isinstance(planned, StageFailure):
            return planned
    on_plan(planned, chip)
    lacking = api_check(task, chip)
    if lacking is not None:
        return lacking
    before_entry()
    entry = entry_stage(entries, planned.plan, task)
    if isinstance(entry, StageFailure):
        return entry
    return Ready(planned, chip, entry)

# ---- run, compare, estimate: every trial ----

_ERR_KEYS = ("max_abs_err", "mean_rel_err", "max_rel_err")


@dataclass(frozen=True)
class Compared:
    """One trial's outputs against the reference."""

    passed: bool
    errors: dict[str, float]              # worst max_abs_err, mean_rel_err, max_rel_err over its outputs
    mismatch: Mismatch | None = None      # the first wrong element
    mismatch_file: str | None = None      # the file of the line that wrote it


@dataclass
class TrialsResult:
    """What running every trial found: the report's body, and trial 0's trace and timing."""

    status: Status
    diagnostics: list[Diagnostic]
    correctness: Correctness
    stdout: str
    measured: Measured | None = None
    estimate_s: float = 0.0


def compare_trial(run: TrialRun, trial: TrialPlan, index: int) -> Compared:
    """The trial's outputs, as the harness wrote them, against the reference's."""
    ok, mm, mm_file = True, None, None
    errs: dict[str, float] = dict.fromkeys(_ERR_KEYS, 0.0)
    for k, out in enumerate(trial.outputs):
        got = load_array(str(run.output(out.arg)), out.dtype)
        r = compare(got, load_array(out.expected, out.dtype), out.dtype, trial.tolerance)
        for key in _ERR_KEYS:
            errs[key] = max(errs[key], getattr(r, key))
        if not r.passed:
            ok = False
            if mm is None and r.first_bad is not None:
                block, mm_file, line = run.writer(out.arg, r.first_bad * itemsize(out.dtype))
                mm = Mismatch(index=r.first_bad, got=r.got or 0.0, expected=r.expected or 0.0, block=block,
                              line=line, output=k, trial=index)
    return Compared(ok, errs, mm, mm_file)


def run_status(run: TrialRun, kernel: str, entry_line: int, diags: dict[tuple, Diagnostic]) -> Status | None:
    """How a run that did not reach its end ended (timeout, fault, crash), or None when it did."""
    res = run.result
    if res.timed_out:
        if not any(d.code == "timeout" for d in diags.values()):
            diags[("timeout",)] = diagnostic(kernel, entry_line, "error", "timeout",
                                             f"the kernel ran past its {res.seconds:.1f} s limit")
        return "timeout"
    if run.aborted:
        return "runtime_error"
    if res.signal is not None or (res.returncode >= protocol.EXIT_SIGNAL_BASE and not run.finished):
        if not any(d.code == "crash" for d in diags.values()):
            sig = res.signal or res.returncode - protocol.EXIT_SIGNAL_BASE
            diags[("crash",)] = diagnostic(kernel, entry_line, "error", "crash",
                                           f"the kernel died of signal {sig}; {res.stderr.strip()[-300:]}")
        return "crash"
    if res.returncode != 0 or not run.finished:
        diags[("harness",)] = diagnostic(kernel, entry_line, "error", "crash",
                                         f"the harness failed (exit {res.returncode}): "
                                         f"{res.stderr.strip()[-500:] or 'no message'}")
        return "crash"
    return None


def _add_faults(run: TrialRun, kernel: str, entry_line: int, diags: dict[tuple, Diagnostic]) -> None:
    for f in run.faults:
        file, line, message = f.file if Path(f.file).is_file() else kernel, f.line, f.message
        if line <= 0:  # before the block's first Ascend C call: no API call left a line
            line, message = _place_before_first_call(f, kernel, entry_line)
        key = (f.code, file, line)
        if key not in diags:
            diags[key] = diagnostic(file, line, f.severity, f.code, message, block=f.block)


def _place_before_first_call(f: Fault, kernel: str, entry_line: int) -> tuple[int, str]:
    """A finding with no line goes on the definition of the function the kernel was in, when
    the kernel source defines it, else on the entry."""
    if not f.function:
        return entry_line, f.message
    try:
        line = definition_line(Path(kernel).read_text(errors="replace"), f.function)
    except OSError:
        line = None
    if line is None:
        return entry_line, f"{f.message}; it was in {f.function}"
    return line, f"{f.message}; it was in {f.function}, defined here"


def _mismatch_diagnostic(mm: Mismatch, file: str | None, kernel: str, entry_line: int) -> Diagnostic:
    msg = (f"output {mm.output} is wrong at index {mm.index} (trial {mm.trial}): got {mm.got:g}, "
           f"expected {mm.expected:g}")
    msg += f"; block {mm.block} wrote it here" if mm.line is not None else "; no kernel instruction wrote that element"
    line = mm.line if (mm.line and file) else entry_line
    return diagnostic(file or kernel, line, "error", "mismatch", msg, block=mm.block)


@dataclass
class TrialsRun:
    """The run loop's inputs beside the plan: where findings go and what to do between trials."""

    backend: Backend
    binary: Binary
    names: list[str]          # the entry's parameter names
    kernel: str
    entry_line: int
    estimate: bool
    check_cancel: Callable[[], None]
    trace_out: Path | None = None
    check: bool = True        # false: an estimate-only run (EvalSettings.check), nothing compared


def run_trials(plan: LaunchPlan, r: TrialsRun) -> TrialsResult:
    """Run, check and compare every trial (stopping at the first that does not end normally);
    trial 0 is also timed."""
    diags: dict[tuple, Diagnostic] = {}
    status: Status | None = None
    passed, ran, stdout = 0, 0, ""
    worst: dict[str, float] = dict.fromkeys(_ERR_KEYS, 0.0)
    first: Compared | None = None
    measured, estimate_s = None, 0.0
    for i, trial in enumerate(plan.trials):
        r.check_cancel()
        run = r.backend.run(r.binary, trial, i, r.names, trace=(i == 0 and r.estimate))
        ran += 1
        if i == 0:
            stdout = run.result.stdout + ("\n[output truncated]" if run.result.stdout_truncated else "")
        _add_faults(run, r.kernel, r.entry_line, diags)
        status = run_status(run, r.kernel, r.entry_line, diags)
        if i == 0 and not status and r.estimate:
            t0 = time.monotonic()
            measured = r.backend.measure(run, trial, r.binary.chip, diags, r.trace_out)
            estimate_s = time.monotonic() - t0
        if status:
            break
        if not r.check:
            continue
        c = compare_trial(run, trial, i)
        worst = {k: max(worst[k], c.errors[k]) for k in _ERR_KEYS}
        passed += c.passed
        if c.mismatch is not None and first is None:
            first = c
    mm = first.mismatch if first is not None else None
    if status is None:
        # An error-severity fault names what went wrong better than the wrong output it caused
        # (a cross-block race, an unaligned copy): it makes the run a runtime_error, and the
        # mismatch stays in the report as its symptom.
        errors = any(d.severity == "error" for d in diags.values())
        status = ("runtime_error" if errors else "estimated" if not r.check else "mismatch" if first is not None
                  else "correct")
    if mm is not None and first is not None:
        diags[("mismatch",)] = _mismatch_diagnostic(mm, first.mismatch_file, r.kernel, r.entry_line)
    trials = (ran if status in ("correct", "mismatch", "runtime_error") else len(plan.trials)) if r.check else 0
    correctness = Correctness(trials=trials, passed=passed, first_mismatch=mm, **worst)
    return TrialsResult(status, sorted(diags.values(), key=diagnostic_order), correctness, stdout, measured,
                        estimate_s)
