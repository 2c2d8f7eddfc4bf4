"""The plan zygote: a process that imports torch once and forks a fresh, confined child for
every plan, which runs that task's reference.py and host.py and dies (docs/security.md says what
it confines and why). No user code ever runs in the zygote itself, so no task sees what an earlier one
did to the interpreter (a monkeypatched torch, a changed module, a leftover thread), and the
fork keeps torch's import paid once.

Protocol with the parent (npu_eval/plan_client.py): one JSON request per line on stdin
(`{"plan": PlanRequest}`), one `PlanAnswer` per line on the original stdout.

Each plan runs in one forked *runner*, forked ahead (a spare waiting for the next request, so
the fork and the task-independent namespaces are not paid in the plan's time), PID 1 of a new
PID namespace where the platform allows
(the zygote kills it at the end, and every process it started dies with it; without one, its
session and the run's marker are swept). In its own session and network namespace, it reads
the two files while still root, enters the confinement of npu_eval/confine.py (private mounts
where only the plan folder is writable, rlimits, the unprivileged user, the seccomp filter),
runs the user's code with a timer that reports a timeout at the user's line, and writes its
answer to a pipe. It dies with the zygote (the parent-death signal).
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval import confine
from sage_npu.npu_eval.launch_plan import PlanAnswer, PlanFailure, PlanRequest
from sage_npu.npu_eval.sandbox import (
    MARKER_VAR,
    boot_ticks,
    namespaces_unavailable,
    pid_namespace_for_next_child,
    prepare_scratch,
    sandbox_uid,
    sweep,
)

GRACE_S = 3.0  # past the limit, a runner stuck where its timer cannot fire (inside a C call) is killed
OUTPUT_FILE = "output.txt"  # the runner's stdout and stderr, in the plan folder
_PR_SET_PDEATHSIG = 1
_NOTE = "note\t"  # a pipe line that is a note, not the answer
_MAX_NOTES = 4


@dataclass(frozen=True)
class Zygote:
    """What every runner shares, prepared once before any fork."""

    memory_bytes: int
    seccomp: bytes | None
    namespaces: bool  # root on Linux: PID, network and mount namespaces can be tried


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints land on stderr
    sys.stdout = sys.stderr
    import torch  # noqa: F401 - the point of the zygote is to pay this once

    import sage_npu.npu_eval.plan  # noqa: F401 - and the plan code with it

    confine.libc()
    z = Zygote(memory_bytes=int(os.environ.get("SAGE_PLAN_MEMORY_BYTES", 8 << 30)),
               seccomp=confine.seccomp_program(), namespaces=namespaces_unavailable() is None)
    proto.write(json.dumps({"ready": True}) + "\n")
    spare = _spawn(z, proto.fileno())
    try:
        for line in sys.stdin:
            if line.strip():
                ans = run_plan(z, spare, PlanRequest.model_validate(json.loads(line)["plan"]))
                proto.write(ans.model_dump_json(exclude_none=True) + "\n")
                spare = _spawn(z, proto.fileno())  # the next runner, while the parent goes on
    finally:
        _dismiss(spare)
    return 0


@dataclass(frozen=True)
class Spare:
    """A runner forked before its plan arrives, waiting for the request on a pipe. Forking a
    process that holds torch and entering the namespaces that do not depend on the task cost
    about 60 ms; a spare pays them while the zygote is idle instead of in the plan's time."""

    pid: int
    requests: int  # write end: the one request line
    answers: int   # read end: notes, then the answer
    token: str     # the run's marker, for the sweep
    since: int     # boot ticks before the fork, for the sweep
    pidns: bool    # the runner is PID 1 of its own PID namespace


