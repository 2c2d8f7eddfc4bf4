"""`sage-npu bench`: episodes over a suite of tasks and the summary metrics (README.md, Benchmarks and Using it;
docs/bench.md for waves, the journal and Ray).

A suite is a folder of task folders, or of KernelBench/NPUKernelBench/MultiKernelBench single-file tasks
(agent/suites.py). A task without a kernel is drafted by the model, or counted "unsolved" offline; a folder
that cannot be a task is kept as a "broken" row with the reason; the run goes on.

Episodes run in this process (`jobs == 1`), in `jobs` worker processes (agent/bench_pool.py) or as Ray tasks
(agent/bench_ray.py). Whichever runs them, the memory has one writer, this process, and one ordering rule:
the tasks, in suite order, are cut into waves of `agent.bench.wave`; every episode of a wave retrieves from
the memory as the earlier waves left it (workers only read it) and returns its log and lessons; when the wave
ends, its episodes are credited (ATU), their lessons stored and UGC run when due, in suite order. So a run's
memory depends on the suite order, the seed and the wave, not on how many workers ran it or when they ended.

With a journal (`--out FILE` writes FILE's `.journal.jsonl` beside it), every finished task and every
committed wave is appended as it happens, and a run started again with the same suite and settings carries
on where it stopped.

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
      "run": {                         # what makes two runs comparable
        "id": "hex",                   # kept across resumes; episode ids derive from it
        "runner": "process" | "ray",
        "wave": 8,                     # episodes per wave (the memory's ordering rule)
        "seed": 0,                     # eval.seed: the first trial's inputs
        "complete": true,              # false: interrupted, the rows so far (rerun to resume)
        "stopped": "",                 # why it is not complete
        "code_version": "0.1.0+git.abc1234",
        "settings": {"eval": {...}, "agent": {...}}
      },
      "tasks": [                       # one row per task, sorted by name
        {
          "name": "vadd_naive",        # the task folder's name
          "path": "/abs/path/of/task",
          "status": "improved" | "fixed" | "no_improvement" | "seed_not_correct" | "unsolved" | "broken" |
                    "error" | "timeout",
          "reason": "",                # why a task is broken / errored / timed out / its seed is not correct
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

import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, Field

from sage_npu.agent import suites
from sage_npu.agent.episode import EpisodeStatus
from sage_npu.agent.episode_memory import Retriever
from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.experience_memory import NewExperience
from sage_npu.memory.models import EpisodeLog
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.backends import resolve
from sage_npu.npu_eval.report import Status, timing_label
from sage_npu.npu_eval.settings import EvalSettings

if TYPE_CHECKING:
    from sage_npu.agent.bench_journal import Journal
    from sage_npu.memory.experience_memory import ExperienceMemory

SCHEMA_VERSION = 1


# A row's status: its episode's, or why there was no episode (`unsolved`: no kernel and no model;
# `broken`: not a task; `error`: the episode or its worker failed; `timeout`: ended after
# agent.bench.task_timeout_s).
RowStatus = Literal[EpisodeStatus, "unsolved", "broken", "error", "timeout"]
EXPLAINED: tuple[RowStatus, ...] = ("broken", "error", "timeout", "seed_not_correct", "unsolved")  # reason shown
Runner = Literal["process", "ray"]


class BenchError(Exception):
    """The suite cannot be benchmarked at all (missing folder, no tasks, a journal of another run)."""


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


@dataclass(frozen=True)
class TaskSpec:
    """One task of a run as a runner is handed it."""

    index: int                # its place in suite order: the credit order within a wave
    path: str                 # the task folder on the driver's machine
    episode_id: str


class TaskOutcome(BaseModel):
    """What running one task gives back (across processes, and in the journal): its row and, for an
    episode recorded in the memory, the log and lessons the one writer stores."""

    index: int
    row: TaskRow
    log: EpisodeLog | None = None
    lessons: list[NewExperience] = Field(default_factory=list)


class TaskRunner(Protocol):
    """Runs a wave's tasks (agent/bench_pool.py, agent/bench_ray.py); `done` hears each outcome,
    a failed or timed-out task's too, and `run` returns when every task is done."""

    name: Runner
    slots: int

    def run(self, specs: list[TaskSpec], done: Callable[[TaskOutcome], None]) -> None: ...

    def close(self) -> None: ...


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
    run_id: str = ""
    runner: Runner = "process"
    wave: int = 8
    seed: int = 0
    stopped: str = ""                      # why the run is not complete ("" when it is)
    settings: dict = field(default_factory=dict)

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
        run = {"id": self.run_id, "runner": self.runner, "wave": self.wave, "seed": self.seed,
               "complete": not self.stopped, "stopped": self.stopped, "code_version": code_version(),
               "settings": self.settings}
        return {"schema_version": SCHEMA_VERSION, "suite": self.suite, "backend": self.backend, "chip": self.chip,
                "timing_label": self.timing_label, "model": self.model, "turns": self.turns, "jobs": self.jobs,
                "trials": self.trials, "memory": self.memory, "run": run,
                "tasks": [r.__dict__ for r in self.rows], "metrics": self.metrics()}


