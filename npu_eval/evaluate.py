"""`evaluate(task, settings) -> Report`: the pipeline of named stages (DESIGN section 4).

load task -> plan (host.py + reference.py in the plan worker) -> build (harness + kernel,
cached) -> run (each trial in the sandbox) -> compare. Every failure becomes a Report with
diagnostics on the user's lines; nothing a user's files do escapes as an exception.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval import harness as harness_mod
from sage_npu.npu_eval.analysis import analyze
from sage_npu.npu_eval.build import (
    BuildCache,
    build,
    compile_flags,
    coop_define,
    default_cache_dir,
    syntax_check,
)
from sage_npu.npu_eval.calibrate import load_user_costs
from sage_npu.npu_eval.chips import ChipProfile, UnknownChip, chip_profile
from sage_npu.npu_eval.chrome_trace import write_chrome_trace
from sage_npu.npu_eval.compare import compare, itemsize, load_array
from sage_npu.npu_eval.cost_model import estimate
from sage_npu.npu_eval.costs import CostTable, default_costs
from sage_npu.npu_eval.host_rules import check_host_file
from sage_npu.npu_eval.host_split import kernel_part
from sage_npu.npu_eval.plan_client import PlanWorker, PlanWorkerError
from sage_npu.npu_eval.report import Correctness, Diagnostic, HotLine, Mismatch, Report, Timing
from sage_npu.npu_eval.run import TrialRun, run_trial
from sage_npu.npu_eval.sandbox import SandboxLimits, prepare_scratch
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import find_entries, match_entry
from sage_npu.npu_eval.task import Task, TaskError, load_task
from sage_npu.npu_eval.trace import Trace, read_trace


class BackendUnavailable(Exception):
    """The requested backend cannot run here (e.g. `ascend` without CANN)."""


class Cancelled(Exception):
    """cancel() was called while this evaluation ran (a newer request supersedes it)."""


@dataclass
class Stages:
    """Where an evaluation spent its time, for benchmarks and the server's progress."""

    plan_s: float = 0.0
    build_s: float = 0.0
    build_cached: bool = False
    run_s: float = 0.0
    estimate_s: float = 0.0


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
    line = max(int(line or 1), 1)
    col, end_line, end_col = _line_span(file, line, column)
    return Diagnostic(file=file, line=line, column=col, end_line=end_line, end_column=end_col,
                      severity=severity, code=code, message=message, block=block)


