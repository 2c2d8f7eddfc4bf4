"""The agent's process beside the language server: optimizer episodes, the experience memory
(LanceDB) and the resident rules live here, so a long model call, a crash inside LanceDB or an
episode's memory use never stalls or kills the editor's server.

The process is spawned (never forked: the server may hold threads and LanceDB handles) by
`start` (the language server calls it at initialize, so the first command does not pay the
start-up) or on first use; once up it imports the episode code in the background. Requests go
over one queue, events come back over another, each a typed message (the `*Request` models
below, `Call`, `Event`); a reader thread in the caller resolves each request's future and
forwards progress. Inside the worker, episodes run on one thread and quick calls (decisions,
expiries, rules, the overview) on another, each with its own memory handle, so an accept or a
hover refresh never waits behind an episode. If the process dies, every pending request fails
with the reason and the next request starts a new process.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from sage_npu.agent.episode import Attempt, OptimizeResult
from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.experience_memory import Stats
from sage_npu.memory.models import Calibration
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings

# MemorySettings is re-exported: the language server types the memory part of its settings with
# it without importing `memory` itself (its arrows go to `agent` and `npu_eval` only).
__all__ = ["AgentWorker", "Attempt", "CalibrateRequest", "Calibration", "DecideAnswer", "DecideRequest",
           "ExpireAnswer", "ExpireRequest",
           "MemorySettings", "OptimizeRequest", "OptimizeResult", "Overview", "OverviewRequest", "Request",
           "RequestKind", "ResidentRule", "RulesRequest", "TokensProgress", "WorkerError"]

log = logging.getLogger("sage_npu.agent.worker")

RequestKind = Literal["optimize", "decide", "expire", "rules", "overview", "calibrate"]
EPISODE_KINDS: frozenset[RequestKind] = frozenset({"optimize"})  # on the episode thread; the rest are quick


# ---- the messages


class OptimizeRequest(BaseModel):
    """Run one episode on the task, held open in the memory for the person's decision."""

    kind: Literal["optimize"] = "optimize"
    task: str
    eval: EvalSettings
    agent: AgentSettings
    memory: MemorySettings


class DecideRequest(BaseModel):
    """The person accepted or rejected the suggestion `attempt_id` of an open episode."""

    kind: Literal["decide"] = "decide"
    episode_id: str
    decision: Literal["accept", "reject"]
    attempt_id: str
    memory: MemorySettings


class ExpireRequest(BaseModel):
    """Credit, as the agent alone would have, every open episode whose decision deadline
    (`memory.editor_timeout_s` after it was recorded) has passed. A memory that does not exist has
    none: nothing is created."""

    kind: Literal["expire"] = "expire"
    memory: MemorySettings


class RulesRequest(BaseModel):
    """The memory's resident rules (none when no memory exists yet: reading never creates one)."""

    kind: Literal["rules"] = "rules"
    memory: MemorySettings


class OverviewRequest(BaseModel):
    """The memory's counts and resident rules, for an editor's "Show memory" view."""

    kind: Literal["overview"] = "overview"
    memory: MemorySettings


class CalibrateRequest(BaseModel):
    """Record advisor findings the editor verified (docs/advisor.md): estimated against delivered,
    in the memory when one exists."""

    kind: Literal["calibrate"] = "calibrate"
    records: list[Calibration]
    memory: MemorySettings


Request = OptimizeRequest | DecideRequest | ExpireRequest | RulesRequest | OverviewRequest | CalibrateRequest


class ResidentRule(BaseModel):
    id: str
    title: str
    text: str
    u: float


class DecideAnswer(BaseModel):
    """What crediting the decision did: `reward` is None when the episode was not credited now."""

    credited: bool
    reward: float | None = None


class ExpireAnswer(BaseModel):
    """The episodes an ExpireRequest credited as the agent's (none when none was due)."""

    episode_ids: list[str] = Field(default_factory=list)


class Overview(BaseModel):
    """The answer to an OverviewRequest: the memory's stats and resident rules, or (stats None) why
    there are none."""

    path: str
    stats: Stats | None = None
    reason: str | None = None
    rules: list[ResidentRule] = Field(default_factory=list)


@dataclass(frozen=True)
class TokensProgress:
    """The model's answer is streaming in: `chars` characters so far this turn."""

    chars: int
    kind: Literal["tokens"] = "tokens"


@dataclass(frozen=True)
class AttemptProgress:
    """A candidate was evaluated."""

    attempt: Attempt
    kind: Literal["attempt"] = "attempt"


Progress = TokensProgress | AttemptProgress


@dataclass(frozen=True)
class Call:
    """A request on the request queue; `rid` names its events."""

    rid: int
    request: Request


@dataclass(frozen=True)
class Cancel:
    """Stop the request `target` before its next candidate (it still answers, with what it found)."""

    target: int


@dataclass(frozen=True)
class Shutdown:
    pass


@dataclass(frozen=True)
class Event:
    """On the event queue: progress of request `rid`, its answer (`done`) or its failure (`error`)."""

    rid: int
    kind: Literal["progress", "done", "error"]
    data: Any = None


