"""`sage-npu bench`: episodes over a suite of tasks and the summary metrics (README.md, Benchmarks and Using it).

A suite is a folder of task folders, or of KernelBench/NPUKernelBench single-file tasks (agent/suites.py).
A task without a kernel is drafted by the model, or counted "unsolved" offline; a folder that cannot be a
task is kept as a "broken" row with the reason; the run goes on.

Tasks run in `jobs` worker processes (spawn context), each with its own Evaluator and, when a memory is
configured, its own handle on the same memory (its writes are locked). With `jobs == 1` the tasks run
in this process.

JSON schema of `BenchResult.to_json()` (what `--out` writes and `--json` prints):

    {
      "schema_version": 1,
      "suite": "/abs/path/of/suite",
      "backend": "sim" | "ascend",
      "chip": "910B2",
      "timing_label": "est. (CPU model)" | "measured",
      "model": "offline" | "<model name>",
      "turns": 30,                     # turns allowed per task
      "jobs": 1,
      "trials": 5,                     # correctness trials per evaluation
      "memory": "/path/of/memory" | null,
      "tasks": [                       # one row per task, sorted by name
        {
          "name": "vadd_naive",        # the task folder's name
          "path": "/abs/path/of/task",
          "status": "improved" | "fixed" | "no_improvement" | "seed_not_correct" | "unsolved" | "broken" | "error",
          "reason": "",                # why a task is broken / errored / its seed is not correct
          "seed_status": "correct" | ... | null,     # the seed kernel's Report.status
          "best_status": "correct" | ... | null,     # the final kernel's Report.status
          "correct": true,             # the final kernel compiles, runs and is correct on every trial
          "seed_us": 12.3 | null,      # estimated_us of the seed kernel
          "best_us": 4.5 | null,       # estimated_us of the final (best) kernel
          "speedup": 2.73 | null,      # seed_us / best_us; 1.0 when not improved; null when not solved
          "turns": 3,                  # candidates evaluated
          "wall_s": 8.1,
          "episode_id": "hex" | null,
          "applied": ["..."],          # the accepted transforms, in order
          "tokens": 0,                 # LLM tokens of the episode (0 offline)
          "torch_us": 3.2 | null       # on the device: the reference through torch_npu (NPU events)
        }
      ],
      "metrics": {
        "tasks": 3,
        "solved": 2,                   # rows with correct == true
        "execution_rate": 0.667,       # solved / tasks
        "fast_1_0": null,              # share of solved tasks faster than torch_npu; null without an NPU
        "s_self": 2.1 | null,          # median speedup over solved tasks; null when none is solved
        "total_turns": 6,
        "wall_s": 20.4,                # the whole run
        "tokens": 0                    # LLM tokens (0 offline)
      }
    }
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sage_npu.agent import suites
from sage_npu.agent.episode import EpisodeStatus
from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.report import Status, timing_label
from sage_npu.npu_eval.settings import EvalSettings

SCHEMA_VERSION = 1


# A row's status: its episode's, or why there was no episode (`unsolved`: no kernel and no model;
# `broken`: not a task; `error`: the episode or its worker failed).
RowStatus = Literal[EpisodeStatus, "unsolved", "broken", "error"]
EXPLAINED: tuple[RowStatus, ...] = ("broken", "error", "seed_not_correct", "unsolved")   # rows whose reason is shown


class BenchError(Exception):
    """The suite cannot be benchmarked at all (missing folder, no tasks)."""


@dataclass
class TaskRow:
    name: str
    path: str
    status: RowStatus
    reason: str = ""
    seed_status: Status | None = None
    best_status: Status | None = None
    correct: bool = False
    seed_us: float | None = None
    best_us: float | None = None
    speedup: float | None = None
    turns: int = 0
    wall_s: float = 0.0
    episode_id: str | None = None
    applied: list[str] = field(default_factory=list)
    tokens: int = 0
    torch_us: float | None = None  # the reference on the NPU through torch_npu (device runs only)


@dataclass
class BenchResult:
    suite: str
    backend: str
    chip: str
    turns: int
    jobs: int
    trials: int
    memory: str | None
    rows: list[TaskRow]
    wall_s: float
    model: str = "offline"                 # the model every episode used, or "offline"

    @property
    def timing_label(self) -> str:
        return timing_label(estimated=self.backend != "ascend")

    def metrics(self) -> dict:
        solved = [r for r in self.rows if r.correct]
        speedups = [r.speedup for r in solved if r.speedup is not None]
        return {
            "tasks": len(self.rows),
            "solved": len(solved),
            "execution_rate": len(solved) / len(self.rows) if self.rows else 0.0,
            # Fast_1.0 compares device times against torch_npu; the emulator has neither.
            "fast_1_0": fast_1_0(solved),
            "s_self": statistics.median(speedups) if speedups else None,
            "total_turns": sum(r.turns for r in self.rows),
            "wall_s": self.wall_s,
            "tokens": sum(r.tokens for r in self.rows),
        }

    def to_json(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "suite": self.suite, "backend": self.backend, "chip": self.chip,
                "timing_label": self.timing_label, "model": self.model, "turns": self.turns, "jobs": self.jobs,
                "trials": self.trials, "memory": self.memory, "tasks": [r.__dict__ for r in self.rows],
                "metrics": self.metrics()}


def fast_1_0(solved: list[TaskRow]) -> float | None:
    """The share of solved tasks whose kernel beats the torch_npu reference; None without baselines."""
    pairs = [(r.best_us, r.torch_us) for r in solved if r.torch_us is not None and r.best_us is not None]
    if not pairs:
        return None
    return sum(1 for best, torch in pairs if best < torch) / len(solved)


def add_torch_baselines(rows: list[TaskRow], eval_settings: EvalSettings) -> None:
    """On the device: each solved task's reference timed through torch_npu (npu_eval/backends/
    torch_npu_baseline.py), for Fast_1.0; a task whose baseline fails keeps none and says why."""
    import tempfile

    from sage_npu.npu_eval.backends.torch_npu_baseline import reference_us
    from sage_npu.npu_eval.task import TaskError, load_task

    for row in rows:
        if not row.correct:
            continue
        try:
            task = load_task(row.path)
        except TaskError:
            continue
        with tempfile.TemporaryDirectory(prefix="sage-torch-npu-") as d:
            row.torch_us, why = reference_us(task, eval_settings, Path(d))
        if why and not row.reason:
            row.reason = why


def discover(suite: str | Path) -> tuple[list[Path], list[TaskRow]]:
    """The suite's tasks (see agent/suites.py for the forms), and a broken row for each that cannot run."""
    root = Path(suite).expanduser().resolve()
    if not root.is_dir():
        raise BenchError(f"{suite}: no such folder; pass a folder of task folders (e.g. examples/tasks) or of "
                         "KernelBench/NPUKernelBench single-file tasks")
    found = suites.discover(root)
    broken = [TaskRow(name, str(path), "broken", reason=why) for name, path, why in found.broken]
    if not found.tasks and not broken:
        raise BenchError(f"{root}: no tasks in it (task folders with reference.py, or <id>_<Name>.py files "
                         "defining Model)")
    return found.tasks, broken


