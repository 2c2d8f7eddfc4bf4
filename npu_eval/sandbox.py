"""Run an untrusted binary (the compiled harness with the user's kernel) in a child
process with limits (DESIGN section 8): wall clock, address space, file size, no core
dumps, an allow-listed environment with HOME and TMPDIR in a scratch directory, its own
process group killed when it ends, and an unprivileged user when we run as root."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

UNPRIVILEGED_UID = 65534  # nobody
UNPRIVILEGED_GID = 65534  # nogroup


@dataclass
class SandboxLimits:
    timeout_s: float = 10.0
    memory_bytes: int = 4 << 30
    file_bytes: int = 1 << 30
    processes: int = 64


@dataclass
class SandboxResult:
    returncode: int
    signal: int | None
    timed_out: bool
    stdout: str
    stdout_truncated: bool
    stderr: str
    seconds: float


def prepare_scratch(root: Path) -> tuple[Path, Path]:
    """HOME and TMPDIR inside the scratch dir, owned by the user the child will run as."""
    home, tmp = root / "home", root / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        for p in [root, *root.rglob("*")]:
            os.chown(p, UNPRIVILEGED_UID, UNPRIVILEGED_GID, follow_symlinks=False)
    return home, tmp


def _limit_child(limits: SandboxLimits):
    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(UNPRIVILEGED_GID)
            os.setuid(UNPRIVILEGED_UID)
        # RLIMIT_NPROC counts every process of the user; it binds once we are not root.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))

    return apply


def _read_bounded(path: Path, limit: int) -> tuple[str, bool]:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return "", False
    return data[:limit].decode("utf-8", errors="replace"), len(data) > limit


def run_sandboxed(argv: list[str], cwd: Path, limits: SandboxLimits, stdout_limit: int = 64 * 1024
                  ) -> SandboxResult:
    home, tmp = cwd / "home", cwd / "tmp"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8"}
    out_path, err_path = cwd / "stdout.txt", cwd / "stderr.txt"
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if os.geteuid() == 0:
            os.chown(out_path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
            os.chown(err_path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True, preexec_fn=_limit_child(limits), close_fds=True)
        timed_out = False
        try:
            proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            # SIGTERM first: the harness reports where the kernel was, then exits.
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(proc.pid, signal.SIGKILL)  # whatever the kernel left running in its group
        proc.wait()
    rc = proc.returncode
    stdout, truncated = _read_bounded(out_path, stdout_limit)
    stderr, _ = _read_bounded(err_path, 16 * 1024)
    return SandboxResult(
        returncode=rc,
        signal=-rc if rc < 0 else None,
        timed_out=timed_out,
        stdout=stdout,
        stdout_truncated=truncated,
        stderr=stderr,
        seconds=time.monotonic() - start,
    )


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
