"""Run an untrusted binary (the compiled harness with the user's kernel) in a child process
with limits (docs/security.md says what each layer stops and what remains).

Layers, outermost first, each independent of the others:

- new PID, network and System V IPC namespaces, where the platform allows (root with
  CAP_SYS_ADMIN): the child is PID 1 of its own namespace, so when it ends the kernel kills
  every process it started, wherever they went; it sees no network interface but a down
  loopback;
- a private mount namespace (npu_eval/confine.py): everything read-only except the scratch
  directory; /tmp, /dev/shm and $HOME are the scratch's tmp/ and home/;
- an unprivileged user when we run as root (rlimits on process counts do not bind root), set
  before exec, so no code of the kernel's ever runs as root (a global constructor runs before
  main);
- wall clock (SIGTERM, which the harness turns into a timeout report, then SIGKILL), address
  space, file size and process-count limits, no core dumps;
- an allow-listed environment with HOME and TMPDIR in the scratch directory, and a marker
  naming this run;
- its own session and process group, killed whenever the run ends, then a sweep of /proc for
  descendants that escaped it (setsid) when there is no PID namespace to contain them;
- the parent-death signal, so the child dies with us;
- a seccomp filter installed before exec (no network, no mounts or namespaces, no tracing,
  ...), so global constructors run under it, and inside the harness a tighter one around the
  kernel call that also refuses starting processes (sage_sim/sandbox.h).

A layer the platform refuses is logged once; the others still hold.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import platform
import resource
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval import confine, protocol
from sage_npu.npu_eval.confine import UNPRIVILEGED_GID, UNPRIVILEGED_UID

__all__ = ["MARKER_VAR", "UNPRIVILEGED_GID", "UNPRIVILEGED_UID", "SandboxLimits", "SandboxResult", "prepare_scratch",
           "run_sandboxed", "sandbox_uid", "sweep", "boot_ticks", "namespaces_unavailable",
           "pid_namespace_for_next_child"]

log = logging.getLogger(__name__)

MARKER_VAR = "SAGE_SANDBOX_RUN"  # in the child's environment: which run a process belongs to

_PR_SET_PDEATHSIG = 1
_NETNS_NOTE = "sage sandbox: no network namespace"
# What the child writes on its stderr when a layer could not be set up before exec.
MOUNTNS_NOTE = "sage sandbox: no mount namespace"
EXEC_SECCOMP_NOTE = "sage sandbox: no seccomp filter before exec"


@dataclass
class SandboxLimits:
    timeout_s: float = 10.0
    memory_bytes: int = 4 << 30
    file_bytes: int = 1 << 30
    processes: int = 64
    namespaces: bool = True  # PID + network namespaces where the platform allows
    mounts: bool = True      # a private mount namespace: read-only but the scratch (root only)
    seccomp: bool = True     # a filter from before exec, and the harness's tighter one around the kernel call
    groups: tuple[int, ...] = ()  # as root: the only groups the unprivileged user keeps (the NPU driver's)


@dataclass
class SandboxResult:
    returncode: int
    signal: int | None
    timed_out: bool
    stdout: str
    stdout_truncated: bool
    stderr: str
    seconds: float
    protections: tuple[str, ...] = ()  # what this run had: pid-ns, net-ns, mount-ns, nobody, seccomp-exec, seccomp
    swept: int = 0                     # escaped processes the sweep killed


def prepare_scratch(root: Path) -> tuple[Path, Path]:
    """HOME and TMPDIR inside the scratch dir, owned by the user the child will run as."""
    home, tmp = root / "home", root / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        for p in [root, *root.rglob("*")]:
            os.chown(p, UNPRIVILEGED_UID, UNPRIVILEGED_GID, follow_symlinks=False)
    return home, tmp


def sandbox_uid() -> int:
    """The user the child runs as."""
    return UNPRIVILEGED_UID if os.geteuid() == 0 else os.getuid()


# ---- namespaces ----

_ns_unavailable: str | None = None  # why namespaces cannot be used here, once known
_ns_lock = threading.Lock()


def namespaces_unavailable() -> str | None:
    """Why PID/network namespaces cannot be used here, or None when they can (as far as known)."""
    if sys.platform != "linux" or not Path("/proc/thread-self/ns/pid").exists():
        return "this platform has no Linux namespaces"
    if os.geteuid() != 0:
        # A user namespace would allow them, but the server is multithreaded and unshare of a
        # user namespace needs a single-threaded caller.
        return "not running as root"
    return _ns_unavailable


_ns_noted: set[str] = set()


def _note_ns_unavailable(reason: str, remember: bool) -> None:
    """Say once per reason, on stderr through logging, that runs go without namespaces."""
    global _ns_unavailable
    with _ns_lock:
        if remember and _ns_unavailable is None:
            _ns_unavailable = reason
        if reason in _ns_noted:
            return
        _ns_noted.add(reason)
    log.warning("sage sandbox: no PID/network namespaces (%s); kernels run without them, contained by "
                "their process group, the sweep, rlimits and seccomp", reason)


@contextlib.contextmanager
def pid_namespace_for_next_child(wanted: bool) -> Iterator[bool]:
    """While inside, the next process this thread starts is PID 1 of a new PID namespace.

    unshare(CLONE_NEWPID) changes only where the calling thread's *children* go, and only for
    this thread, so other threads starting processes meanwhile are unaffected. Afterwards the
    thread goes back to its own namespace (a second child in the new one would fail to start
    once its PID 1 is gone). Yields whether the namespace was made.
    """
    reason = namespaces_unavailable() if wanted else None
    if not wanted or reason:
        if reason:
            _note_ns_unavailable(reason, remember=False)
        yield False
        return
    libc = confine.libc()
    own = os.open("/proc/thread-self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            libc.check(libc.lib.unshare(confine.CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        except OSError as e:
            # Not permitted (a container without CAP_SYS_ADMIN) stays so; a full namespace
            # table (ENOSPC, ENOMEM) may clear up.
            _note_ns_unavailable(str(e), remember=e.errno in (errno.EPERM, errno.EINVAL, errno.ENOSYS))
            yield False
            return
        try:
            yield True
        finally:
            if libc.lib.setns(own, confine.CLONE_NEWPID) != 0:
                e = ctypes.get_errno()
                raise RuntimeError(f"sage sandbox: cannot return this thread to its PID namespace "
                                   f"({os.strerror(e)}); processes it starts will fail. Restart the server.")
    finally:
        os.close(own)


# ---- the child, between fork and exec ----

@dataclass(frozen=True)
class _ChildSetup:
    """What the child does between fork and exec, decided in the parent (the child only calls)."""

    limits: SandboxLimits
    in_new_pidns: bool
    mounts: confine.MountPlan | None  # None: no mount namespace (not root, or not wanted)
    seccomp: bytes | None             # the pre-exec filter, None when off or without a table here


def _child_setup(limits: SandboxLimits, in_new_pidns: bool, argv: list[str], cwd: Path, scratch: Path,
                 show: tuple[Path, ...] = ()) -> _ChildSetup:
    mounts = None
    if limits.mounts and namespaces_unavailable() is None:
        readable = {p for p in (Path(argv[0]).parent, cwd, *show) if p.is_absolute() and p.is_dir()
                    and not p.resolve().is_relative_to(scratch.resolve())}
        mounts = confine.MountPlan(writable=(scratch.resolve(),), readable=tuple(p.resolve() for p in readable),
                                   covers=confine.standard_covers(scratch.resolve(), Path.home()),
                                   fresh_proc=in_new_pidns)
    seccomp = confine.seccomp_program() if limits.seccomp else None
    if limits.seccomp and seccomp is None:
        _note_once(EXEC_SECCOMP_NOTE, "sage sandbox: no seccomp filter before exec (%s)",
                   f"no system call table for {platform.machine()}")
    return _ChildSetup(limits, in_new_pidns, mounts, seccomp)


def _limit_child(setup: _ChildSetup):
    libc = confine.libc() if sys.platform == "linux" else None
    limits, in_new_pidns = setup.limits, setup.in_new_pidns
    parent = os.getpid()

    def apply() -> None:  # runs in the child between fork and exec; root until the drop below
        # Where a PID namespace could be made, so can a network namespace (both need
        # CAP_SYS_ADMIN); it must be made here, as root, and applies to this process at once.
        # (with it a System V IPC namespace: no shared memory or queues with other runs).
        if in_new_pidns and libc is not None and libc.lib.unshare(confine.CLONE_NEWNET | confine.CLONE_NEWIPC) != 0:
            os.write(2, f"{_NETNS_NOTE} ({os.strerror(ctypes.get_errno())})\n".encode())
        if setup.mounts is not None:
            try:
                confine.enter_mounts(setup.mounts)
            except OSError as e:
                os.write(2, f"{MOUNTNS_NOTE} ({e.strerror or e})\n".encode())
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        confine.drop_privileges(limits.groups)
        # RLIMIT_NPROC counts every process of the user; it binds once we are not root.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        # After the uid change, which clears it: the child dies with the thread that waits for it.
        if libc is not None:
            libc.lib.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # Our parent may have died before that took effect (from inside a new PID namespace
        # the parent is outside it and getppid() says 0, so that case cannot be told).
        if not in_new_pidns and os.getppid() != parent:
            os._exit(137)
        # Last, so the program's global constructors already run under it.
        if setup.seccomp is not None:
            try:
                confine.install_seccomp(setup.seccomp)
            except OSError as e:
                os.write(2, f"{EXEC_SECCOMP_NOTE} ({e.strerror or e})\n".encode())

    return apply


# ---- the sweep ----

def boot_ticks() -> int:
    """Now, in the units of /proc/PID/stat's start time (clock ticks since boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from field 3 (state) on; the command name before it may hold spaces."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2:].decode("ascii", "replace").split()