class WorkerError(RuntimeError):
    """The agent process could not answer: it raised (the message says what) or it died."""


# ---- the caller's side


@dataclass
class _Pending:
    future: Future
    on_progress: Callable[[Progress], None] | None = None
    rid: int = 0


class AgentWorker:
    """The agent process as seen from its caller: `call` a request, get a future of its answer."""

    def __init__(self) -> None:
        self._ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._proc: Any = None
        self._requests: Any = None
        self._events: Any = None
        self._pending: dict[int, _Pending] = {}
        self._next = 0
        self._closed = False

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self._requests, self._events = self._ctx.Queue(), self._ctx.Queue()
        self._proc = self._ctx.Process(target=worker_main, args=(self._requests, self._events),
                                       name="sage-agent", daemon=True)
        self._proc.start()
        threading.Thread(target=self._read, args=(self._proc, self._events), daemon=True,
                         name="sage-agent-reader").start()

    def start(self) -> None:
        """Start the process now if it is not running (it also starts on the first `call`)."""
        with self._lock:
            if not self._closed:
                self._ensure()

    def call(self, request: Request, on_progress: Callable[[Progress], None] | None = None) -> Future:
        """Send one request; its future holds the answer (OptimizeResult, DecideAnswer,
        ExpireAnswer, list[ResidentRule] or Overview, by the request's kind) or a WorkerError."""
        fut: Future = Future()
        with self._lock:
            if self._closed:
                fut.set_exception(WorkerError("the server is shutting down"))
                return fut
            self._ensure()
            self._next += 1
            self._pending[self._next] = _Pending(fut, on_progress, self._next)
            self._requests.put(Call(self._next, request))
        return fut

    def cancel(self, fut: Future) -> None:
        """Ask the worker to stop the request behind `fut` early; it still answers, with what it found."""
        with self._lock:
            rid = next((p.rid for p in self._pending.values() if p.future is fut), None)
            if self._proc is not None and rid is not None:
                self._requests.put(Cancel(rid))

    def _read(self, proc, events) -> None:
        while True:
            try:
                event: Event = events.get(timeout=0.5)
            except queue.Empty:
                if not proc.is_alive():
                    self._fail_all(proc, f"the agent process ended unexpectedly (exit code {proc.exitcode})")
                    return
                continue
            except (EOFError, OSError):
                self._fail_all(proc, "the agent process ended unexpectedly")
                return
            self._deliver(event)

    def _deliver(self, event: Event) -> None:
        with self._lock:
            pending = (self._pending.get(event.rid) if event.kind == "progress"
                       else self._pending.pop(event.rid, None))
        if pending is None:
            return
        if event.kind == "progress":
            if pending.on_progress is not None:
                try:
                    pending.on_progress(event.data)
                except Exception:  # noqa: BLE001 - a progress display must not end the request
                    log.exception("progress callback failed")
        elif event.kind == "done":
            pending.future.set_result(event.data)
        else:
            pending.future.set_exception(WorkerError(str(event.data)))

    def _fail_all(self, proc, why: str) -> None:
        with self._lock:
            if self._proc is not proc:
                return
            pending, self._pending = self._pending, {}
            self._proc = None
        for p in pending.values():
            if not p.future.done():
                p.future.set_exception(WorkerError(why))

    def kill(self) -> None:
        """End the process abruptly, as a crash would (tests); pending requests fail with the reason."""
        with self._lock:
            proc = self._proc
        if proc is not None:
            proc.kill()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc, requests = self._proc, self._requests
            self._proc = None
        if proc is not None:
            try:
                requests.put(Shutdown())
                proc.join(timeout=5)
            except (OSError, ValueError):
                pass
            if proc.is_alive():
                proc.kill()
                proc.join()


# ---- inside the worker process


def worker_main(requests, events) -> None:
    from concurrent.futures import ThreadPoolExecutor

    logging.basicConfig(level=logging.WARNING)
    state = WorkerState()
    episodes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sage-episode")
    quick = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sage-memory")
    # Imports in the background, so the first memory command and the first episode do not pay them;
    # a daemon thread, so a shutdown soon after start-up does not wait for them.
    threading.Thread(target=_preload, daemon=True, name="sage-preload").start()
    while True:
        message: Call | Cancel | Shutdown = requests.get()
        if isinstance(message, Shutdown):
            break
        if isinstance(message, Cancel):
            state.cancel(message.target)
            continue
        pool = episodes if message.request.kind in EPISODE_KINDS else quick
        pool.submit(_handle, state, events, message)
    episodes.shutdown(wait=True, cancel_futures=True)
    quick.shutdown(wait=True)
    state.close()


