"""Run an untrusted binary (the compiled harness with the user's kernel) in a child process
with limits (docs/architecture.md).

Layers, outermost first, each independent of the others:

- new PID and network namespaces, where the platform allows (root with CAP_SYS_ADMIN): the
  child is PID 1 of its own namespace, so when it ends the kernel kills every process it
  started, wherever they went; it sees no network interface but a down loopback;
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
- inside the harness, a seccomp filter around the kernel call (sage_sim/sandbox.h).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
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

from sage_npu.npu_eval import protocol

log = logging.getLogger(__name__)

UNPRIVILEGED_UID = 65534  # nobody
UNPRIVILEGED_GID = 65534  # nogroup
MARKER_VAR = "SAGE_SANDBOX_RUN"  # in the child's environment: which run a process belongs to

_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1
_NETNS_NOTE = "sage sandbox: no network namespace"


@dataclass
class SandboxLimits:
    timeout_s: float = 10.0
    memory_bytes: int = 4 << 30
    file_bytes: int = 1 << 30
    processes: int = 64
    namespaces: bool = True  # PID + network namespaces where the platform allows
    seccomp: bool = True     # the harness's filter around the kernel call


@dataclass
class SandboxResult:
    returncode: int
    signal: int | None
    timed_out: bool
    stdout: str
    stdout_truncated: bool
    stderr: str
    seconds: float
    protections: tuple[str, ...] = ()  # what this run had: pid-ns, net-ns, nobody, seccomp
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

class _Libc:
    """unshare(2), setns(2) and prctl(2); loaded once, before any fork, so the child only calls."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.unshare.argtypes = [ctypes.c_int]
        self.lib.setns.argtypes = [ctypes.c_int, ctypes.c_int]
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"{what}: {os.strerror(e)}")


_libc: _Libc | None = None
_ns_unavailable: str | None = None  # why namespaces cannot be used here, once known
_ns_lock = threading.Lock()


def _libc_handle() -> _Libc:
    global _libc
    if _libc is None:
        _libc = _Libc()
    return _libc


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
def _pid_namespace_for_next_child(wanted: bool) -> Iterator[bool]:
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
    libc = _libc_handle()
    own = os.open("/proc/thread-self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            libc.check(libc.lib.unshare(_CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        except OSError as e:
            # Not permitted (a container without CAP_SYS_ADMIN) stays so; a full namespace
            # table (ENOSPC, ENOMEM) may clear up.
            _note_ns_unavailable(str(e), remember=e.errno in (errno.EPERM, errno.EINVAL, errno.ENOSYS))
            yield False
            return
        try:
            yield True
        finally:
            if libc.lib.setns(own, _CLONE_NEWPID) != 0:
                e = ctypes.get_errno()
                raise RuntimeError(f"sage sandbox: cannot return this thread to its PID namespace "
                                   f"({os.strerror(e)}); processes it starts will fail. Restart the server.")
    finally:
        os.close(own)


# ---- the child, between fork and exec ----

def _limit_child(limits: SandboxLimits, in_new_pidns: bool):
    libc = _libc_handle() if sys.platform == "linux" else None
    parent = os.getpid()

    def apply() -> None:  # runs in the child between fork and exec; root until the drop below
        # Where a PID namespace could be made, so can a network namespace (both need
        # CAP_SYS_ADMIN); it must be made here, as root, and applies to this process at once.
        if in_new_pidns and libc is not None and libc.lib.unshare(_CLONE_NEWNET) != 0:
            os.write(2, f"{_NETNS_NOTE} ({os.strerror(ctypes.get_errno())})\n".encode())
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(UNPRIVILEGED_GID)
            os.setuid(UNPRIVILEGED_UID)
        # RLIMIT_NPROC counts every process of the user; it binds once we are not root.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        # After the uid change, which clears it: the child dies with the thread that waits for it.
        if libc is not None:
            libc.lib.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # Our parent may have died before that took effect (from inside a new PID namespace
        # the parent is outside it and getppid() says 0, so that case cannot be told).
        if not in_new_pidns and os.getppid() != parent:
            os._exit(137)

    return apply


# ---- the sweep ----

def _boot_ticks() -> int:
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
    any, so children forked between a scan and the kill are caught in the next round."""
    killed = 0
    for _ in range(rounds):
        pids = _run_processes(token, session, uid, since_ticks)
        if not pids:
            break
        killed += sum(_kill_verified(pid, token, session, uid, since_ticks) for pid in pids)
        time.sleep(0.001)
    return killed


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
                  stdout_fd: int | None = None, stderr_fd: int | None = None) -> SandboxResult:
    """Run `argv` in `cwd` behind every layer above; the one way this package runs untrusted code.

    `scratch` (default `cwd`, prepared by prepare_scratch) holds HOME, TMPDIR and the captured
    stdout.txt/stderr.txt. `env` adds variables to the allow-listed environment (program mode's
    output folder). `stdout_fd`/`stderr_fd` pass the child's streams through to those
    descriptors instead of capturing them (then the result's text for that stream is empty, and
    a seccomp failure the harness reports on a passed-through stderr cannot be seen: the record
    then says what was asked for)."""
    scratch = scratch or cwd
    token = f"{os.getpid()}-{secrets.token_hex(12)}"  # who started the run, then which run
    child_env = _child_env(scratch, env, limits, token)
    out_path, err_path = scratch / "stdout.txt", scratch / "stderr.txt"
    uid = sandbox_uid()
    since = _boot_ticks() - 1  # a tick of slack: start times are rounded down
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if os.geteuid() == 0:  # the child, another user, writes them
            os.chown(out_path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
            os.chown(err_path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
        with _pid_namespace_for_next_child(limits.namespaces) as pidns:
            proc = subprocess.Popen(argv, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL,
                                    stdout=out if stdout_fd is None else stdout_fd,
                                    stderr=err if stderr_fd is None else stderr_fd,
                                    start_new_session=True, preexec_fn=_limit_child(limits, in_new_pidns=pidns),
                                    close_fds=True)
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
        protections=_protections(pidns, uid, limits, stderr),
        swept=swept,
    )


def _child_env(scratch: Path, extra: dict[str, str] | None, limits: SandboxLimits, token: str) -> dict[str, str]:
    """The allow-listed environment: HOME and TMPDIR in the scratch dir, the run's marker."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch / "home"), "TMPDIR": str(scratch / "tmp"),
           "LANG": "C.UTF-8", **(extra or {}), MARKER_VAR: token}
    if not limits.seccomp:
        env[protocol.ENV_SECCOMP] = "0"
    return env


def _protections(pidns: bool, uid: int, limits: SandboxLimits, stderr: str) -> tuple[str, ...]:
    """Which layers held for a run, read from what the child said on stderr."""
    held = []
    if pidns:
        held.append("pid-ns")
        if _NETNS_NOTE not in stderr:
            held.append("net-ns")
    if uid != os.geteuid():
        held.append("nobody")
    if limits.seccomp and protocol.SECCOMP_FAILED not in stderr and protocol.SECCOMP_ABSENT not in stderr:
        held.append("seccomp")
    return tuple(held)


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
    """A preexec hook for the plan worker (untrusted host.py and reference.py): an address-space
    limit, no core dumps, and, as root, a network namespace of its own (no network at all).
    It stays the calling user: it must read the task's files wherever they are."""
    libc = _libc_handle() if namespaces_unavailable() is None else None

    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if libc is not None:
            libc.lib.unshare(_CLONE_NEWNET)  # best effort: without it the worker still runs

    return apply