class Evaluator:
    """Evaluates tasks, keeping a plan worker (torch imported) alive between evaluations."""

    def __init__(self, settings: EvalSettings | None = None, scratch_root: Path | None = None) -> None:
        self.settings = settings or EvalSettings()
        self._scratch_root = scratch_root
        self._worker: PlanWorker | None = None
        self.last_stages = Stages()
        self.last_trace: tuple[Trace, int] | None = None  # trial 0's trace and block_dim (for calibrate)
        self._cancel = threading.Event()

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

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _plan_worker(self) -> PlanWorker:
        if self._worker is None:
            home = Path(tempfile.mkdtemp(prefix="sage-plan-home-", dir=self._scratch_root))
            self._worker = PlanWorker(home, self.settings.plan_memory_limit_mb)
        return self._worker

    def evaluate(self, task_path: str | Path | Task, trace_out: Path | None = None) -> Report:
        s = self.settings
        self.last_trace = None
        self._cancel.clear()
        if s.backend == "ascend":
            raise BackendUnavailable(
                "the ascend backend needs CANN (the bisheng compiler and torch_npu) and an NPU; it is "
                "not available yet. Use --backend sim, the CPU emulator.")
        try:
            task = task_path if isinstance(task_path, Task) else load_task(task_path)
        except TaskError as e:
            p = str(task_path)
            return Report(task=p, kernel=p, chip=s.chip, status="harness_error",
                          diagnostics=[Diagnostic(file=p, line=1, column=1, end_line=1, end_column=1,
                                                  severity="error", code="task-error", message=str(e))])
        scratch = Path(tempfile.mkdtemp(prefix="sage-eval-", dir=self._scratch_root))
        scratch.chmod(0o711)  # the sandboxed child (another user when we are root) must reach run/
        try:
            report = self._evaluate(task, scratch, trace_out)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return _with_static_findings(report, task)

    # ---- the stages ----

    def _evaluate(self, task: Task, scratch: Path, trace_out: Path | None) -> Report:
        s = self.settings
        stages = self.last_stages = Stages()
        kernel = str(task.kernel)
        base = dict(task=str(task.root), kernel=kernel, chip=s.chip, backend="sim")
        src = task.kernel.read_bytes()
        entries = find_entries(src)
        if not entries:
            return Report(**base, status="compile_error", diagnostics=[diagnostic(
                kernel, 1, "error", "compile-error",
                "no kernel entry: declare one as extern \"C\" __global__ __aicore__ void name(GM_ADDR ...)")])
        if not task.runnable:
            missing = " and ".join(n for n, p in (("reference.py", task.reference), ("host.py", task.host))
                                   if p is None)
            chip = chip_profile(s.chip)
            errors = syntax_check(kernel_part(task.kernel, self._cache_dir()),
                                  compile_flags(chip, s.opt_level, {}) + ["-iquote", str(task.root)], s.cxx,
                                  self._user_files(task), (kernel, entries[0].line), s.compile_timeout_s)
            diags = [diagnostic(d.file, d.line, d.severity, d.code, d.message, d.column) for d in errors]
            diags.append(diagnostic(kernel, entries[0].line, "info", "task-error",
                                    f"no {missing} beside the kernel: add them (DESIGN section 3) to run and "
                                    "check it; until then it is only compiled"))
            return Report(**base, status="compile_error" if errors else "harness_error", diagnostics=diags)

        if s.host_allow_list and task.host is not None:
            bad = check_host_file(task.host)
            if bad:
                return Report(**base, status="harness_error", diagnostics=[
                    diagnostic(str(task.host), v.line, "error", "host-error", v.message, v.column) for v in bad])

        # plan
        t0 = time.monotonic()
        plan_dir = scratch / "plan"
        try:
            resp = self._plan_worker().plan(
                {"task_root": str(task.root), "reference": str(task.reference), "host": str(task.host),
                 "out_dir": str(plan_dir), "seed": s.seed, "trials": s.trials},
                timeout=s.plan_timeout_s)
        except PlanWorkerError as e:
            return Report(**base, status="harness_error",
                          diagnostics=[diagnostic(str(task.host), 1, "error", "host-error", str(e))])
        stages.plan_s = time.monotonic() - t0
        if "error" in resp:
            err = resp["error"]
            file = err.get("file") or str(task.host if err["code"] == "host-error" else task.reference)
            return Report(**base, status="harness_error",
                          diagnostics=[diagnostic(file, err.get("line"), "error", err["code"], err["message"])])
        plan = resp["ok"]
        trials = plan["trials"]
        first = trials[0]
        chip_name = first.get("chip") or s.chip
        chip = chip_profile(chip_name)
        base["chip"] = chip.name

        # build
        self._check_cancel()
        kernel_call = plan["signature"]["kernel"]
        entry = match_entry(entries, kernel_call)
        if entry is None:
            names = ", ".join(e.qualified for e in entries)
            return Report(**base, status="harness_error", diagnostics=[diagnostic(
                first["launch_file"], first["launch_line"], "error", "host-error",
                f"Launch(kernel={kernel_call!r}) names no __global__ entry in {task.kernel.name} "
                f"(entries: {names})")])
        if entry.template and "<" not in kernel_call:
            return Report(**base, status="harness_error", diagnostics=[diagnostic(
                first["launch_file"], first["launch_line"], "error", "host-error",
                f"{entry.qualified} is a template {entry.template}: name its arguments, e.g. "
                f"Launch(kernel=\"{entry.qualified}<...>\")")])
        for trial in trials:
            for a, p in zip(trial["args"], entry.params, strict=False):
                a["name"] = p.name
        try:
            source = harness_mod.generate(kernel_part(task.kernel, self._cache_dir()), entry, kernel_call,
                                          first["args"], first["launch_file"], first["launch_line"])
        except harness_mod.HarnessError as e:
            return Report(**base, status="harness_error", diagnostics=[diagnostic(
                e.file or first["launch_file"], e.line or first["launch_line"], "error", "host-error", e.message)])
        defines = {**dtype_defines(src, entry, first["args"]), **plan["signature"]["defines"], **coop_define(src)}
        flags = compile_flags(chip, s.opt_level, defines)
        flags += ["-iquote", str(task.root)]   # the kernel's own headers, also from its split kernel part
        cache = BuildCache(self._cache_dir())
        built = build(source, flags, s.cxx, cache, self._user_files(task), (kernel, entry.line),
                      s.compile_timeout_s)
        stages.build_s, stages.build_cached = built.seconds, built.cached
        if not built.ok:
            return Report(**base, status="compile_error", diagnostics=[
                diagnostic(d.file, d.line, d.severity, d.code, d.message, d.column) for d in built.diagnostics])

        # run + compare
        t0 = time.monotonic()
        rundir = scratch / "run"
        rundir.mkdir()
        binary = rundir / "harness"
        shutil.copy2(built.binary, binary)
        prepare_scratch(rundir)
        largest_out = max((a["bytes"] for t in trials for a in t["args"] if a["kind"] == "tensor"), default=0)
        limits = SandboxLimits(timeout_s=s.run_timeout_s, memory_bytes=s.memory_limit_mb << 20,
                               file_bytes=max(256 << 20, largest_out * 8))
        report = self._run_and_compare(base, trials, binary, rundir, chip, limits, entry, trace_out)
        stages.run_s = time.monotonic() - t0
        return report

    def _cache_dir(self) -> Path:
        return self.settings.cache_dir or default_cache_dir()

    @staticmethod
    def _user_files(task: Task) -> set[str]:
        """Files whose lines diagnostics may name: the task's own, and headers beside the kernel."""
        files = {str(Path(p).resolve()) for p in (task.kernel, task.host, task.reference) if p is not None}
        return files | {str(p.resolve()) for pat in ("*.h", "*.hpp") for p in task.root.glob(pat)}

    def _run_and_compare(self, base: dict, trials: list[dict], binary: Path, rundir: Path, chip: ChipProfile,
                         limits: SandboxLimits, entry, trace_out: Path | None) -> Report:
        ub = (chip.ub_bytes, chip.ub_reserved_bytes)
        s = self.settings
        kernel = base["kernel"]
        diags: dict[tuple, Diagnostic] = {}
        status = None
        passed = 0
        worst = {"max_abs_err": 0.0, "mean_rel_err": 0.0, "max_rel_err": 0.0}
        first_mismatch: Mismatch | None = None
        mismatch_file: str | None = None
        stdout = ""
        timing = None
        ran = 0
        for i, trial in enumerate(trials):
            self._check_cancel()
            run = run_trial(binary, trial, rundir, i, ub, trace=(i == 0 and s.estimate), limits=limits,
                            stdout_limit=s.stdout_limit)
            ran += 1
            if i == 0:
                stdout = run.result.stdout + ("\n[output truncated]" if run.result.stdout_truncated else "")
            for f in run.faults:
                file = f.file if Path(f.file).is_file() else kernel
                key = (f.code, file, f.line)
                if key not in diags:
                    diags[key] = diagnostic(file, f.line, f.severity, f.code, f.message, block=f.block)
            stop = self._run_status(run, kernel, entry, diags)
            if i == 0 and not stop and s.estimate:
                t0 = time.monotonic()
                timing = self.estimate_trace(run.outdir, trial, chip, diags, trace_out)
                self.last_stages.estimate_s = time.monotonic() - t0
            if stop:
                status = stop
                break
            ok, mm, mm_file, errs = self._compare_trial(run, trial, i)
            for k in worst:
                worst[k] = max(worst[k], errs[k])
            if ok:
                passed += 1
            elif first_mismatch is None:
                first_mismatch, mismatch_file = mm, mm_file
        if status is None:
            has_errors = any(d.severity == "error" for d in diags.values())
            if first_mismatch is not None:
                status = "mismatch"
            elif has_errors:
                status = "runtime_error"
            else:
                status = "correct"
        if first_mismatch is not None:
            msg = (f"output {first_mismatch.output} is wrong at index {first_mismatch.index} (trial "
                   f"{first_mismatch.trial}): got {first_mismatch.got:g}, expected {first_mismatch.expected:g}")
            if first_mismatch.line is not None:
                msg += f"; block {first_mismatch.block} wrote it here"
            else:
                msg += "; no kernel instruction wrote that element"
            line = first_mismatch.line if (first_mismatch.line and mismatch_file) else entry.line
            diags[("mismatch",)] = diagnostic(mismatch_file or kernel, line, "error", "mismatch", msg,
                                              block=first_mismatch.block)
        correctness = Correctness(trials=ran if status in ("correct", "mismatch", "runtime_error") else len(trials),
                                  passed=passed, first_mismatch=first_mismatch, **worst)
        return Report(**base, status=status, diagnostics=sorted(diags.values(), key=_diag_order),
                      correctness=correctness, timing=timing, stdout=stdout)

    def estimate_trace(self, outdir: Path, trial: dict, chip: ChipProfile, diags: dict,
                       trace_out: Path | None = None) -> Timing | None:
        """The cost model on the trace a run left in `outdir` (task trial 0, or one launch of a
        program): the timing section, and missing-sync findings added to `diags`."""
        trace_file, locs_file = outdir / "trace.tsv", outdir / "locs.tsv"
        if not trace_file.exists() or not locs_file.exists():
            return None
        trace = read_trace(trace_file, locs_file)
        self.last_trace = (trace, trial["block_dim"])
        est = estimate(trace, chip, self.costs_for(chip), trial["block_dim"], keep_events=trace_out is not None)
        for h in est.hazards:
            file, line = trace.where(h.loc)
            _, oline = trace.where(h.other_loc)
            key = ("missing-sync", file, line)
            if key in diags or not file:
                continue
            verb = {"RAW": "reads UB that", "WAR": "overwrites UB that", "WAW": "writes UB that"}[h.kind]
            did = {"RAW": "wrote", "WAR": "still reads", "WAW": "also writes"}[h.kind]
            diags[key] = diagnostic(
                file, line, "error", "missing-sync",
                f"{h.api} ({h.pipe}) {verb} {h.other_api} ({h.other_pipe}, line {oline}) {did}, with no queue, "
                f"flag or barrier ordering them: the device runs the pipes in parallel and may reorder them. Add "
                f"SetFlag/WaitFlag<HardEvent::{h.other_pipe}_{h.pipe}> between them, or pass the tensor through a "
                "TQue", block=h.block)
        # Every output byte must reach GM once; an estimate below that has not been traced doing the work
        # (outputs written through raw pointers, say), and a kernel cannot beat physics.
        out_bytes = sum(a["bytes"] for a in trial["args"] if a.get("role") == "out")
        floor_us = out_bytes / (chip.hbm_gbps * 1e3)
        if not trace.truncated and est.estimated_us < floor_us * 0.99:
            diags[("beyond-roofline",)] = diagnostic(
                str(trial.get("launch_file") or ""), trial.get("launch_line") or 1, "error", "beyond-roofline",
                f"the estimate ({est.estimated_us:.3f} us) beats the time HBM needs just to write the outputs "
                f"({out_bytes} bytes, {floor_us:.3f} us): the kernel writes its outputs without the traced copies "
                "(DataCopy/DataCopyPad); write them through GlobalTensor copies")
        if trace.truncated:
            diags[("trace-truncated",)] = diagnostic(
                str(trial.get("launch_file") or ""), trial.get("launch_line") or 1, "info", "trace-truncated",
                "the trace stopped at its record limit: the estimate covers only the start of the kernel")
        if trace_out is not None:
            write_chrome_trace(trace_out, est, trace, chip)
        hot = []
        for loc, us in est.hot_lines:
            file, line = trace.where(loc)
            if file and line:
                hot.append(HotLine(file=file, line=line, us=round(us, 4)))
        return Timing(estimated_us=round(est.estimated_us, 4), launch_overhead_us=est.launch_overhead_us,
                      roofline_us=round(est.roofline_us, 4), bottleneck=est.bottleneck, pipes=est.pipes,
                      hot_lines=hot)

    def costs_for(self, chip: ChipProfile) -> CostTable:
        """The chip's calibrated cost table if `sage-npu calibrate` made one, else the defaults."""
        return load_user_costs(self.settings.resolved_profile_dir(), chip.name) or default_costs(chip.family)

    @staticmethod
    def _run_status(run: TrialRun, kernel: str, entry, diags: dict) -> str | None:
        res = run.result
        if res.timed_out:
            if not any(d.code == "timeout" for d in diags.values()):
                diags[("timeout",)] = diagnostic(kernel, entry.line, "error", "timeout",
                                                 f"the kernel ran past its {res.seconds:.1f} s limit")
            return "timeout"
        if run.aborted:
            return "runtime_error"
        if res.signal is not None or (res.returncode >= 128 and not run.finished):
            if not any(d.code == "crash" for d in diags.values()):
                sig = res.signal or res.returncode - 128
                diags[("crash",)] = diagnostic(kernel, entry.line, "error", "crash",
                                               f"the kernel died of signal {sig}; {res.stderr.strip()[-300:]}")
            return "crash"
        if res.returncode != 0 or not run.finished:
            diags[("harness",)] = diagnostic(kernel, entry.line, "error", "crash",
                                             f"the harness failed (exit {res.returncode}): "
                                             f"{res.stderr.strip()[-500:] or 'no message'}")
            return "crash"
        return None

    def _compare_trial(self, run: TrialRun, trial: dict, index: int
                       ) -> tuple[bool, Mismatch | None, str | None, dict]:
        """(passed, first mismatch, the file that wrote it, worst errors) of one trial."""
        ok = True
        mm, mm_file = None, None
        errs = {"max_abs_err": 0.0, "mean_rel_err": 0.0, "max_rel_err": 0.0}
        for k, out in enumerate(trial["outputs"]):
            got = load_array(str(run.output(out["arg"])), out["dtype"])
            exp = load_array(out["expected"], out["dtype"])
            r = compare(got, exp, out["dtype"], trial.get("tolerance"))
            errs["max_abs_err"] = max(errs["max_abs_err"], r.max_abs_err)
            errs["mean_rel_err"] = max(errs["mean_rel_err"], r.mean_rel_err)
            errs["max_rel_err"] = max(errs["max_rel_err"], r.max_rel_err)
            if not r.passed:
                ok = False
                if mm is None:
                    block, mm_file, line = run.writer(out["arg"], r.first_bad * itemsize(out["dtype"]))
                    mm = Mismatch(index=r.first_bad, got=r.got, expected=r.expected, block=block, line=line,
                                  output=k, trial=index)
        return ok, mm, mm_file, errs