class WorkerState:
    """Per-thread memory handles and the episode thread's Evaluator, reused while settings stay."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.evaluator = None
        self.eval_settings: EvalSettings | None = None
        self.cancels: dict[int, threading.Event] = {}

    def cancel_event(self, rid: int) -> threading.Event:
        return self.cancels.setdefault(rid, threading.Event())

    def cancel(self, rid: int) -> None:
        self.cancel_event(rid).set()   # the episode stops before its next candidate

    def memory(self, settings: MemorySettings, create: bool):
        from sage_npu.memory.experience_memory import ExperienceMemory

        cached = getattr(self.local, "memory", None)
        if cached is not None and cached[0] == settings:
            return cached[1]
        mem = ExperienceMemory.open(settings, create=create)
        self.local.memory = (settings, mem)
        return mem

    def existing_memory(self, settings: MemorySettings):
        """The memory if it exists, else None: reading rules or counts must never create one."""
        from sage_npu.memory.store import StoreNotFound

        try:
            return self.memory(settings, create=False)
        except StoreNotFound:
            return None

    def get_evaluator(self, settings: EvalSettings):
        from sage_npu.npu_eval.evaluate import Evaluator

        settings = settings.verifying()
        if self.evaluator is None or self.eval_settings != settings:
            if self.evaluator is not None:
                self.evaluator.close()
            self.evaluator, self.eval_settings = Evaluator(settings), settings
        return self.evaluator

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()


def _preload() -> None:
    """Import what requests will need while nothing waits for it: LanceDB first (its import alone
    takes seconds, and every memory request needs it), then the episode code."""
    try:
        import lancedb  # noqa: F401

        import sage_npu.agent.optimize  # noqa: F401
    except Exception:  # noqa: BLE001 - the request that needs it imports it again and says what fails
        log.exception("preloading failed")


def _handle(state: WorkerState, events, call: Call) -> None:
    r = call.request
    try:
        if isinstance(r, OptimizeRequest):
            result: Any = _optimize(state, events, call.rid, r)
        elif isinstance(r, DecideRequest):
            result = _decide(state, r)
        elif isinstance(r, ExpireRequest):
            result = _expire(state, r)
        elif isinstance(r, RulesRequest):
            result = _rules(state, r)
        elif isinstance(r, CalibrateRequest):
            result = _calibrate(state, r)
        else:
            result = _overview(state, r)
    except Exception as e:  # noqa: BLE001 - every failure goes back to the caller, never kills the worker
        log.exception("agent request %s failed", r.kind)
        events.put(Event(call.rid, "error", f"{type(e).__name__}: {e}"))
    else:
        events.put(Event(call.rid, "done", result))


def _optimize(state: WorkerState, events, rid: int, r: OptimizeRequest) -> OptimizeResult:
    from sage_npu.agent.optimize import optimize

    try:
        memory = state.memory(r.memory, create=True)
    except Exception as e:  # noqa: BLE001 - a broken memory must not stop the optimizer
        log.warning("the experience memory cannot be opened (%s); optimizing without it", e)
        memory = None
    streamed = {"chars": 0, "sent": 0.0}

    def on_token(piece: str) -> None:
        # The model's answer streams in; tell the editor at most twice a second that it is coming.
        streamed["chars"] += len(piece)
        now = time.monotonic()
        if now - streamed["sent"] >= 0.5:
            streamed["sent"] = now
            events.put(Event(rid, "progress", TokensProgress(int(streamed["chars"]))))

    def on_attempt(a: Attempt) -> None:
        streamed["chars"] = 0
        events.put(Event(rid, "progress", AttemptProgress(a)))

    return optimize(r.task, state.get_evaluator(r.eval), r.agent, memory=memory, hold=True,
                    on_attempt=on_attempt, on_token=on_token, cancel=state.cancel_event(rid))


def _decide(state: WorkerState, r: DecideRequest) -> DecideAnswer:
    credit = state.memory(r.memory, create=True).decide(r.episode_id, r.decision, r.attempt_id)
    return DecideAnswer(credited=credit.credited, reward=credit.reward)


def _expire(state: WorkerState, r: ExpireRequest) -> ExpireAnswer:
    mem = state.existing_memory(r.memory)
    if mem is None:
        return ExpireAnswer()
    return ExpireAnswer(episode_ids=[c.episode_id for c in mem.expire_open() if c.credited])


def _calibrate(state: WorkerState, r: CalibrateRequest) -> int:
    """Store the verified findings in the memory, if one exists (the editor's verification never
    creates a memory: the first episode does); how many were stored."""
    mem = state.existing_memory(r.memory)
    if mem is None:
        return 0
    mem.record_calibration(r.records)
    return len(r.records)


def _resident(mem) -> list[ResidentRule]:
    return [ResidentRule(id=r.id, title=r.title, text=r.text, u=r.u)
            for r in mem.list_items(kind="rule", status="resident")]


def _rules(state: WorkerState, r: RulesRequest) -> list[ResidentRule]:
    mem = state.existing_memory(r.memory)
    return [] if mem is None else _resident(mem)


def _overview(state: WorkerState, r: OverviewRequest) -> Overview:
    from sage_npu.memory.experience_memory import memory_path

    mem = state.existing_memory(r.memory)
    if mem is None:
        return Overview(path=str(Path(memory_path(r.memory))),
                        reason="no memory yet: the first episode creates it")
    stats = mem.stats()
    return Overview(path=stats.path, stats=stats, rules=_resident(mem))
