"""The parent's side of the plan worker, the zygote of npu_eval/zygote.py: start it (scrubbed
environment, spawned, never forked), send requests, restart it after a failure. The zygote
enforces each plan's time limit; this side only guards against the zygote itself hanging.
The answer is validated here, once, into a `LaunchPlan` or a `PlanFailure`
(npu_eval/launch_plan.py); a malformed answer is a PlanWorkerError naming what was wrong, and
the confinement layers the platform refused are logged once."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import subprocess
import sys
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from sage_npu.npu_eval.launch_plan import LaunchPlan, PlanAnswer, PlanFailure, PlanRequest
from sage_npu.npu_eval.sandbox import confine_python_worker

log = logging.getLogger(__name__)
# Past the plan's own limit (which the zygote enforces, GRACE_S later at the latest), the zygote
# itself is taken for hung.
_ZYGOTE_SLACK_S = 15.0

# What the worker's environment keeps: enough to run Python and torch, no secrets.
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "OMP_NUM_THREADS", "TMPDIR",
             "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT")


class PlanWorkerError(Exception):
    pass


def worker_env(memory_bytes: int) -> dict[str, str]:
    """The zygote's environment: the allow-list, the real HOME (the zygote never runs user code;
    each plan's runner gets a HOME in its scratch, and the real one hidden)."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEEP}
    env["HOME"] = str(Path.home())
    env["SAGE_PLAN_MEMORY_BYTES"] = str(memory_bytes)
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class PlanWorker:
    """A long-lived plan zygote. Thread-safe: one request at a time."""

    def __init__(self, memory_limit_mb: int = 8192) -> None:
        self._memory_bytes = memory_limit_mb << 20
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self.stderr_tail = ""

    def _start(self, timeout: float) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "sage_npu.npu_eval.zygote"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=worker_env(self._memory_bytes), cwd="/", text=True, start_new_session=True,
            preexec_fn=confine_python_worker(self._memory_bytes),
        )
        self._read(timeout)

    def _read(self, timeout: float) -> str:
        assert self._proc and self._proc.stdout
        sel = selectors.DefaultSelector()
        sel.register(self._proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise PlanWorkerError(f"the plan worker did not answer within {timeout:.0f} s")
                if sel.select(left):
                    line = self._proc.stdout.readline()
                    if not line:
                        err = self._drain_stderr()
                        self.close()
                        raise PlanWorkerError(f"the plan worker died: {err[-2000:] or 'no message'}")
                    return line
        finally:
            sel.close()

    def _drain_stderr(self) -> str:
        if not self._proc or not self._proc.stderr:
            return ""
        try:
            self._proc.kill()
            return self._proc.stderr.read()
        except (OSError, ValueError):
            return ""

    def plan(self, request: PlanRequest, timeout: float) -> LaunchPlan | PlanFailure:
        """The plan of one task, or host.py's or reference.py's failure at the user's line.
        Raises PlanWorkerError when the worker dies, times out or answers nonsense."""
        request = request.model_copy(update={"timeout_s": timeout})
        with self._lock:
            return parse_answer(self._exchange(request, timeout + _ZYGOTE_SLACK_S))

    def _exchange(self, request: PlanRequest, timeout: float) -> str:
        """Send one request; the worker's raw answer line."""
        if self._proc is None or self._proc.poll() is not None:
            self._start(timeout)
        assert self._proc and self._proc.stdin
        try:
            self._proc.stdin.write(json.dumps({"plan": request.model_dump()}) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            self.close()
            raise PlanWorkerError(f"the plan worker is gone: {e}") from e
        return self._read(timeout)

    def close(self) -> None:
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if f is not None:
                    with contextlib.suppress(OSError):
                        f.close()
            self._proc = None

    def __del__(self) -> None:
        self.close()


def parse_answer(line: str) -> LaunchPlan | PlanFailure:
    """Validate one answer line of the worker (the one place its shape is checked)."""
    try:
        answer = PlanAnswer.model_validate_json(line)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the answer"
        raise PlanWorkerError(f"the plan worker gave a malformed answer ({e.error_count()} problem(s); "
                              f"{where}: {first['msg']}); this is a bug in sage-npu, not in the task") from e
    for note in answer.notes:
        _note_once(note)
    return answer.result()


_noted: set[str] = set()


def _note_once(note: str) -> None:
    """A confinement layer the platform refused, logged once per kind (the text up to its reason)."""
    kind = note.split(" (", 1)[0]
    if kind not in _noted:
        _noted.add(kind)
        log.warning("sage plan sandbox: %s; host.py and reference.py run without it", note)
