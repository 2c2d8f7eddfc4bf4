"""The build stage: compile harness + kernel against the emulator headers, as C++17, with a
cache keyed by every file the compiler read (its dependency output), the harness, the flags
and the chip profile. Failures come back as diagnostics on the user's lines.

The key is the content, not where it is: a program's sources and folders get neutral names
(`neutral_paths`: the harness names the sources so in its `#line`s, the folders are compiled
under theirs with `-ffile-prefix-map`), and the key, the flags and the dependencies use them.
The same program copied to another folder or renamed reuses its build; the paths a run
reports (`__FILE__` in faults) are mapped back with `PathMap.to_real`."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from sage_npu.npu_eval import compile_errors, refusals
from sage_npu.npu_eval import scratch as scratch_dirs
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.cpp_conditionals import active_text

SIM_INCLUDE = Path(__file__).resolve().parent / "sim" / "include"
_MAX_VARIANTS = 8
_STALE_TMP_S = 3600.0  # a half-written entry this old belongs to a process that died
_IN_USE_S = 60.0  # an entry used this recently may be in a build that runs now


@dataclass(frozen=True)
class Prebuilt:
    """What a build links against instead of compiling the emulator again (npu_eval/prebuilt.py
    makes them): flags to add in front, the runtime object, and the set's identity."""

    key: str
    flags: list[str]
    include_dir: Path
    runtime: Path


@dataclass
class BuildResult:
    ok: bool
    binary: Path | None
    cached: bool
    seconds: float
    diagnostics: list[compile_errors.CompileDiagnostic] = field(default_factory=list)
    output: str = ""