# --- one task (in whichever process runs it)

def _open_memory(settings: MemorySettings | None):
    if settings is None:
        return None
    from sage_npu.memory.experience_memory import ExperienceMemory

    return ExperienceMemory.open(settings)


def run_task(path: Path, evaluator, agent: AgentSettings, memory=None) -> TaskRow:
    """One episode (the model's when one is configured, else offline); never raises: a failure becomes
    the row's status and reason."""
    from sage_npu.agent.llm import LLMClient
    from sage_npu.agent.optimize import optimize
    from sage_npu.npu_eval.task import TaskError

    row = TaskRow(path.name, str(path), "error")
    t0 = time.perf_counter()
    if not suites.has_kernel(path) and not LLMClient(agent.llm).configured:
        row.status = "unsolved"
        row.reason = (f"{path.name}: no kernel yet, and the offline optimizer does not write kernels from scratch: "
                      "set $SAGE_NPU_LLM_BASE_URL to let a model draft it")
        return row
    try:
        r = optimize(path, evaluator, agent, memory=memory)
    except TaskError as e:
        row.status, row.reason = "broken", str(e)
    except Exception as e:  # noqa: BLE001 - one task's failure must not end the run; the row says why
        row.reason = f"{path.name}: the episode failed: {type(e).__name__}: {e}"
    else:
        row.status, row.turns, row.episode_id, row.applied = r.status, r.turns, r.episode_id, list(r.applied)
        row.tokens = r.tokens
        if r.error:
            row.reason = f"{path.name}: the episode stopped early: {r.error}"
        row.seed_status, row.best_status = r.seed.status, r.best.status
        row.seed_us = r.seed.timing.estimated_us if r.seed.timing else None
        row.best_us = r.best.timing.estimated_us if r.best.timing else None
        c = r.best.correctness
        row.correct = (r.status != "seed_not_correct" and r.best.status == "correct"
                       and c is not None and c.passed == c.trials)
        row.speedup = r.speedup if row.correct else None
        if r.status == "seed_not_correct":
            c = r.seed.correctness
            detail = (r.seed.diagnostics[0].message if r.seed.diagnostics
                      else f"{c.passed}/{c.trials} trials pass" if c is not None else "")
            row.reason = (f"{path.name}: the seed kernel is not correct ({r.seed.status}"
                          + (f": {detail}" if detail else "") + "); sage-npu eval shows why")
    row.wall_s = time.perf_counter() - t0
    return row