def _spawn(z: Zygote, proto_fd: int) -> Spare:
    req_r, req_w = os.pipe()
    r, w = os.pipe()
    token = f"{os.getpid()}-{secrets.token_hex(12)}"
    since = boot_ticks() - 1
    with pid_namespace_for_next_child(z.namespaces) as pidns:
        runner = os.fork()
        if runner == 0:  # pragma: no cover - the child's side; it never leaves this block
            try:
                for fd in (r, req_w, proto_fd):  # the user's code must not reach the protocol stream
                    os.close(fd)
                _prepare(z, w, token)
                req = _read_request(req_r)
                if req is None:  # dismissed, or the zygote is gone
                    os._exit(0)
                _runner(z, req, w, pidns)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(70)
    os.close(w)
    os.close(req_r)
    return Spare(runner, req_w, r, token, since, pidns)


def _read_request(fd: int) -> PlanRequest | None:
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        buf += chunk
    os.close(fd)
    return PlanRequest.model_validate_json(buf)


def _dismiss(spare: Spare) -> None:
    os.close(spare.requests)  # the runner reads end of file and exits
    os.close(spare.answers)
    _end(spare.pid)


def run_plan(z: Zygote, spare: Spare, req: PlanRequest) -> PlanAnswer:
    """Hand `req` to the spare runner, collect its answer, end every process of the run."""
    try:
        data = (req.model_dump_json() + "\n").encode()
        while data:
            data = data[os.write(spare.requests, data):]
    except OSError:  # the runner died before its plan: _collect finds no answer
        pass
    finally:
        os.close(spare.requests)
    try:
        notes, text, timed_out = _collect(spare.answers, req.timeout_s + GRACE_S)
    finally:
        os.close(spare.answers)
        _end(spare.pid)
    if not spare.pidns:
        reason = namespaces_unavailable()
        if reason:
            notes.insert(0, f"no PID, network or mount namespace ({reason})")
        sweep(spare.token, spare.pid, sandbox_uid(), spare.since)
    return _answer(req, notes, text, Path(req.out_dir), timed_out)


def _collect(fd: int, seconds: float) -> tuple[list[str], str | None, bool]:
    """The notes, the answer line from the pipe (None when it closed or time ran out first),
    and whether time ran out."""
    deadline, buf = time.monotonic() + seconds, b""
    notes: list[str] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return notes, None, True
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return notes, None, False
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode("utf-8", "replace")
            if not text.startswith(_NOTE):
                return notes, text, False
            if len(notes) < _MAX_NOTES:  # the user's code holds the pipe too: no flood of notes
                notes.append(text[len(_NOTE):])


def _end(runner: int) -> None:
    """Kill the runner: as PID 1 of its namespace, it takes every process it started along;
    without one, its process group goes too (the sweep catches the rest)."""
    for kill in (os.kill, os.killpg):
        try:
            kill(runner, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    os.waitpid(runner, 0)


def _answer(req: PlanRequest, notes: list[str], text: str | None, out: Path, timed_out: bool) -> PlanAnswer:
    if text is not None:
        try:
            ans = PlanAnswer.model_validate_json(text)
        except ValueError:
            ans = None
        if ans is not None:
            # The runner is untrusted: a forged plan must not make the parent (root) copy files
            # from elsewhere into the kernel's reach.
            stray = _stray_file(ans, out)
            if stray is None:
                return ans.model_copy(update={"notes": notes})
            return PlanAnswer(error=PlanFailure(code="host-error", message=f"the plan names {stray}, which is not "
                                                "a file the plan wrote in its folder"), notes=notes)
    tail = _tail(out / OUTPUT_FILE)
    if timed_out:
        msg = f"host.py and reference.py did not finish within {req.timeout_s:.0f} s"
    else:
        msg = "host.py or reference.py ended the plan process without an answer (out of memory, or it exited)"
    if tail:
        msg += f"; its last output:\n{tail}"
    return PlanAnswer(error=PlanFailure(code="host-error", message=msg), notes=notes)


def _stray_file(ans: PlanAnswer, out: Path) -> str | None:
    """A file the plan points to that is not a regular file inside `out`, if any."""
    if ans.ok is None:
        return None
    root = out.resolve()
    for trial in ans.ok.trials:
        for path in [a.path for a in trial.tensors] + [o.expected for o in trial.outputs if o.expected]:
            p = Path(path)
            if p.is_symlink() or not p.is_file() or not p.resolve().is_relative_to(root):
                return path
    return None


def _tail(path: Path, limit: int = 2000) -> str | None:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - limit))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return None