@lru_cache(maxsize=8)
def compiler_identity(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return cxx
    return out.splitlines()[0] if out else cxx


@lru_cache(maxsize=1)
def _cpu_flags() -> list[str]:
    # F16C converts half<->float in one instruction; use it where the CPU has it.
    if platform.machine() in ("x86_64", "AMD64"):
        try:
            if " f16c" in Path("/proc/cpuinfo").read_text():
                return ["-mf16c"]
        except OSError:
            pass
    return []


def compile_flags(chip: ChipProfile, opt_level: str, defines: dict[str, str], debug: bool = False) -> list[str]:
    """The build's flags; `debug`: with debugging information (`-g`) for a gdb session, else none."""
    flags = ["-std=c++17", opt_level, "-g" if debug else "-g0", "-fno-strict-aliasing", "-fdiagnostics-color=never",
             "-fno-diagnostics-show-caret", "-fdiagnostics-column-unit=byte", "-ftemplate-backtrace-limit=4",
             *_cpu_flags(), "-I", str(SIM_INCLUDE)]
    for k, v in {**chip.compile_defines(), **defines}.items():
        flags.append(f"-D{k}={v}")
    return flags


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_hashes: dict[str, tuple[tuple[int, int, int], str]] = {}  # path -> (size, mtime, inode), content hash
_RACY_S = 2.0  # a file changed this recently may change again within its mtime's tick: hash it each time


def _file_hash(path: str) -> str | None:
    """The content hash of a file a build read; remembered while its size, modification time and
    inode stay (a cache lookup checks a few hundred headers: stat, not read)."""
    try:
        st = os.stat(path)
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        known = _hashes.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        digest = _sha(Path(path).read_bytes())
    except OSError:
        return None
    if time.time() - st.st_mtime > _RACY_S:
        if len(_hashes) > 20000:
            _hashes.clear()
        _hashes[path] = (stamp, digest)
    return digest


def _parse_depfile(text: str) -> list[str]:
    body = text.replace("\\\n", " ")
    _, _, deps = body.partition(":")
    return [d for d in deps.split() if d]


# The APIs whose blocks wait for each other: SyncAll's barrier, the GM flags of IBSet/IBWait,
# WaitPreBlock/NotifyNextBlock and GroupBarrier, and GM poll loops (DataCacheCleanAndInvalid, ReadGmByPassDCache).
_COOP_APIS = (b"SyncAll", b"IBWait", b"IBSet", b"WaitPreBlock", b"NotifyNextBlock", b"GroupBarrier",
              b"DataCacheCleanAndInvalid", b"CrossCoreSetFlag", b"CrossCoreWaitFlag", b"ReadGmByPassDCache",
              # a Matmul accumulating into GM (split K) waits for the other cores to clear C first
              b"EnableMultiCoreSplitK", b"SetSplitK", b"enAtomic")
# KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_...), or a kernel's __mix__(aic, aiv), __cube__ or __vector__
# qualifier (before or after __global__: the samples write both orders), in a kernel file outside
# comments.
_KERNEL_TYPE = re.compile(rb"^[^/\n]*?(?:\bKERNEL_TASK_TYPE_DEFAULT\s*\(\s*(?P<type>KERNEL_TYPE_[A-Z0-9_]+)\s*\)|"
                          rb"\b__mix__\s*\(\s*(?P<aic>[01])\s*,\s*(?P<aiv>[012])\s*\)|"
                          rb"\b__global__\b[^\n]*?\b__(?P<side>cube|vector)__\b|"
                          rb"\b__(?P<side_first>cube|vector)__\s[^\n]*?\b__global__\b)", re.M)
# A __vector__ kernel runs on the default cores: no define (the vector sweep's builds stay as they were).
_VECTOR_QUALIFIER = "vector"
_QUALIFIER_TYPE = {("1", "2"): "KERNEL_TYPE_MIX_AIC_1_2", ("1", "1"): "KERNEL_TYPE_MIX_AIC_1_1",
                   ("1", "0"): "KERNEL_TYPE_MIX_AIC_1_0", ("0", "1"): "KERNEL_TYPE_MIX_AIV_1_0",
                   "cube": "KERNEL_TYPE_AIC_ONLY", "vector": _VECTOR_QUALIFIER}


def _kernel_type(m: re.Match[bytes]) -> str:
    if m.group("type"):
        return m.group("type").decode()
    if side := m.group("side") or m.group("side_first"):
        return _QUALIFIER_TYPE[side.decode()]
    return _QUALIFIER_TYPE.get((m.group("aic").decode(), m.group("aiv").decode()), "")


# A kernel declaring no type is typed by the toolchain from the instructions it uses; one using the
# Matmul API (lib/matmul_intf.h) has the API's AIV client and AIC server, and the auto-detection
# launches such a MIX kernel at AIC:AIV 1:2 (asc-devkit, "设置合适的核数和算子Kernel类型"). With
# ASCENDC_CUBE_ONLY defined first the API is cube-only (Matmul使用说明), so the kernel is AIC_ONLY.
_MATMUL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*["<]lib/matmul_intf\.h[">]', re.M)
_CUBE_ONLY = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+ASCENDC_CUBE_ONLY\b", re.M)


def _undeclared_type(sources: tuple[bytes, ...]) -> list[str]:
    if not any(_MATMUL_INCLUDE.search(s) for s in sources):
        return []
    return ["KERNEL_TYPE_AIC_ONLY" if any(_CUBE_ONLY.search(s) for s in sources) else "KERNEL_TYPE_MIX_AIC_1_2"]


# The types whose launch runs AIC and AIV cores (sage_sim/mix.h, kernel_shape): they run as fibers.
_MIXED_TYPES = {"KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_2"}
NEUTRAL_ROOT = "/sage-src"


@dataclass(frozen=True)
class PathMap:
    """The user's folders and sources (real path -> neutral name) a build is keyed and compiled
    under; see `neutral_paths`."""

    folders: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def to_neutral(self, text: str) -> str:
        return _replaced(text, self.files, self.folders)

    def to_real(self, text: str) -> str:
        """A path or text the binary or compiler wrote (neutral names) back in the user's folders;
        a source's neutral file name alone (`src0.asc:31` in a message) becomes its own."""
        text = _replaced(text, {n: r for r, n in self.files.items()}, {n: r for r, n in self.folders.items()})
        for real, n in self.files.items():
            text = re.sub(rf"(?<![\w/.-]){re.escape(Path(n).name)}(?![\w.-])", lambda _m, r=real: Path(r).name, text)
        return text


def _replaced(text: str, files: dict[str, str], folders: dict[str, str]) -> str:
    if text in folders:
        return folders[text]
    for old in sorted(files, key=len, reverse=True):
        text = text.replace(old, files[old])
    for old in sorted(folders, key=len, reverse=True):
        text = text.replace(old + "/", folders[old] + "/")
    return text


def neutral_paths(sources: list[str]) -> PathMap:
    """Neutral names for a program's sources (resolved paths, in order): their folders become
    /sage-src/0, /sage-src/1, ... and source i is `src<i>` there with its suffix, so a copy in
    another folder, or a renamed one, compiles to the same bytes."""
    folders = {d: f"{NEUTRAL_ROOT}/{i}" for i, d in enumerate(dict.fromkeys(str(Path(s).parent) for s in sources))}
    files = {s: f"{folders[str(Path(s).parent)]}/src{i}{Path(s).suffix}" for i, s in enumerate(sources)}
    return PathMap(folders, files)


def coop_define(*sources: bytes, defines: Mapping[str, str] | None = None) -> dict[str, str]:
    """The runner's defines. SAGE_SIM_COOP when a source calls a cross-block wait (_COOP_APIS) or
    declares a mixed kernel type: its cores must run as fibers, so a waiting core lets the
    others run. SAGE_SIM_KERNEL_TYPE from the first KERNEL_TASK_TYPE_DEFAULT or __mix__/__cube__/__vector__
    qualifier, or for none the toolchain's default (_undeclared_type): the launch's cores (AICs and
    AIVs, sage_sim/mix.h) are known before the kernel body runs. Only the `#if` branches the
    build's `defines` select are read (cpp_conditionals)."""
    sources = tuple(active_text(s, defines) for s in sources)
    out: dict[str, str] = {}
    types = list(dict.fromkeys(t for s in sources for m in _KERNEL_TYPE.finditer(s) if (t := _kernel_type(m))))
    types = types or _undeclared_type(sources)
    if len(types) > 1:
        # kernels of several types in one program: only a mixed launch needs its type up front (a
        # vector kernel runs on the default AIV cores, a cube kernel's code does not depend on them)
        types = [t for t in types if t in _MIXED_TYPES][:1]
    if types and types[0] != _VECTOR_QUALIFIER:
        out["SAGE_SIM_KERNEL_TYPE"] = types[0]
    if any(api in s for s in sources for api in _COOP_APIS) or (types and types[0] in _MIXED_TYPES):
        out["SAGE_SIM_COOP"] = "1"
    return out


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("sage-npu")) / "builds"


