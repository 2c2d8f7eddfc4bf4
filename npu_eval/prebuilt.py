"""The emulator's parts a kernel build need not compile again: `sage_sim/harness.h` precompiled
(g++'s `.gch`) and the runtime object (harness_main, the emulator's state and containers,
`SAGE_SIM_RUNTIME_TU`), built once per compiler, flag set and header content, kept in the
build cache under `pch/`, and shared by every task built with those flags.

A kernel's build then only parses the kernel and generates the kernel's own code: about half
the time of an -O0 object without them (docs/build.md has the figures). The precompiled header
is only valid for the exact flags and defines it was made with, so its key holds every flag but
the kernel's own include folder, and every define the emulator headers mention; a define they
never mention (a kernel's BUFFER_NUM, DTYPE_X) cannot change them and shares the set. When the
compiler ignores the precompiled header (another compiler, a define it did not see), it reads
the headers as text: slower, never different.

A build never waits for a missing set: it compiles without one (as fast as before the set
existed) while a detached, low-priority process makes the set for the next build. The process
outlives a one-shot `sage-npu eval`, and a lock file keeps two processes from making one set.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

from sage_npu.npu_eval.build import SIM_INCLUDE, Prebuilt, compiler_identity, touch

PREBUILT_DEFINE = "SAGE_SIM_PREBUILT_RUNTIME"
_HEADER = "sage_sim/harness.h"
_RUNTIME_TU = f'#define SAGE_SIM_RUNTIME_TU 1\n#include "{_HEADER}"\n'
# Comments, string and character literals (skipped: a name there cannot change the code), or a name.
_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|([A-Za-z_]\w*)', re.S)
_building = threading.Lock()  # one prebuild at a time in this process; the others wait and reuse it


@lru_cache(maxsize=4)
def _headers_state(stamp: tuple[tuple[str, int, int], ...]) -> tuple[str, frozenset[str]]:
    """(content hash of the emulator headers, every identifier they spell), for one stamp of
    (path, size, mtime) so an edited header makes a new set."""
    h = hashlib.sha256()
    words: set[str] = set()
    for path, _, _ in stamp:
        data = Path(path).read_bytes()
        h.update(path.encode() + b"\0" + data)
        words.update(m.group(1) for m in _TOKENS.finditer(data.decode(errors="replace")) if m.group(1))
    return h.hexdigest(), frozenset(words)


def _headers() -> tuple[str, frozenset[str]]:
    stamp = tuple(sorted((str(p), st.st_size, st.st_mtime_ns) for p in SIM_INCLUDE.rglob("*.h")
                         for st in [p.stat()]))
    return _headers_state(stamp)


def shared_flags(flags: list[str]) -> list[str]:
    """`flags` without what cannot change the emulator headers: `-iquote DIR` pairs (the
    kernel's folder) and the defines the headers never mention."""
    _, words = _headers()
    out: list[str] = []
    skip = False
    for f in flags:
        if skip:
            skip = False
            continue
        if f == "-iquote":
            skip = True
            continue
        if f.startswith("-D") and not _may_change_headers(f[2:].split("=", 1)[0], words):
            continue
        out.append(f)
    return out


def _may_change_headers(name: str, words: frozenset[str]) -> bool:
    # The standard library's switches (NDEBUG, _GLIBCXX_DEBUG, _FORTIFY_SOURCE, ...) change the
    # system headers the set holds, and the layout of the runtime object's containers.
    return name in words or name.startswith("_") or name == "NDEBUG"


def prebuilt_key(cxx: str, flags: list[str]) -> str:
    digest, _ = _headers()
    text = "\0".join([compiler_identity(cxx), digest, *shared_flags(flags)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def prebuilt(cache_root: Path, cxx: str, flags: list[str], timeout_s: float, wait: bool = False) -> Prebuilt | None:
    """The set for `flags` if the cache has it. Otherwise None, and the set is made for the next
    build: in a detached process (`wait=False`), or here, now, a few seconds once (`wait=True`;
    None when it cannot be built here)."""
    key = prebuilt_key(cxx, flags)
    target = cache_root / "pch" / key
    found = _ready(key, target)
    if found or not wait:
        if not found:
            _start_detached(cache_root, cxx, flags, timeout_s, key)
        return found
    with _building:
        found = _ready(key, target)
        if found:
            return found
        with _lock(target, block=True) as held:
            found = _ready(key, target)
            return found or (_build(key, target, cxx, shared_flags(flags), timeout_s) if held else None)


# When this process last asked a detached builder for each set: asked again only after a while, in
# case that builder failed (killed, disk full) and a long-lived server would otherwise never retry.
_started: dict[Path, float] = {}
_RETRY_S = 600.0


def _start_detached(cache_root: Path, cxx: str, flags: list[str], timeout_s: float, key: str) -> None:
    target = cache_root / "pch" / key
    if time.monotonic() - _started.get(target, -_RETRY_S) < _RETRY_S:
        return
    _started[target] = time.monotonic()
    cmd = [sys.executable, "-m", "sage_npu.npu_eval.prebuilt", str(cache_root), cxx, str(timeout_s), *flags]
    try:
        # Its own session: a one-shot CLI may exit (or be interrupted) while the set is made.
        subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)
    except OSError:
        _started.pop(target, None)


def wait_for_a_set(cache_root: Path, limit_s: float = 300.0) -> bool:
    """Block until a prebuilt set exists anywhere under `cache_root` (a build cache folder or a
    folder above it), at most `limit_s`: benchmarks use it so that a detached builder started by
    one measured run does not share the cores with the next. False when none appeared in time."""
    deadline = time.monotonic() + limit_s
    while not any(cache_root.glob("**/pch/*/runtime.o")):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


class _lock:
    """An exclusive lock file beside the set, so one process makes it; `held` is False when
    another process holds it and `block` is False."""

    def __init__(self, target: Path, block: bool) -> None:
        self.path, self.block, self.fd = target.with_name(target.name + ".lock"), block, -1

    def __enter__(self) -> bool:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if self.block else fcntl.LOCK_NB))
            return True
        except OSError:
            return False

    def __exit__(self, *exc) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases the lock; the file stays (removing it would race a waiter)


