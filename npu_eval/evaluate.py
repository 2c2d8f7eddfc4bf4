"""`Evaluator.evaluate(task) -> Evaluation`: the pipeline of named stages (docs/architecture.md).

check -> plan -> entry -> build -> run + compare + estimate (npu_eval/stages.py), on the
backend `EvalSettings.backend` names (npu_eval/backends/). Each stage returns its result or a
`StageFailure`; `_pipeline` turns the first failure into the Report, the one place that does.
Nothing a user's files do escapes as an exception, and neither does a backend that cannot run
here (`ascend` without CANN or an NPU): that is a harness_error report saying what is missing;
`auto` is the device when every part is found, else the emulator.

An `Evaluation` is the report plus what benchmarks and calibration need beside it: trial 0's
trace and block_dim, and where the time went. The module-level `evaluate(task, settings)` is
the one-shot convenience of the CLI and returns just the Report.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sage_npu.npu_eval import debug
from sage_npu.npu_eval import scratch as scratch_dirs
from sage_npu.npu_eval.advisor import AdviceInput, advise, beside_device
from sage_npu.npu_eval.analysis import Finding, analyze
from sage_npu.npu_eval.backends import (
    Backend,
    Binary,
    BuildFailed,
    concrete,
    estimate_only_refusal,
    open_backend,
    resolve,
    unavailable,
)
from sage_npu.npu_eval.backends.sim import SimBackend
from sage_npu.npu_eval.chips import ChipProfile, UnknownChip
from sage_npu.npu_eval.plan_client import PlanWorker
from sage_npu.npu_eval.report import AdviceFinding, Diagnostic, Report, diagnostic, diagnostic_order
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.stages import Planned, Ready, StageFailure, TrialsRun, ready_to_build, run_trials
from sage_npu.npu_eval.task import Task, TaskError, load_task
from sage_npu.npu_eval.timing import costs_for
from sage_npu.npu_eval.trace import Trace

_FINDINGS_KEPT = 32  # sources whose findings an Evaluator keeps (a server sees a few tasks at a time)
MODEL_BUILD_THREAD = "sage-model-build"  # the device-advice emulator build's thread, by its name prefix

__all__ = ["Cancelled", "Evaluation", "Evaluator", "Stages", "TraceSample", "diagnostic", "evaluate"]


class Cancelled(Exception):
    """cancel() was called while this evaluation ran (a newer request supersedes it)."""


@dataclass
class Stages:
    """Where an evaluation spent its time, for benchmarks and the server's progress."""

    plan_s: float = 0.0
    plan_cached: bool = False
    build_s: float = 0.0
    build_cached: bool = False
    run_s: float = 0.0
    estimate_s: float = 0.0
    advise_s: float = 0.0  # the advisor's counterfactual schedules (docs/advisor.md); on the device also the
    # wait for the emulator's build and its trial 0


@dataclass(frozen=True)
class TraceSample:
    """Trial 0's trace and the block_dim it ran with: what calibration fits the cost model to."""

    trace: Trace
    block_dim: int


@dataclass(frozen=True)
class Evaluation:
    """One evaluation: the report, trial 0's trace (None when the kernel did not run to its end
    or nothing was estimated) and the stage times."""

    report: Report
    trace: TraceSample | None = None
    stages: Stages = field(default_factory=Stages)