class BuildCache:
    """Variants of one harness+flags key, each valid while its dependencies hash the same.

    The cache holds at most `limit_bytes` (binaries, kernel parts and precompiled headers):
    each store drops the least recently used entries past it. A hit or a reuse refreshes an
    entry's modification time, which is its recency; an entry used in the last
    `_IN_USE_S` seconds is never dropped, so a concurrent build never loses a file it reads."""

    def __init__(self, root: Path, limit_bytes: int | None = None) -> None:
        self.root = root
        self.limit_bytes = limit_bytes

    def _index(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def lookup(self, key: str, paths: PathMap | None = None) -> Path | None:
        """A binary whose dependencies hash as they did; a dependency in a user folder is recorded
        under its neutral name (`paths`) and read from the folder it is now in."""
        paths = paths or PathMap()
        try:
            variants = json.loads(self._index(key).read_text())
        except (OSError, ValueError):
            return None
        for v in variants:
            binary = Path(v["binary"])
            if binary.is_file() and all(_file_hash(paths.to_real(p)) == h for p, h in v["deps"].items()):
                touch(binary)
                return binary
        return None

    def store(self, key: str, built: Path, deps: list[str], paths: PathMap | None = None) -> Path:
        dep_hashes = {(paths or PathMap()).to_neutral(p): _file_hash(p) for p in deps}
        variant = _sha(json.dumps(dep_hashes, sort_keys=True).encode())[:16]
        target = self.root / key[:2] / f"{key[:24]}-{variant}"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        shutil.copy2(built, tmp)
        os.replace(tmp, target)  # atomic: concurrent builders never see half a binary
        touch(target)
        index = self._index(key)
        try:
            variants = json.loads(index.read_text())
        except (OSError, ValueError):
            variants = []
        variants = [v for v in variants if v["binary"] != str(target)]
        variants.insert(0, {"binary": str(target), "deps": dep_hashes})
        itmp = index.with_suffix(f".tmp{os.getpid()}")
        itmp.write_text(json.dumps(variants[:_MAX_VARIANTS]))
        os.replace(itmp, index)
        self.trim()
        return target

    def trim(self) -> None:
        """Drop least recently used entries until the cache fits `limit_bytes`."""
        if self.limit_bytes is None:
            return
        entries = _cache_entries(self.root)
        total = sum(e.bytes for e in entries)
        fresh = time.time() - _IN_USE_S
        for e in sorted(entries, key=lambda e: e.used):
            if total <= self.limit_bytes:
                break
            if e.used >= fresh:
                continue
            if e.path.is_dir():
                shutil.rmtree(e.path, ignore_errors=True)
            else:
                e.path.unlink(missing_ok=True)
            total -= e.bytes


@dataclass(frozen=True)
class CacheEntry:
    """One evictable thing in the build cache: a binary, a kernel part, or a precompiled-header set."""

    path: Path
    bytes: int
    used: float  # modification time: set when stored and on every reuse


def touch(path: Path) -> None:
    """Mark a cache entry as just used (its recency for the size bound)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _cache_entries(root: Path) -> list[CacheEntry]:
    entries: list[CacheEntry] = []
    stale = time.time() - _STALE_TMP_S
    try:
        groups = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        return entries
    for group in groups:
        try:
            children = list(group.iterdir())
        except OSError:
            continue
        for child in children:
            try:
                st = child.stat()
                if child.name.endswith((".json", ".lock")):
                    continue  # indexes are tiny (a lookup skips variants whose binary is gone); locks too
                if ".tmp" in child.name and st.st_mtime > stale:
                    continue  # being written now; one a killed process left goes once stale
                size = _tree_bytes(child) if child.is_dir() else st.st_size
            except OSError:
                continue
            entries.append(CacheEntry(child, size, st.st_mtime))
    return entries


class BuildCancelled(Exception):
    """`build`'s `stop` was set while the compiler ran: it was killed, nothing was cached."""


def _compile(cmd: list[str], cwd: str, timeout_s: float, stop: threading.Event | None
             ) -> subprocess.CompletedProcess[str]:
    """subprocess.run(cmd, capture_output, text, timeout), the compiler in a session of its own so
    that a kill ends its children (cc1plus, as, ld) too; with `stop`, polled every 0.1 s, killed
    when it is set (BuildCancelled). Whatever ends the wait (the timeout, `stop`, a Ctrl-C) kills it."""
    deadline = time.monotonic() + timeout_s
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                          start_new_session=True) as proc:
        try:
            while True:
                left = deadline - time.monotonic()
                try:
                    out, err = proc.communicate(timeout=max(0.0, min(left, 0.1) if stop is not None else left))
                    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
                except subprocess.TimeoutExpired:
                    if stop is not None and stop.is_set():
                        raise BuildCancelled() from None
                    if time.monotonic() >= deadline:
                        raise
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise


def build(harness_text: str, flags: list[str], cxx: str, cache: BuildCache, user_files: set[str],
          fallback: tuple[str, int], timeout_s: float, prebuilt: Prebuilt | None = None,
          paths: PathMap | None = None, stop: threading.Event | None = None) -> BuildResult:
    """Compile and link the harness (cached). With `prebuilt`, the precompiled emulator header
    and runtime object of these flags (npu_eval/prebuilt.py) stand in for the emulator's code.
    With `paths` (`neutral_paths`; the harness then names the sources by their neutral names),
    the flags, the key and the dependencies name the user's folders so (-ffile-prefix-map): a
    copy elsewhere reuses the build. The compiler's output is given back with the real paths.
    Setting `stop` kills the compiler and raises BuildCancelled (its folder is removed)."""
    start = time.monotonic()
    paths = paths or PathMap()
    plain = _sha("\0".join([harness_text, compiler_identity(cxx), *(paths.to_neutral(f) for f in flags)]).encode())
    key = _sha("\0".join([plain, *prebuilt.flags, "\0prebuilt", prebuilt.key]).encode()) if prebuilt else plain
    # A binary built before the prebuilt set existed behaves the same: no need to build it again.
    hit = cache.lookup(key, paths) or (cache.lookup(plain, paths) if prebuilt else None)
    if hit:
        return BuildResult(True, hit, True, time.monotonic() - start)
    flags = [*flags, *(f"-ffile-prefix-map={real}={n}" for real, n in paths.folders.items())]
    with tempfile.TemporaryDirectory(prefix=scratch_dirs.prefix("build")) as tmp:
        src = Path(tmp) / "sage_harness.cpp"
        src.write_text(harness_text)
        out, dep = Path(tmp) / "harness", Path(tmp) / "harness.d"
        cmd = [cxx, *(prebuilt.flags if prebuilt else []), *flags, "-MD", "-MF", str(dep), str(src),
               *([str(prebuilt.runtime)] if prebuilt else []), "-o", str(out)]
        try:
            proc = _compile(cmd, tmp, timeout_s, stop)
        except subprocess.TimeoutExpired:
            diag = compile_errors.CompileDiagnostic(fallback[0], fallback[1], 1, "error", "compile-error",
                                                    f"the compiler ran past {timeout_s:.0f} s (runaway "
                                                    "template or constexpr recursion?)")
            return BuildResult(False, None, False, time.monotonic() - start, [diag])
        except OSError as e:
            diag = compile_errors.CompileDiagnostic(fallback[0], fallback[1], 1, "error", "compile-error",
                                                    f"cannot run the C++ compiler {cxx!r}: {e}")
            return BuildResult(False, None, False, time.monotonic() - start, [diag])
        text = paths.to_real(proc.stderr + proc.stdout)
        if proc.returncode != 0:
            diags = compile_errors.parse(text, user_files, fallback, compile_errors.flag_defines(cmd))
            if not diags:
                diags = [compile_errors.CompileDiagnostic(
                    fallback[0], fallback[1], 1, "error", "compile-error",
                    refusals.one_line("the compiler failed: " + (text.strip().splitlines() or ["no output"])[-1]))]
            return BuildResult(False, None, False, time.monotonic() - start, diags, text)
        deps = [str(Path(tmp, d).resolve()) if not os.path.isabs(d) else d
                for d in _parse_depfile(dep.read_text())]
        skip = (tmp, str(prebuilt.include_dir)) if prebuilt else (tmp,)
        deps = [d for d in deps if not d.startswith(skip)]  # the prebuilt set is in the key
        binary = cache.store(key, out, deps, paths)
        return BuildResult(True, binary, False, time.monotonic() - start, [], text)