def _worker(eval_settings: EvalSettings, memory_settings: MemorySettings | None, agent: AgentSettings,
            todo, done) -> None:
    """A worker process: its own Evaluator (torch worker) and memory handle, tasks until the sentinel."""
    from sage_npu.npu_eval.evaluate import Evaluator

    memory, memory_error = None, ""
    try:
        memory = _open_memory(memory_settings)
    except Exception as e:  # noqa: BLE001 - reported in every row this worker runs
        memory_error = f"the experience memory cannot be used ({e}); ran without it"
    with Evaluator(eval_settings) as ev:
        while (item := todo.get()) is not None:
            row = run_task(Path(item), ev, agent, memory)
            if memory_error and not row.reason:
                row.reason = memory_error
            done.put(row.__dict__)


def run_suite(suite: str | Path, eval_settings: EvalSettings, agent: AgentSettings, jobs: int = 1,
              memory_settings: MemorySettings | None = None,
              on_row: Callable[[TaskRow, int, int], None] | None = None) -> BenchResult:
    """Run an episode (agent.turns at most) over every task of `suite`; `on_row(row, done, total)` as each finishes.
    With `memory_settings`, every episode is recorded in that memory."""
    t0 = time.perf_counter()
    tasks, rows = discover(suite)
    total = len(tasks) + len(rows)

    def finished(row: TaskRow) -> None:
        rows.append(row)
        if on_row:
            on_row(row, len(rows), total)

    broken, rows = rows, []
    for r in broken:
        finished(r)
    memory = _open_memory(memory_settings)  # created here once, so parallel workers never race to create it
    jobs = max(1, min(jobs, len(tasks)))
    if jobs == 1:
        from sage_npu.npu_eval.evaluate import Evaluator

        if tasks:
            with Evaluator(eval_settings) as ev:
                for path in tasks:
                    finished(run_task(path, ev, agent, memory))
    else:
        _run_parallel(tasks, eval_settings, memory_settings, agent, jobs, finished)
    rows.sort(key=lambda r: r.name)
    from sage_npu.npu_eval.backends import resolve

    if resolve(eval_settings.backend)[0] == "ascend":
        add_torch_baselines(rows, eval_settings)
    where = None
    if memory_settings is not None:
        from sage_npu.memory.experience_memory import memory_path

        where = str(memory_path(memory_settings))
    return BenchResult(suite=str(Path(suite).expanduser().resolve()), backend=resolve(eval_settings.backend)[0],
                       chip=eval_settings.chip, turns=agent.turns, jobs=jobs, trials=eval_settings.trials,
                       memory=where, rows=rows, wall_s=time.perf_counter() - t0, model=_model_name(agent))


