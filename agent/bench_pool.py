"""The runners of `sage-npu bench --jobs N` (the Ray one is agent/bench_ray.py): this process for one job,
else N spawned worker processes.

Each worker has its own Evaluator and a read-only handle on the memory (it retrieves; the bench's one
writer credits, between waves). A task goes to an idle worker; a worker that dies (killed, out of memory)
has its task run again on a fresh worker, `agent.bench.max_retries` times at most; a task running past
`agent.bench.task_timeout_s` has its worker killed and is recorded as a timeout. In this process (one job)
there is no one to end a hung episode: the timeout does not apply.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sage_npu.agent.bench import Runner, TaskOutcome, TaskSpec, failed_outcome, open_memory, run_task
from sage_npu.agent.episode_memory import Retriever
from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings

POLL_S = 0.5


class InProcessRunner:
    """One job: the episodes run here, one after the other, retrieving from the writer's own handle."""

    name: Runner = "process"
    slots = 1

    def __init__(self, eval_settings: EvalSettings, agent: AgentSettings, retriever: Retriever | None) -> None:
        from sage_npu.npu_eval.evaluate import Evaluator

        self.agent = agent
        self.retriever = retriever
        self.evaluator = Evaluator(eval_settings.verifying())

    def run(self, specs: list[TaskSpec], done: Callable[[TaskOutcome], None]) -> None:
        for s in specs:
            done(run_task(s, Path(s.path), self.evaluator, self.agent, self.retriever))

    def close(self) -> None:
        self.evaluator.close()


def _worker(slot: int, eval_settings: EvalSettings, memory_settings: MemorySettings | None, agent: AgentSettings,
            inbox, results) -> None:
    """A worker process: its own Evaluator and memory view, tasks from its inbox until the sentinel."""
    from sage_npu.npu_eval.evaluate import Evaluator

    memory, memory_error = None, ""
    try:
        memory = open_memory(memory_settings, read_only=True)
    except Exception as e:  # noqa: BLE001 - reported in every row this worker runs
        memory_error = f"the experience memory cannot be read ({e}); ran without it"
    with Evaluator(eval_settings.verifying()) as ev:
        while (spec := inbox.get()) is not None:
            out = run_task(spec, Path(spec.path), ev, agent, memory)
            if memory_error and not out.row.reason:
                out.row.reason = memory_error
            results.put((slot, out))


@dataclass
class _Busy:
    spec: TaskSpec
    started: float
    tries: int


class ProcessRunner:
    """`jobs` worker processes (spawned: never forked from a process holding LanceDB handles)."""

    name: Runner = "process"

    def __init__(self, jobs: int, eval_settings: EvalSettings, agent: AgentSettings,
                 memory_settings: MemorySettings | None) -> None:
        self.ctx = mp.get_context("spawn")
        self.args = (eval_settings, memory_settings, agent)
        self.timeout = agent.bench.task_timeout_s
        self.retries = agent.bench.max_retries
        self.slots = jobs
        self.results = self.ctx.Queue()
        self.workers: list[tuple[Any, Any]] = [self._start(i) for i in range(jobs)]   # (process, inbox)

    def _start(self, slot: int) -> tuple[Any, Any]:
        inbox = self.ctx.Queue()
        p = self.ctx.Process(target=_worker, args=(slot, *self.args, inbox, self.results),
                             name=f"sage-bench-{slot}", daemon=False)
        p.start()
        return p, inbox

    def _replace(self, slot: int) -> None:
        p, _ = self.workers[slot]
        if p.is_alive():
            p.kill()
        p.join()
        self.workers[slot] = self._start(slot)

    def run(self, specs: list[TaskSpec], done: Callable[[TaskOutcome], None]) -> None:
        todo = deque((s, 0) for s in specs)
        busy: dict[int, _Busy] = {}
        while todo or busy:
            for slot, (_, inbox) in enumerate(self.workers):
                if slot not in busy and todo:
                    spec, tries = todo.popleft()
                    inbox.put(spec)
                    busy[slot] = _Busy(spec, time.monotonic(), tries)
            try:
                slot, out = self.results.get(timeout=POLL_S)
            except queue.Empty:
                pass
            else:
                b = busy.get(slot)
                if b is not None and b.spec.index == out.index:   # else a late answer of a replaced worker
                    del busy[slot]
                    done(out)
            self._check(busy, todo, done)

    def _check(self, busy: dict[int, _Busy], todo: deque, done: Callable[[TaskOutcome], None]) -> None:
        """Workers that died, and tasks past their time."""
        for slot, b in list(busy.items()):
            p, _ = self.workers[slot]
            elapsed = time.monotonic() - b.started
            if not p.is_alive():
                code = p.exitcode
                del busy[slot]
                self._replace(slot)
                if b.tries < self.retries:
                    todo.appendleft((b.spec, b.tries + 1))
                else:
                    done(failed_outcome(b.spec, "error", f"its worker process ended unexpectedly {b.tries + 1} "
                                        f"times (exit code {code})", elapsed))
            elif elapsed > self.timeout:
                del busy[slot]
                self._replace(slot)
                done(failed_outcome(b.spec, "timeout", f"ended after {self.timeout:g} s "
                                    "(agent.bench.task_timeout_s)", elapsed))

    def close(self) -> None:
        for _, inbox in self.workers:
            inbox.put(None)
        for p, _ in self.workers:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