def syntax_check(kernel: Path, flags: list[str], cxx: str, user_files: set[str], fallback: tuple[str, int],
                 timeout_s: float) -> list[compile_errors.CompileDiagnostic]:
    """Compile a kernel alone, without a harness (a kernel with no host.py/reference.py yet):
    its compile errors, condensed, and nothing else."""
    with tempfile.TemporaryDirectory(prefix=scratch_dirs.prefix("check")) as tmp:
        src = Path(tmp) / "check.cpp"
        src.write_text(f'#include "sage_sim/harness.h"\n#include {json.dumps(str(kernel))}\n')
        try:
            proc = subprocess.run([cxx, *flags, "-fsyntax-only", str(src)], capture_output=True, text=True,
                                  timeout=timeout_s, cwd=tmp)
        except (OSError, subprocess.TimeoutExpired) as e:
            return [compile_errors.CompileDiagnostic(fallback[0], fallback[1], 1, "error", "compile-error",
                                                     f"the compiler did not finish: {e}")]
        if proc.returncode == 0:
            return []
        return compile_errors.parse(proc.stderr + proc.stdout, user_files, fallback,
                                    compile_errors.flag_defines(flags)) or [
            compile_errors.CompileDiagnostic(fallback[0], fallback[1], 1, "error", "compile-error",
                                             refusals.one_line("the compiler failed: " + proc.stderr.strip()[-300:]))]
