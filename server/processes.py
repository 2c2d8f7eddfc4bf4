"""The server's own process tree, for `exit`: every process it started (the plan worker, the
compiler, a kernel run, the agent process) is a descendant, and killing them is what lets the
threads that wait on them return, so the server ends within moments even mid-evaluation."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def descendants(root: int) -> list[int]:
    """The pids below `root` (children first), read from /proc; empty where there is no /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # ended while we looked
        # The command name (field 2) may hold spaces and parentheses: the fields after it are fixed.
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 1:
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out: list[int] = []
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _is_resource_tracker(pid: int) -> bool:
    try:
        return b"multiprocessing.resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def kill_descendants() -> int:
    """SIGKILL every process below this one, except multiprocessing's resource tracker (it
    unlinks the agent queues' semaphores as the server ends; killed, it is restarted, which takes
    a second, and they leak); how many were signalled."""
    n = 0
    for pid in descendants(os.getpid()):
        if _is_resource_tracker(pid):
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            n += 1
        except (ProcessLookupError, PermissionError):
            pass
    return n
