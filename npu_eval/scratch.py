"""Temporary folders of sage-npu, named after their owner: `sage-<kind>-<pid>-<random>`.

Each is removed by its owner on every path it controls; a run killed with SIGKILL runs no
cleanup, so `sweep_stale` (called once per process, when the first Evaluator starts) removes
the folders whose owner is gone: no process with that PID, or one started after the folder
was last written (the PID was reused).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Literal

Kind = Literal["eval", "build", "check", "run", "opt", "episode"]
_KINDS = ("eval", "build", "check", "run", "opt", "episode")
_OWNED = re.compile(rf"^sage-(?:{'|'.join(_KINDS)})-(\d+)-")
_LEGACY_PLAN_HOME = "sage-plan-home-"  # empty HOMEs of the old plan worker, never removed then

_swept: set[Path | None] = set()
_swept_lock = threading.Lock()


def prefix(kind: Kind) -> str:
    """The name prefix of this process's folders of `kind` (for tempfile's own helpers)."""
    return f"sage-{kind}-{os.getpid()}-"


def make(kind: Kind, root: Path | None = None) -> Path:
    """A new folder of `kind` under `root` (default: the temp dir)."""
    return Path(tempfile.mkdtemp(prefix=prefix(kind), dir=root))


def sweep_stale_once(root: Path | None = None) -> None:
    """sweep_stale, the first time this process asks for `root` (later calls return at once)."""
    with _swept_lock:
        if root in _swept:
            return
        _swept.add(root)
    sweep_stale(root)


def sweep_stale(root: Path | None = None) -> int:
    """Remove the folders under `root` whose owner is gone; returns how many."""
    base = root or Path(tempfile.gettempdir())
    removed = 0
    try:
        entries = list(os.scandir(base))
    except OSError:
        return 0
    for e in entries:
        m = _OWNED.match(e.name)
        try:
            if m and e.is_dir(follow_symlinks=False) and not _owner_alive(int(m.group(1)), e.stat().st_mtime):
                shutil.rmtree(e.path, ignore_errors=True)
                removed += 1
            elif (e.name.startswith(_LEGACY_PLAN_HOME) and e.is_dir(follow_symlinks=False)
                  and e.stat().st_mtime < time.time() - 3600):
                os.rmdir(e.path)  # only when empty, as they always were (an hour old: its owner is unknown)
                removed += 1
        except OSError:
            continue
    return removed


def _owner_alive(pid: int, mtime: float) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = _start_time(pid)
    return started is None or started <= mtime + 1


def _start_time(pid: int) -> float | None:
    """When `pid` started, in seconds since the epoch (None when unknown)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    ticks = int(raw[raw.rfind(b")") + 2:].split()[19])
    uptime = time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
