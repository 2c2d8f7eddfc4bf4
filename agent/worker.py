"""The agent's process beside the language server (DESIGN section 7): optimizer episodes, the
experience memory (LanceDB) and the resident rules live here, so a long model call, a crash
inside LanceDB or an episode's memory use never stalls or kills the server.

The process is spawned (never forked: the server may hold threads and LanceDB handles) on first
use. Requests go over one queue, events come back over another; a reader thread in the server
resolves each request's future and forwards progress. Inside the worker, episodes run on one
thread and quick calls (decisions, rules) on another, each with its own memory handle, so an
accept or a hover refresh never waits behind an episode. If the process dies, every pending
request fails with the reason and the next request starts a new process.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict
from pathlib import Path
from typing import Any

log = logging.getLogger("sage_npu.agent.worker")

EPISODE_KINDS = {"optimize"}


class WorkerError(RuntimeError):
    """The agent process could not answer: it raised (the message says what) or it died."""


class AgentWorker:
    def __init__(self) -> None:
        self._ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._proc = None
        self._requests = None
        self._events = None
        self._reader: threading.Thread | None = None
        self._pending: dict[int, tuple[Future, Callable[[dict], None] | None]] = {}
        self._next = 0
        self._closed = False

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self._requests, self._events = self._ctx.Queue(), self._ctx.Queue()
        self._proc = self._ctx.Process(target=worker_main, args=(self._requests, self._events),
                                       name="sage-agent", daemon=True)
        self._proc.start()
        self._reader = threading.Thread(target=self._read, args=(self._proc, self._events), daemon=True,
                                        name="sage-agent-reader")
        self._reader.start()

    def call(self, kind: str, payload: dict, on_progress: Callable[[dict], None] | None = None) -> Future:
        """Send one request; its future holds the answer (or a WorkerError)."""
        fut: Future = Future()
        with self._lock:
            if self._closed:
                fut.set_exception(WorkerError("the server is shutting down"))
                return fut
            self._ensure()
            self._next += 1
            rid = self._next
            self._pending[rid] = (fut, on_progress)
            self._requests.put((kind, rid, payload))
        fut.rid = rid  # type: ignore[attr-defined] - what cancel() names
        return fut

    def cancel(self, fut: Future) -> None:
        """Ask the worker to stop the request behind `fut` early; it still answers, with what it found."""
        with self._lock:
            if self._proc is not None and getattr(fut, "rid", None) in self._pending:
                self._requests.put(("cancel", 0, {"target": fut.rid}))

    def _read(self, proc, events) -> None:
        while True:
            try:
                kind, rid, data = events.get(timeout=0.5)
            except queue.Empty:
                if not proc.is_alive():
                    self._fail_all(proc, f"the agent process ended unexpectedly (exit code {proc.exitcode})")
                    return
                continue
            except (EOFError, OSError):
                self._fail_all(proc, "the agent process ended unexpectedly")
                return
            with self._lock:
                entry = self._pending.get(rid) if kind == "progress" else self._pending.pop(rid, None)
            if entry is None:
                continue
            fut, on_progress = entry
            if kind == "progress":
                if on_progress is not None:
                    try:
                        on_progress(data)
                    except Exception:  # noqa: BLE001 - a progress display must not end the request
                        log.exception("progress callback failed")
            elif kind == "done":
                fut.set_result(data)
            else:
                fut.set_exception(WorkerError(str(data)))

    def _fail_all(self, proc, why: str) -> None:
        with self._lock:
            if self._proc is not proc:
                return
            pending, self._pending = self._pending, {}
            self._proc = None
        for fut, _ in pending.values():
            if not fut.done():
                fut.set_exception(WorkerError(why))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc, requests = self._proc, self._requests
            self._proc = None
        if proc is not None:
            try:
                requests.put(("shutdown", 0, {}))
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
    state = _State()
    episodes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sage-episode")
    quick = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sage-memory")
    while True:
        kind, rid, payload = requests.get()
        if kind == "shutdown":
            break
        if kind == "cancel":
            state.cancel(payload["target"])
            continue
        pool = episodes if kind in EPISODE_KINDS else quick
        pool.submit(_handle, state, events, kind, rid, payload)
    episodes.shutdown(wait=True, cancel_futures=True)
    quick.shutdown(wait=True)
    state.close()


class _State:
    """Per-thread memory handles and the episode thread's Evaluator, reused while settings stay."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.evaluator = None
        self.eval_settings = None
        self.cancels: dict[int, threading.Event] = {}

    def cancel_event(self, rid: int) -> threading.Event:
        return self.cancels.setdefault(rid, threading.Event())

    def cancel(self, rid: int) -> None:
        self.cancel_event(rid).set()   # the episode stops before its next candidate

    def memory(self, settings: dict, create: bool):
        from sage_npu.memory.experience_memory import ExperienceMemory
        from sage_npu.memory.settings import MemorySettings

        key = repr(sorted(settings.items()))
        cached = getattr(self.local, "memory", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        mem = ExperienceMemory.open(MemorySettings.model_validate(settings), create=create)
        self.local.memory = (key, mem)
        return mem

    def get_evaluator(self, settings: dict):
        from sage_npu.npu_eval.evaluate import Evaluator
        from sage_npu.npu_eval.settings import EvalSettings

        s = EvalSettings.model_validate(settings)
        if self.evaluator is None or self.eval_settings != s:
            if self.evaluator is not None:
                self.evaluator.close()
            self.evaluator, self.eval_settings = Evaluator(s), s
        return self.evaluator

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()


def _handle(state: _State, events, kind: str, rid: int, payload: dict) -> None:
    try:
        result = HANDLERS[kind](state, events, rid, payload)
    except Exception as e:  # noqa: BLE001 - every failure goes back to the caller, never kills the worker
        log.exception("agent request %s failed", kind)
        events.put(("error", rid, f"{type(e).__name__}: {e}"))
    else:
        events.put(("done", rid, result))


def _optimize(state: _State, events, rid: int, p: dict) -> Any:
    from sage_npu.agent.optimize import optimize
    from sage_npu.agent.settings import AgentSettings

    try:
        memory = state.memory(p["memory"], create=True)
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
            events.put(("progress", rid, {"kind": "tokens", "chars": streamed["chars"]}))

    def on_attempt(a) -> None:
        streamed["chars"] = 0
        events.put(("progress", rid, {"kind": "attempt", **asdict(a)}))

    return optimize(p["task"], state.get_evaluator(p["eval"]), AgentSettings.model_validate(p["agent"]),
                    memory=memory, hold=True, on_attempt=on_attempt, on_token=on_token,
                    cancel=state.cancel_event(rid))


def _decide(state: _State, events, rid: int, p: dict) -> Any:
    return state.memory(p["memory"], create=True).decide(p["episode_id"], p["decision"], p["attempt_id"])


def _existing_memory(state: _State, p: dict):
    """The memory if it exists, else its path: reading rules or counts must never create one."""
    from sage_npu.memory.experience_memory import memory_path
    from sage_npu.memory.settings import MemorySettings
    from sage_npu.memory.store import META_FILE

    where = memory_path(MemorySettings.model_validate(p["memory"]))
    return state.memory(p["memory"], create=False) if (where / META_FILE).exists() else where


def _rules(state: _State, events, rid: int, p: dict) -> list[tuple[str, str, str]]:
    mem = _existing_memory(state, p)
    if isinstance(mem, Path):
        return []
    return [(r.id, r.title, r.text) for r in mem.list_items(kind="rule", status="resident")]


def _overview(state: _State, events, rid: int, p: dict) -> dict:
    mem = _existing_memory(state, p)
    if isinstance(mem, Path):
        return {"exists": False, "path": str(mem), "reason": "no memory yet: the first episode creates it"}
    rules = mem.list_items(kind="rule", status="resident")
    return {"exists": True, **mem.stats().model_dump(mode="json"),
            "rules": [{"id": r.id, "title": r.title, "text": r.text, "u": r.u} for r in rules]}


HANDLERS: dict[str, Callable] = {"optimize": _optimize, "decide": _decide, "rules": _rules, "overview": _overview}