class Evaluator:
    """Evaluates tasks, keeping a plan worker (torch imported) alive between evaluations."""

    def __init__(self, settings: EvalSettings | None = None, scratch_root: Path | None = None) -> None:
        self.settings = settings or EvalSettings.model_validate({})
        self._scratch_root = scratch_root
        self._worker: PlanWorker | None = None
        self._cancel = threading.Event()
        scratch_dirs.sweep_stale_once(scratch_root)  # what runs killed earlier left behind
        # The static findings of the last sources seen, by (source hash, chip): re-evaluating an
        # unchanged kernel (a host.py save, a new seed) skips the parse (about 10 ms).
        self._findings: dict[tuple[str, str], list[Finding]] = {}
        self._removals: list[threading.Thread] = []

    def cancel(self) -> None:
        """Stop the evaluation in progress at its next stage boundary (between trials at the
        latest); it raises Cancelled. Safe to call from another thread."""
        self._cancel.set()

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise Cancelled()

    def close(self) -> None:
        if self._worker:
            self._worker.close()
            self._worker = None
        for t in self._removals:
            t.join()
        self._removals.clear()

    def _remove_later(self, scratch: Path) -> None:
        """Delete an evaluation's folder in the background: removing its few dozen fresh folders
        takes about 0.1 s on some disks, which the verdict need not wait for. close() waits; a
        process killed first leaves it to the stale sweep."""
        self._removals = [t for t in self._removals if t.is_alive()]
        t = threading.Thread(target=shutil.rmtree, args=(scratch,), kwargs={"ignore_errors": True},
                             name="sage-scratch-rm", daemon=True)
        t.start()
        self._removals.append(t)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _plan_worker(self) -> PlanWorker:
        if self._worker is None:
            self._worker = PlanWorker(self.settings.plan_memory_limit_mb)
        return self._worker

    def evaluate(self, task_path: str | Path | Task, trace_out: Path | None = None) -> Evaluation:
        """Evaluate one task; `trace_out`: also write trial 0's Chrome trace there."""
        s = self.settings
        self._cancel.clear()
        try:
            task = task_path if isinstance(task_path, Task) else load_task(task_path)
        except TaskError as e:
            p = str(task_path)
            return Evaluation(Report(task=p, kernel=p, chip=s.chip, status="harness_error", diagnostics=[
                Diagnostic(file=p, line=1, column=1, end_line=1, end_column=1, severity="error", code="task-error",
                           message=str(e))]))
        s = concrete(s)  # auto: the device when every part is found, else the emulator
        missing = estimate_only_refusal(s) or unavailable(s.backend)
        if missing is not None:
            return Evaluation(Report(task=str(task.root), kernel=str(task.kernel), chip=s.chip,
                                     backend=resolve(s.backend)[0],
                                     status="harness_error",
                                     diagnostics=[diagnostic(str(task.kernel), 1, "error", "task-error", missing)]))
        scratch = scratch_dirs.make("eval", self._scratch_root)
        scratch.chmod(0o711)  # the sandboxed child (another user when we are root) must reach run/
        try:
            ev = self._pipeline(task, s, scratch, trace_out)
        finally:
            self._remove_later(scratch)
        return Evaluation(self._with_static_findings(ev.report, task), ev.trace, ev.stages)

    def debug_target(self, task: Task, block: int, folder: Path | None = None) -> debug.DebugTarget | StageFailure:
        """`task` planned and built for gdb, stopping at its entry in `block`, laid out in `folder`
        (default: the task's `.sage/debug`); or the failure of the stage that stopped it."""
        scratch = scratch_dirs.make("eval", self._scratch_root)
        scratch.chmod(0o711)  # the confined plan runner (another user when we are root) writes below it
        try:
            return debug.prepare(task, self.settings, self._plan_worker(), block,
                                 folder or task.root / debug.DEBUG_FOLDER, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _static_findings(self, source: bytes, chip: str) -> list[Finding]:
        key = (hashlib.sha256(source).hexdigest(), chip)
        found = self._findings.pop(key, None)
        if found is None:
            found = analyze(source, chip, for_report=True)
        self._findings[key] = found  # re-inserted: the dict's order is least recently used first
        while len(self._findings) > _FINDINGS_KEPT:
            del self._findings[next(iter(self._findings))]
        return found

    def _with_static_findings(self, report: Report, task: Task) -> Report:
        """The static analysis's findings (except editor-only hints) join every report on the kernel
        with their severities; they never change the status, and one whose code and line a runtime
        diagnostic already reports is not added twice."""
        try:
            findings = self._static_findings(task.kernel.read_bytes(), report.chip)
        except (OSError, UnknownChip):  # the report already says what is wrong with the file or chip
            return report
        kernel = str(task.kernel)
        known = {(d.code, d.line) for d in report.diagnostics if d.file == kernel}
        extra = [f.diagnostic(kernel) for f in findings if (f.code, f.line) not in known]
        if not extra:
            return report
        return report.model_copy(update={"diagnostics": sorted([*report.diagnostics, *extra], key=diagnostic_order)})

    def _pipeline(self, task: Task, s: EvalSettings, scratch: Path, trace_out: Path | None) -> Evaluation:
        stages = Stages()
        chip_name, kind = s.chip, resolve(s.backend)[0]

        def report(**fields) -> Report:
            return Report(task=str(task.root), kernel=str(task.kernel), chip=chip_name, backend=kind, **fields)

        def failed(f: StageFailure) -> Evaluation:
            return Evaluation(report(status=f.status, diagnostics=f.diagnostics), None, stages)

        backend = open_backend(s, scratch)

        def planned_on(planned: Planned, chip: ChipProfile) -> None:
            nonlocal chip_name
            stages.plan_s, stages.plan_cached, chip_name = planned.seconds, planned.cached, chip.name

        ready = ready_to_build(task, s, self._plan_worker(), backend, scratch / "plan", planned_on,
                               self._check_cancel)
        if isinstance(ready, StageFailure):
            return failed(ready)
        plan, chip, entry = ready.planned.plan, ready.chip, ready.entry
        with model_twin(task, s, scratch, ready) as twin:  # on the device: the emulator's build, meanwhile
            binary = backend.build(task, entry, plan, chip)
            if isinstance(binary, BuildFailed):
                stages.build_s = binary.seconds
                return failed(StageFailure(binary.status, binary.diagnostics))
            stages.build_s, stages.build_cached = binary.seconds, binary.cached
            t0 = time.monotonic()
            res = run_trials(plan, TrialsRun(backend, binary, [p.name for p in entry.params], str(task.kernel),
                                             entry.line, s.estimate, self._check_cancel, trace_out, s.check))
            stages.run_s, stages.estimate_s = time.monotonic() - t0, res.estimate_s
            timing = res.measured.timing if res.measured else None
            trace = res.measured.trace if res.measured else None
            advice = []
            t1 = time.monotonic()
            ran_through = res.status in ("correct", "estimated")  # an estimate-only run too: same trace
            if s.advise and trace is not None and timing is not None and timing.estimated and ran_through:
                advice = advise(AdviceInput(trace, plan.first.block_dim, chip, costs_for(s, chip), task.kernel,
                                            task.host))
            elif s.advise and twin is not None and timing is not None and res.status == "correct":
                advice = beside_device(twin.advice(task, s), timing.estimated_us)
            stages.advise_s = time.monotonic() - t1
        done = report(status=res.status, diagnostics=res.diagnostics, correctness=res.correctness, timing=timing,
                      advice=advice, stdout=res.stdout)
        return Evaluation(done, TraceSample(trace, plan.first.block_dim) if trace else None, stages)


@dataclass(frozen=True)
class ModelTwin:
    """A device evaluation's kernel built for the emulator, for the advisor: the device records no
    per-instruction trace, so the findings come from the emulator's trace of the same kernel, plan
    and chip. The build (a second one, cached like every emulator build) runs in a thread while
    bisheng builds and the device runs the trials; the emulator's trial 0 waits for the device's
    verdict (a device run that is not correct gets no findings)."""

    backend: Backend
    built: Future[Binary | BuildFailed]
    ready: Ready
    stop: threading.Event

    def advice(self, task: Task, s: EvalSettings) -> list[AdviceFinding]:
        """The findings of trial 0 run on the emulator; none when it does not build or run to its end."""
        binary = self.built.result()
        if isinstance(binary, BuildFailed):
            return []
        trial, chip = self.ready.planned.plan.first, self.ready.chip
        run = self.backend.run(binary, trial, 0, [p.name for p in self.ready.entry.params], True)
        if run.aborted or not run.finished:
            return []
        trace = self.backend.measure(run, trial, chip, {}, None).trace
        if trace is None:
            return []
        return advise(AdviceInput(trace, trial.block_dim, chip, costs_for(s, chip), task.kernel, task.host))

    def close(self) -> None:
        """Kill the build if it still runs (the evaluation was cancelled, its device build failed or
        its verdict was not correct) and wait for its thread: no compiler keeps a core busy for the
        next evaluation, and the scratch folder it writes in is removed only after it is done."""
        self.stop.set()
        wait([self.built])  # its outcome (BuildCancelled included) is nobody's now


@contextmanager
def model_twin(task: Task, s: EvalSettings, scratch: Path, ready: Ready) -> Iterator[ModelTwin | None]:
    """On the device with `device_advice` (and the estimate and advice asked for), the emulator's build of the
    kernel, started in the background and closed (ModelTwin.close) when the block ends; else None."""
    if s.backend == "sim" or not (s.device_advice and s.estimate and s.advise):
        yield None
        return
    folder = scratch / "model"
    folder.mkdir()
    stop = threading.Event()
    sim = SimBackend(s.model_copy(update={"backend": "sim", "sanitize": False, "line_profile": False}), folder,
                     stop=stop)
    pool = ThreadPoolExecutor(1, thread_name_prefix=MODEL_BUILD_THREAD)
    built = pool.submit(sim.build, task, ready.entry, ready.planned.plan, ready.chip)
    pool.shutdown(wait=False)
    twin = ModelTwin(sim, built, ready, stop)
    try:
        yield twin
    finally:
        twin.close()


def evaluate(task: str | Path | Task, settings: EvalSettings | None = None, trace_out: Path | None = None) -> Report:
    """Evaluate one task with a fresh plan worker and return its Report (the CLI's path; the
    server and the agent keep an Evaluator and read `Evaluation.report`)."""
    with Evaluator(settings) as ev:
        return ev.evaluate(task, trace_out=trace_out).report