def _real_uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _has_marker(pid: int, token: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read(1 << 20)
    except OSError:
        return False
    return f"{MARKER_VAR}={token}".encode() in env.split(b"\0")


def _belongs_to_run(pid: int, token: str, session: int, uid: int, since_ticks: int) -> bool:
    """A live process of one run: started at or after `since_ticks`, owned by `uid` (real uid),
    and either in the run's session or carrying its marker. Requiring all three keeps unrelated
    processes safe: a reused PID, another run as the same user, the user's own programs."""
    st = _stat_fields(pid)
    # st[0] is the state, st[3] the session, st[19] the start time
    if st is None or len(st) < 20 or st[0] in ("Z", "X") or int(st[19]) < since_ticks:
        return False
    if _real_uid(pid) != uid:
        return False
    return int(st[3]) == session or _has_marker(pid, token)


def _run_processes(token: str, session: int, uid: int, since_ticks: int) -> list[int]:
    """The live processes of one run (see _belongs_to_run)."""
    pids = (int(e.name) for e in os.scandir("/proc") if e.name.isdigit())
    return [pid for pid in pids if _belongs_to_run(pid, token, session, uid, since_ticks)]


def sweep(token: str, session: int, uid: int, since_ticks: int, rounds: int = 50) -> int:
    """Kill the run's processes that outlived it; returns how many. Repeats while a round finds
    any, so children forked between a scan and the kill are caught in the next round. A process
    already sent SIGKILL may still be listed in the next round (the kill lands when the kernel
    next schedules it, later on a busy machine); it is counted and signalled once, known by its
    PID and start time, so a reused PID is still a new process."""
    signalled: set[tuple[int, int]] = set()
    for _ in range(rounds):
        pids = _run_processes(token, session, uid, since_ticks)
        if not pids:
            break
        for pid in pids:
            key = (pid, _start_ticks(pid))
            if key not in signalled and _kill_verified(pid, token, session, uid, since_ticks):
                signalled.add(key)
        time.sleep(0.001)
    return len(signalled)


def _start_ticks(pid: int) -> int:
    """The process's start time in clock ticks since boot (-1 once it is gone)."""
    st = _stat_fields(pid)
    return int(st[19]) if st is not None and len(st) >= 20 else -1


def _kill_verified(pid: int, token: str, session: int, uid: int, since_ticks: int) -> int:
    """SIGKILL through a pidfd opened before re-checking the process: the check then holds for
    the very process signalled, even if its PID was reused in between."""
    try:
        fd = os.pidfd_open(pid)
    except OSError as e:
        if e.errno != errno.ENOSYS:
            return 0  # gone already
        # Before Linux 5.3: check, then kill by PID (a reuse in between is possible, if unlikely).
        if _belongs_to_run(pid, token, session, uid, since_ticks):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                return 1
        return 0
    try:
        if not _belongs_to_run(pid, token, session, uid, since_ticks):
            return 0
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return 1
    except OSError:
        return 0
    finally:
        os.close(fd)


# ---- running ----

def _read_bounded(path: Path, limit: int) -> tuple[str, bool]:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return "", False
    return data[:limit].decode("utf-8", errors="replace"), len(data) > limit


def run_sandboxed(argv: list[str], cwd: Path, limits: SandboxLimits, stdout_limit: int = 64 * 1024, *,
                  scratch: Path | None = None, env: dict[str, str] | None = None,
                  stdout_fd: int | None = None, stderr_fd: int | None = None,
                  show: tuple[Path, ...] = ()) -> SandboxResult:
    """Run `argv` in `cwd` behind every layer above; the one way this package runs untrusted code.

    `scratch` (default `cwd`, prepared by prepare_scratch) holds HOME, TMPDIR and the captured
    stdout.txt/stderr.txt. `env` adds variables to the allow-listed environment (program mode's
    output folder). `stdout_fd`/`stderr_fd` pass the child's streams through to those
    descriptors instead of capturing them (then the result's text for that stream is empty, and
    a seccomp failure the harness reports on a passed-through stderr cannot be seen: the record
    then says what was asked for). `show`: folders the run reads that a cover would hide (the
    device backend's CANN install), shown read-only at their own paths."""
    scratch = scratch or cwd
    token = f"{os.getpid()}-{secrets.token_hex(12)}"  # who started the run, then which run
    child_env = _child_env(scratch, env, limits, token)
    out_path, err_path = scratch / "stdout.txt", scratch / "stderr.txt"
    uid = sandbox_uid()
    since = boot_ticks() - 1  # a tick of slack: start times are rounded down
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if os.geteuid() == 0:  # the child, another user, writes them
            os.chown(out_path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
            os.chown(err_path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
        with pid_namespace_for_next_child(limits.namespaces) as pidns:
            setup = _child_setup(limits, pidns, argv, cwd, scratch, show)
            proc = subprocess.Popen(argv, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL,
                                    stdout=out if stdout_fd is None else stdout_fd,
                                    stderr=err if stderr_fd is None else stderr_fd,
                                    start_new_session=True, preexec_fn=_limit_child(setup), close_fds=True)
        timed_out = not _wait(proc, limits.timeout_s)
        if timed_out:
            # SIGTERM first: the harness reports where the kernel was, then exits.
            _signal_group(proc.pid, signal.SIGTERM)
            _wait(proc, 1.0)
        _signal_group(proc.pid, signal.SIGKILL)  # whatever the kernel left running in its group
        proc.wait()
    # With a PID namespace nothing can outlive its PID 1 (the kernel has killed and reaped
    # the namespace before our wait returns); the sweep is for when there is none.
    swept = 0 if pidns else sweep(token, proc.pid, uid, since)
    rc = proc.returncode
    stdout, truncated = _read_bounded(out_path, stdout_limit) if stdout_fd is None else ("", False)
    stderr, _ = _read_bounded(err_path, 16 * 1024) if stderr_fd is None else ("", False)
    if swept:
        stderr += f"\nsage sandbox: killed {swept} process(es) the kernel left running\n"
    return SandboxResult(
        returncode=rc,
        signal=-rc if rc < 0 else None,
        timed_out=timed_out,
        stdout=stdout,
        stdout_truncated=truncated,
        stderr=stderr,
        seconds=time.monotonic() - start,
        protections=_protections(setup, uid, stderr),
        swept=swept,
    )


def _child_env(scratch: Path, extra: dict[str, str] | None, limits: SandboxLimits, token: str) -> dict[str, str]:
    """The allow-listed environment: HOME and TMPDIR in the scratch dir, the run's marker."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch / "home"), "TMPDIR": str(scratch / "tmp"),
           "LANG": "C.UTF-8", **(extra or {}), MARKER_VAR: token}
    if not limits.seccomp:
        env[protocol.ENV_SECCOMP] = "0"
    return env


def _protections(setup: _ChildSetup, uid: int, stderr: str) -> tuple[str, ...]:
    """Which layers held for a run, read from what the child said on stderr."""
    held = []
    if setup.in_new_pidns:
        held.append("pid-ns")
        if _NETNS_NOTE not in stderr:
            held.append("net-ns")
    if setup.mounts is not None:
        if MOUNTNS_NOTE in stderr:
            _note_once(MOUNTNS_NOTE, "sage sandbox: no private mount namespace (%s); runs may write where "
                       "their user may", _note_reason(stderr, MOUNTNS_NOTE))
        else:
            held.append("mount-ns")
    if uid != os.geteuid():
        held.append("nobody")
    if setup.seccomp is not None:
        if EXEC_SECCOMP_NOTE in stderr:
            _note_once(EXEC_SECCOMP_NOTE, "sage sandbox: no seccomp filter before exec (%s)",
                       _note_reason(stderr, EXEC_SECCOMP_NOTE))
        else:
            held.append("seccomp-exec")
    if setup.limits.seccomp and protocol.SECCOMP_FAILED not in stderr and protocol.SECCOMP_ABSENT not in stderr:
        held.append("seccomp")
    return tuple(held)


def _note_reason(stderr: str, note: str) -> str:
    line = next((ln for ln in stderr.splitlines() if ln.startswith(note)), note)
    return line[len(note):].strip(" ()") or "refused"


def _note_once(key: str, message: str, reason: str) -> None:
    """Log a layer the platform refused, once per layer and process."""
    with _ns_lock:
        if key in _ns_noted:
            return
        _ns_noted.add(key)
    log.warning(message, reason)


def _wait(proc: subprocess.Popen, timeout: float) -> bool:
    """Whether the child exited within `timeout`. Waits on a pidfd, which wakes at the exit;
    Popen.wait(timeout) polls with growing sleeps and adds milliseconds to every run."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()  # not select(): a busy server's descriptors may pass FD_SETSIZE
        poller.register(fd, select.POLLIN)
        ready = poller.poll(max(timeout, 0.0) * 1000)
    finally:
        os.close(fd)
    if ready:
        proc.wait()
    return bool(ready)


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def confine_python_worker(memory_bytes: int):
    """A preexec hook for the plan zygote (npu_eval/zygote.py): an address-space limit, no core
    dumps, and, as root, a network namespace of its own (no network at all). It runs no user
    code itself and stays the calling user: each plan's runner, forked from it, confines itself
    before loading host.py and reference.py."""
    libc = confine.libc() if namespaces_unavailable() is None else None

    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if libc is not None:
            libc.lib.unshare(confine.CLONE_NEWNET)  # best effort: without it the worker still runs

    return apply