def code_version() -> str:
    """sage-npu's version, with the commit when it runs from a git checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("sage-npu")
    except PackageNotFoundError:
        v = "unknown"
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                              capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return v
    return f"{v}+git.{head.stdout.strip()}" if head.returncode == 0 and head.stdout.strip() else v


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

def open_memory(settings: MemorySettings | None, read_only: bool = False) -> ExperienceMemory | None:
    """The memory of `settings` (None without one). `read_only`: a worker's view, which must see the
    writer's last commit at once (it reads only between the waves' commits)."""
    if settings is None:
        return None
    from sage_npu.memory.experience_memory import ExperienceMemory

    if read_only:
        return ExperienceMemory.open(settings.model_copy(update={"read_refresh_s": 0.0}), create=False)
    return ExperienceMemory.open(settings)


def run_task(spec: TaskSpec, path: Path, evaluator, agent: AgentSettings,
             retriever: Retriever | None = None) -> TaskOutcome:
    """One episode on the task folder `path` (the model's when one is configured, else offline),
    deferred when a `retriever` is given; never raises: a failure becomes the row's status and reason."""
    from sage_npu.agent.llm import LLMClient
    from sage_npu.agent.optimize import optimize
    from sage_npu.npu_eval.task import TaskError

    row = TaskRow(path.name, spec.path, "error")
    t0 = time.perf_counter()
    if not suites.has_kernel(path) and not LLMClient(agent.llm).configured:
        row.status = "unsolved"
        row.reason = (f"{path.name}: no kernel yet, and the offline optimizer does not write kernels from scratch: "
                      "set $SAGE_NPU_LLM_BASE_URL to let a model draft it")
        return TaskOutcome(index=spec.index, row=row)
    log, lessons = None, []
    try:
        r = optimize(path, evaluator, agent, retriever=retriever, episode_id=spec.episode_id)
    except TaskError as e:
        row.status, row.reason = "broken", str(e)
    except Exception as e:  # noqa: BLE001 - one task's failure must not end the run; the row says why
        row.reason = f"{path.name}: the episode failed: {type(e).__name__}: {e}"
    else:
        _fill_row(row, r)
        if r.deferred is not None:
            log, lessons = r.deferred.log, list(r.deferred.lessons)
    row.wall_s = time.perf_counter() - t0
    return TaskOutcome(index=spec.index, row=row, log=log, lessons=lessons)


def _fill_row(row: TaskRow, r) -> None:
    """The row of a finished episode (`r`: its OptimizeResult)."""
    row.status, row.turns, row.episode_id, row.applied = r.status, r.turns, r.episode_id, list(r.applied)
    row.tokens = r.tokens
    if r.error:
        row.reason = f"{row.name}: the episode stopped early: {r.error}"
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
        row.reason = (f"{row.name}: the seed kernel is not correct ({r.seed.status}"
                      + (f": {detail}" if detail else "") + "); sage-npu eval shows why")


def failed_outcome(spec: TaskSpec, status: Literal["error", "timeout"], reason: str,
                   wall_s: float = 0.0) -> TaskOutcome:
    """The outcome of a task whose worker failed or that ran out of time: no episode reaches the memory."""
    name = Path(spec.path).name
    return TaskOutcome(index=spec.index, row=TaskRow(name, spec.path, status, reason=f"{name}: {reason}",
                                                     wall_s=wall_s))


# --- the run

def commit_wave(memory: ExperienceMemory, outcomes: list[TaskOutcome], agent: AgentSettings) -> None:
    """The one writer: credit each episode, store its lessons and run UGC when due, in suite order.
    Crediting is idempotent by episode id, so a wave committed again after a crash changes nothing."""
    from sage_npu.agent.llm import LLMClient
    from sage_npu.agent.rule_abstraction import consolidate_if_due

    with LLMClient(agent.llm) as client:
        for o in sorted(outcomes, key=lambda o: o.index):
            if o.log is None:
                continue
            if memory.credit(o.log).already_credited:
                continue
            if o.lessons:
                memory.add_experiences(o.lessons)
            consolidate_if_due(memory, agent.consolidate_every, client)


def episode_id(run_id: str, index: int) -> str:
    """A task's episode id: fixed by the run and the task's place, so a resumed run credits it once."""
    return uuid.uuid5(uuid.UUID(run_id), str(index)).hex


def run_suite(suite: str | Path, eval_settings: EvalSettings, agent: AgentSettings, jobs: int = 1,
              memory_settings: MemorySettings | None = None,
              on_row: Callable[[TaskRow, int, int], None] | None = None,
              journal_path: Path | None = None, fresh: bool = False) -> BenchResult:
    """Run an episode (agent.turns at most) over every task of `suite` in waves (see the module docstring);
    `on_row(row, done, total)` as each finishes (a resumed run's journaled rows first). With
    `memory_settings`, every episode is credited in that memory. With `journal_path`, a run of the same
    suite and settings journaled there resumes (`fresh`: starts over). Ctrl-C ends the run with the rows
    so far (`BenchResult.stopped` says so)."""
    from sage_npu.agent import bench_journal

    t0 = time.perf_counter()
    root = Path(suite).expanduser().resolve()
    tasks, broken = discover(root)
    total = len(tasks) + len(broken)
    rows: list[TaskRow] = []

    def finished(row: TaskRow) -> None:
        rows.append(row)
        if on_row:
            on_row(row, len(rows), total)

    model = _model_name(agent)
    memory = open_memory(memory_settings)  # created here once, so parallel workers never race to create it
    where = str(_memory_path(memory_settings)) if memory_settings is not None else None
    header = bench_journal.RunHeader(run_id=uuid.uuid4().hex, suite=str(root), tasks=[str(t) for t in tasks],
                                     wave=agent.bench.wave, turns=agent.turns, model=model, memory=where)
    journal = bench_journal.Journal.open(journal_path, header, fresh) if journal_path is not None else None
    run_id = journal.header.run_id if journal is not None else header.run_id
    resumed = dict(journal.outcomes) if journal is not None else {}
    for r in [*broken, *(resumed[i].row for i in sorted(resumed))]:
        finished(r)
    specs = [TaskSpec(i, str(t), episode_id(run_id, i)) for i, t in enumerate(tasks)]
    runner = make_runner(eval_settings, agent, jobs, memory_settings, memory, len(tasks) - len(resumed))
    try:
        stopped = _run_waves(runner, specs, resumed, journal, memory, agent, finished)
    finally:
        if runner is not None:
            runner.close()
    if stopped and journal_path is not None:
        stopped += f"; run the same command again to resume from {journal_path}"
    rows.sort(key=lambda r: r.name)
    if resolve(eval_settings.backend)[0] == "ascend":
        add_torch_baselines(rows, eval_settings)
    return BenchResult(suite=str(root), backend=resolve(eval_settings.backend)[0], chip=eval_settings.chip,
                       turns=agent.turns,
                       jobs=runner.slots if runner is not None else jobs, trials=eval_settings.trials, memory=where,
                       rows=rows, wall_s=time.perf_counter() - t0, model=model, run_id=run_id,
                       runner=runner.name if runner is not None else ("ray" if agent.bench.ray else "process"),
                       wave=agent.bench.wave, seed=eval_settings.seed, stopped=stopped,
                       settings={"eval": eval_settings.model_dump(mode="json"), "agent": agent.model_dump(mode="json")})


def _run_waves(runner: TaskRunner | None, specs: list[TaskSpec], resumed: dict[int, TaskOutcome],
               journal: Journal | None, memory: ExperienceMemory | None, agent: AgentSettings,
               finished: Callable[[TaskRow], None]) -> str:
    """Every wave not committed yet: run, then commit; "" when all are, else why the run stopped."""
    wave = agent.bench.wave
    try:
        for w, start in enumerate(range(0, len(specs), wave)):
            if journal is not None and w in journal.waves:
                continue
            got = _run_wave(runner, specs[start:start + wave], resumed, journal, finished)
            if memory is not None:
                commit_wave(memory, got, agent)
            if journal is not None:
                journal.wave_done(w)
    except (KeyboardInterrupt, SystemExit):   # Ctrl-C, SIGTERM: the rows so far are the summary
        return "interrupted"
    except Exception as e:  # noqa: BLE001 - the rows so far are still a summary (a lost cluster, a full disk)
        return f"stopped by {type(e).__name__}: {e}"
    return ""


def _run_wave(runner: TaskRunner | None, wave: list[TaskSpec], resumed: dict[int, TaskOutcome],
              journal: Journal | None,
              finished: Callable[[TaskRow], None]) -> list[TaskOutcome]:
    """Run the wave's tasks not journaled yet; every outcome of the wave, journaled ones included."""
    got = {s.index: resumed[s.index] for s in wave if s.index in resumed}

    def done(o: TaskOutcome) -> None:
        got[o.index] = o
        if journal is not None:
            journal.task_done(o)
        finished(o.row)

    todo = [s for s in wave if s.index not in got]
    if todo:
        assert runner is not None
        runner.run(todo, done)
    return [got[s.index] for s in wave if s.index in got]


def make_runner(eval_settings: EvalSettings, agent: AgentSettings, jobs: int, memory_settings: MemorySettings | None,
                memory: ExperienceMemory | None, todo: int) -> TaskRunner | None:
    """Ray's when agent.bench.ray, else this process's (jobs 1) or a pool of `jobs` processes; None with
    nothing left to run."""
    if todo <= 0:
        return None
    if agent.bench.ray:
        from sage_npu.agent.bench_ray import RayRunner

        return RayRunner(eval_settings, agent, memory_settings)
    from sage_npu.agent.bench_pool import InProcessRunner, ProcessRunner

    if min(jobs, todo) <= 1:
        return InProcessRunner(eval_settings, agent, memory)
    return ProcessRunner(min(jobs, todo), eval_settings, agent, memory_settings)


def _memory_path(settings: MemorySettings) -> Path:
    from sage_npu.memory.experience_memory import memory_path

    return memory_path(settings)


def _model_name(agent: AgentSettings) -> str:
    from sage_npu.agent.llm import LLMClient

    client = LLMClient(agent.llm)
    return (client.model or "unnamed") if client.configured else "offline"


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
    where = "Ray" if result.runner == "ray" else f"{result.jobs} job{'s' if result.jobs != 1 else ''}"
    lines += [
        "",
        f"times: {result.timing_label}, {result.chip}, {result.trials} trials per evaluation",
        f"execution rate  {m['execution_rate'] * 100:.1f}% ({m['solved']}/{m['tasks']} final kernels correct)",
        "Fast_1.0        " + ("n/a (needs an NPU: torch_npu timings)" if m["fast_1_0"] is None
                              else f"{m['fast_1_0'] * 100:.1f}%"),
        "S_self          " + ("n/a (no solved task)" if m["s_self"] is None
                              else f"{m['s_self']:.2f}x (median best/first over {m['solved']} solved tasks)"),
        f"total turns     {m['total_turns']}",
        f"wall time       {m['wall_s']:.1f} s ({where}, waves of {result.wave})",
        f"tokens          {m['tokens']}" + (" (offline optimizer)" if result.model == "offline" else
                                             f" ({result.model})"),
    ]
    if result.stopped:
        lines.append(f"NOT COMPLETE    {result.stopped}")
    return "\n".join(lines)


def progress_line(row: TaskRow, done: int, total: int) -> str:
    what = f"{row.speedup:.2f}x" if row.speedup is not None else row.reason.split(";")[0][:80]
    return f"[{done}/{total}] {row.name:<24} {row.status:<17} {what} ({row.wall_s:.1f} s)"


if __name__ == "__main__":  # pragma: no cover - the CLI is `sage-npu bench`
    sys.exit("use: sage-npu bench SUITE")