# C++ element types of the op build's DTYPE_<NAME> macros.
CTYPES = {"float16": "half", "bfloat16": "bfloat16_t", "float32": "float", "float64": "double", "int8": "int8_t",
          "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "bool": "bool"}


def dtype_defines(src: bytes, entry, args: list[dict]) -> dict[str, str]:
    """A framework kernel's `DTYPE_X`-style macros, as the op build would define them: for each
    tensor parameter, DTYPE_<NAME> is its element type (Launch(defines=...) wins over these)."""
    if b"DTYPE_" not in src:
        return {}
    out = {}
    for param, arg in zip(entry.params, args, strict=False):
        if arg.get("kind") == "tensor" and param.name:
            out[f"DTYPE_{param.name.upper()}"] = CTYPES[arg["dtype"]]
    return out


def _with_static_findings(report: Report, task: Task) -> Report:
    """The static analysis's findings (except editor-only hints) join every report on the kernel
    with their severities; they never change the status, and one whose code and line a runtime
    diagnostic already reports is not added twice."""
    try:
        findings = analyze(task.kernel.read_bytes(), report.chip, for_report=True)
    except (OSError, UnknownChip):  # the report already says what is wrong with the file or chip
        return report
    kernel = str(task.kernel)
    known = {(d.code, d.line) for d in report.diagnostics if d.file == kernel}
    extra = [Diagnostic(file=kernel, line=f.line, column=f.column, end_line=f.end_line, end_column=f.end_column,
                        severity=f.severity, code=f.code, message=f.message)
             for f in findings if (f.code, f.line) not in known]
    if not extra:
        return report
    return report.model_copy(update={"diagnostics": sorted([*report.diagnostics, *extra], key=_diag_order)})


def _diag_order(d: Diagnostic) -> tuple:
    return (0 if d.severity == "error" else 1, d.file, d.line)


def evaluate(task: str | Path | Task, settings: EvalSettings | None = None, trace_out: Path | None = None) -> Report:
    """Evaluate one task with a fresh plan worker (the CLI's path; the server keeps an Evaluator)."""
    with Evaluator(settings) as ev:
        return ev.evaluate(task, trace_out=trace_out)