def _note(w: int, text: str) -> None:
    os.write(w, f"{_NOTE}{text}\n".encode())


def _prepare(z: Zygote, w: int, token: str) -> None:
    """What a runner sets up before its plan arrives: nothing here depends on the task."""
    os.setsid()  # out of the zygote's process group: the parent-death signal ties it to the zygote instead
    confine.libc().lib.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # again after the uid change
    os.environ[MARKER_VAR] = token  # descendants carry it: the sweep's second handle
    if z.namespaces:
        try:
            # System V IPC too: no shared memory or message queues with other runs.
            confine.libc().unshare(confine.CLONE_NEWNET | confine.CLONE_NEWIPC, "unshare(CLONE_NEWNET)")
        except OSError as e:
            _note(w, f"no network namespace ({e.strerror})")


def _runner(z: Zygote, req: PlanRequest, w: int, pidns: bool) -> None:
    """The runner's side once its plan arrived: confine, run the user's code under a timer,
    answer; never returns."""
    from sage_npu.npu_eval import plan

    out = Path(req.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    home, tmp = prepare_scratch(out)
    sources = plan.read_sources(req)  # still root: the task folder may be private
    _redirect_output(out / OUTPUT_FILE)
    _confine(z, req, out, w, pidns)
    os.environ.update(HOME=str(home), TMPDIR=str(tmp))
    os.chdir(home)

    def on_timeout(signum, frame) -> None:
        failure = plan.timeout_failure(frame, req, req.timeout_s)
        os.write(w, (PlanAnswer(error=failure).model_dump_json(exclude_none=True) + "\n").encode())
        os._exit(124)

    signal.signal(signal.SIGALRM, on_timeout)
    signal.setitimer(signal.ITIMER_REAL, req.timeout_s)
    ans = plan.answer(req, sources)
    signal.setitimer(signal.ITIMER_REAL, 0)
    data = (ans.model_dump_json(exclude_none=True) + "\n").encode()
    while data:
        data = data[os.write(w, data):]
    os._exit(0)


def _redirect_output(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    if os.geteuid() == 0:
        os.fchown(fd, confine.UNPRIVILEGED_UID, confine.UNPRIVILEGED_GID)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)


def _readable(req: PlanRequest, covers: tuple[tuple[Path, Path], ...]) -> tuple[Path, ...]:
    """What a cover would hide but the runner reads: the task folder, and Python's own paths
    (a checkout or virtualenv in $HOME or /tmp, whose modules torch and the plan import lazily)."""
    hidden = [t for t, _ in covers]
    found = {Path(req.task_root).resolve(), Path(__file__).resolve().parents[1]}
    for p in sys.path:
        q = Path(p).resolve() if p else None
        if q is not None and q.is_dir():
            found.add(q)
    return tuple(sorted(q for q in found if any(q.is_relative_to(h) for h in hidden)))


def _confine(z: Zygote, req: PlanRequest, out: Path, w: int, pidns: bool) -> None:
    """Mounts, limits, the unprivileged user, the filter: each refused layer noted on the pipe."""
    if z.namespaces:
        covers = confine.standard_covers(out.resolve(), Path.home())
        plan_ = confine.MountPlan(writable=(out.resolve(),), readable=_readable(req, covers), covers=covers,
                                  fresh_proc=pidns)
        try:
            confine.enter_mounts(plan_)
        except OSError as e:
            _note(w, f"no mount namespace ({e.strerror or e})")
    resource.setrlimit(resource.RLIMIT_AS, (z.memory_bytes, z.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() == 0:
        confine.drop_privileges()
        # Counts every process and thread of the user, so only for nobody, not for a person's own account.
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))
    confine.libc().lib.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # cleared by the uid change
    if z.seccomp is not None:
        try:
            confine.install_seccomp(z.seccomp)
        except OSError as e:
            _note(w, f"no seccomp filter ({e.strerror or e})")


if __name__ == "__main__":
    raise SystemExit(main())