def _model_name(agent: AgentSettings) -> str:
    from sage_npu.agent.llm import LLMClient

    client = LLMClient(agent.llm)
    return (client.model or "unnamed") if client.configured else "offline"


def _run_parallel(tasks: list[Path], eval_settings: EvalSettings, memory_settings: MemorySettings | None,
                  agent: AgentSettings, jobs: int, finished: Callable[[TaskRow], None]) -> None:
    ctx = mp.get_context("spawn")
    todo, done = ctx.Queue(), ctx.Queue()
    for t in tasks:
        todo.put(str(t))
    for _ in range(jobs):
        todo.put(None)
    procs = [ctx.Process(target=_worker, args=(eval_settings, memory_settings, agent, todo, done),
                         name=f"sage-bench-{i}", daemon=False) for i in range(jobs)]
    for p in procs:
        p.start()
    out: list[TaskRow] = []
    try:
        while len(out) < len(tasks):
            try:
                out.append(TaskRow(**done.get(timeout=1.0)))
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            finished(out[-1])
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
    seen = {r.path for r in out}
    for t in tasks:
        if str(t) not in seen:  # its worker died (killed, out of memory) before reporting
            finished(TaskRow(t.name, str(t), "error", reason=f"{t.name}: the worker process running it ended "
                             f"unexpectedly (exit codes {[p.exitcode for p in procs]}); rerun with --jobs 1"))


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def format_table(result: BenchResult) -> str:
    """Human output: one row per task, then the summary metrics."""
    lines = [f"{'task':<24} {'status':<17} {'seed us':>10} {'best us':>10} {'speedup':>8} {'turns':>5} "
             f"{'wall s':>7}"]
    for r in result.rows:
        lines.append(f"{r.name[:24]:<24} {r.status:<17} {_fmt(r.seed_us, '10.3f'):>10} {_fmt(r.best_us, '10.3f'):>10} "
                     f"{_fmt(r.speedup, '7.2f') + ('x' if r.speedup is not None else ''):>8} {r.turns:>5} "
                     f"{r.wall_s:7.1f}")
        if r.reason and r.status in EXPLAINED:
            lines.append(f"    {r.reason}")
    m = result.metrics()
    lines += [
        "",
        f"times: {result.timing_label}, {result.chip}, {result.trials} trials per evaluation",
        f"execution rate  {m['execution_rate'] * 100:.1f}% ({m['solved']}/{m['tasks']} final kernels correct)",
        "Fast_1.0        " + ("n/a (needs an NPU: torch_npu timings)" if m["fast_1_0"] is None
                              else f"{m['fast_1_0'] * 100:.1f}%"),
        "S_self          " + ("n/a (no solved task)" if m["s_self"] is None
                              else f"{m['s_self']:.2f}x (median best/first over {m['solved']} solved tasks)"),
        f"total turns     {m['total_turns']}",
        f"wall time       {m['wall_s']:.1f} s ({result.jobs} job{'s' if result.jobs != 1 else ''})",
        f"tokens          {m['tokens']}" + (" (offline optimizer)" if result.model == "offline" else
                                             f" ({result.model})"),
    ]
    return "\n".join(lines)


def progress_line(row: TaskRow, done: int, total: int) -> str:
    what = f"{row.speedup:.2f}x" if row.speedup is not None else row.reason.split(";")[0][:80]
    return f"[{done}/{total}] {row.name:<24} {row.status:<17} {what} ({row.wall_s:.1f} s)"


if __name__ == "__main__":  # pragma: no cover - the CLI is `sage-npu bench`
    sys.exit("use: sage-npu bench SUITE")