def _idle_priority() -> None:
    """SCHED_IDLE (inherited by the compilers it starts): it runs only on a core nothing else
    wants. A nice value alone still took about a tenth of a busy core from the evaluation that
    asked for the set (cold `sage-npu eval` 16% slower on 2 cores)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)


def _detached_main(argv: list[str]) -> int:
    """`python -m sage_npu.npu_eval.prebuilt CACHE CXX TIMEOUT FLAGS...`: make one set on idle CPU
    only, so the build that asked for it keeps the cores; nothing if another process is on it."""
    cache_root, cxx, timeout_s, flags = Path(argv[0]), argv[1], float(argv[2]), argv[3:]
    _idle_priority()
    key = prebuilt_key(cxx, flags)
    target = cache_root / "pch" / key
    with _lock(target, block=False) as held:
        if held and not _ready(key, target):
            _build(key, target, cxx, shared_flags(flags), timeout_s)
    return 0


@lru_cache(maxsize=1)
def _linker() -> list[str]:
    # gold links a harness in a third of ld.bfd's time (40 ms against 130 ms).
    return ["-fuse-ld=gold"] if shutil.which("ld.gold") else []


def _ready(key: str, target: Path) -> Prebuilt | None:
    runtime = target / "runtime.o"
    if (target / f"{_HEADER}.gch").is_file() and runtime.is_file():
        touch(target)
        return Prebuilt(key, ["-I", str(target), f"-D{PREBUILT_DEFINE}=1", *_linker()], target, runtime)
    return None


def _build(key: str, target: Path, cxx: str, flags: list[str], timeout_s: float) -> Prebuilt | None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{key}.tmp", dir=target.parent))
    try:
        (tmp / "sage_sim").mkdir()
        (tmp / "runtime.cpp").write_text(_RUNTIME_TU)
        mine = [*flags, f"-D{PREBUILT_DEFINE}=1"]
        # The header and the runtime object are independent: one core each.
        jobs = [subprocess.Popen([cxx, *mine, "-x", "c++-header", str(SIM_INCLUDE / _HEADER), "-o",
                                  str(tmp / f"{_HEADER}.gch")], cwd=tmp, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL),
                subprocess.Popen([cxx, *mine, "-c", "runtime.cpp", "-o", "runtime.o"], cwd=tmp,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        ok = True
        for job in jobs:
            try:
                ok = job.wait(timeout=timeout_s) == 0 and ok
            except subprocess.TimeoutExpired:
                job.kill()
                job.wait()
                ok = False
        if not ok:
            return None
        try:
            os.replace(tmp, target)
        except OSError:  # another process finished the same set first: use theirs
            pass
        return _ready(key, target)
    except OSError:
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(_detached_main(sys.argv[1:]))
