"""Program mode: `sage-npu run FILE [-- ARGS]` builds a whole Ascend C program (its kernels
and its host `main()`, `.asc` or `.cpp`, with the headers beside it) for the CPU and runs it
in the sandbox, without CANN.

- rewrite: every `kernel<<<blockDim, l2ctrl, stream>>>(args)` (found with tree-sitter, which
  does not know `<<<>>>`, so the launch configuration is blanked first as signature.py does)
  becomes `::sage::sim::kernel_launch(site, kernel, blockDim, l2ctrl, stream)(args)`. The
  rewritten source starts with `#line 1 "<the file>"` and keeps every line where it was, so
  compile errors and faults name the user's file and line; the columns the rewrite moved on a
  launch line are mapped back before the compiler's output is read.
- build: the rewritten program with the emulator's headers (sim/include: kernel_operator.h,
  acl/acl.h, tikicpulib.h) through build.py, cached like task builds. A program that compiles
  kernels while it runs (aclrtc) is linked with -rdynamic and given the build's compiler command
  (rtc_compiler.txt in its output folder): sage_sim/rtc.h compiles them into shared objects the
  program loads, in the same sandboxed run.
- run: in the sandbox, in a copy of the current directory (the program reads and writes its
  files there as it would on the device; new and changed files are copied back), as an
  unprivileged user when started as root, with a time limit. Each launch writes its faults
  and trace to its own folder (sim/include/sage_sim/launch.h); the cost model estimates each.
- report: one LaunchReport per launch, program-level diagnostics (compile errors, ACL misuse,
  a crash or timeout in host code), and the exit code: the program's own, or 1 when a launch
  faulted or the run crashed, timed out or did not compile.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from tree_sitter import Node

from sage_npu.npu_eval import compile_errors, protocol
from sage_npu.npu_eval import sandbox as sb
from sage_npu.npu_eval import scratch as scratch_dirs
from sage_npu.npu_eval.advisor import AdviceInput, advise, kernel_file
from sage_npu.npu_eval.backends import unavailable
from sage_npu.npu_eval.build import (
    SIM_INCLUDE,
    BuildCache,
    PathMap,
    build,
    compile_flags,
    coop_define,
    default_cache_dir,
    neutral_paths,
)
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.report import AdviceFinding, Diagnostic, Timing, diagnostic, labelled
from sage_npu.npu_eval.settings import DEFAULT_TIMEOUT_S, EvalSettings
from sage_npu.npu_eval.signature import LAUNCH_CONFIG, blank_ascendc, parse
from sage_npu.npu_eval.symbolize import CrashPc, function_at, line_at
from sage_npu.npu_eval.task import SOURCE_SUFFIXES
from sage_npu.npu_eval.timing import LaunchSite, costs_for, estimate_launch
from sage_npu.npu_eval.ubuf import ubuf_edits

PROGRAM_TU_NAME = "sage_program.cpp"
MIRROR_MAX_FILES = 20000
MIRROR_MAX_BYTES = 1 << 30

LaunchStatus = Literal["ok", "runtime_error", "timeout", "crash"]
ProgramStatus = Literal["ok", "failed", "faulted", "crash", "timeout", "compile_error"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LaunchReport(_Model):
    """One kernel launch of the program: where it was made, what went wrong in it, its estimate."""

    index: int                     # 1-based, in the order the program made them
    kernel: str                    # as written at the launch: "add_custom<256>"
    file: str
    line: int
    column: int = 1
    block_dim: int
    status: LaunchStatus
    diagnostics: list[Diagnostic] = []
    timing: Timing | None = None
    advice: list[AdviceFinding] = []  # the advisor's findings when the launch ran ok (docs/advisor.md)


class ProgramReport(_Model):
    schema_version: Literal[1] = 1
    program: str
    sources: list[str]
    args: list[str] = []
    backend: Literal["sim", "ascend"] = "sim"
    chip: str = "910B2"
    status: ProgramStatus
    exit_code: int                 # what sage-npu run exits with
    program_exit_code: int | None = None  # the program's own, when it ran to its end
    diagnostics: list[Diagnostic] = []    # compile errors, host-code findings, a host crash
    launches: list[LaunchReport] = []
    stdout: str = ""               # the program's output when captured (--json)
    stderr: str = ""
    build_seconds: float = 0.0
    build_cached: bool = False
    run_seconds: float = 0.0
    protections: list[str] = []    # the sandbox layers that held for the run: pid-ns, net-ns, nobody, seccomp
    # run --estimate-only: the cube's multiply-accumulate skipped in every launch, so what a matrix
    # kernel wrote is not its product (the program's own check of it fails); the estimates are the same
    estimate_only: bool = False

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"] + [
            d for launch in self.launches for d in launch.diagnostics if d.severity == "error"]


class ProgramError(Exception):
    """The program cannot be run (a missing file, a working directory too large to mirror)."""


# ---- rewrite ----

@dataclass
class LaunchText:
    """A `<<<>>>` launch as written: byte offsets into the source and the pieces' text."""

    kernel: str
    kernel_start: int
    open_start: int     # the `<<<`
    close_start: int    # the `>>>`
    config: str
    args: list[str]
    line: int           # 1-based, of the kernel name
    column: int         # 1-based characters


@dataclass
class Rewrite:
    text: str
    launches: list[LaunchText]
    # (line, byte offset in the line of the original text, original length, new length) per edit
    edits: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message)


_SKIP_NODES = {"comment", "string_literal", "raw_string_literal", "char_literal", "system_lib_string"}


def _c_string(s: str) -> str:
    return json.dumps(s)


def find_launches(src: bytes) -> tuple[list[LaunchText], list[tuple[int, str]]]:
    """The `<<<>>>` launches in a source, and the lines where one could not be read."""
    blanked = blank_ascendc(src)
    tree = parse(src)
    calls: dict[int, Node] = {}  # argument list start byte -> call_expression

    def visit(node) -> None:
        if node.type == "call_expression":
            args = node.child_by_field_name("arguments")
            if args is not None:
                calls[args.start_byte] = node
        for c in node.children:
            visit(c)

    visit(tree.root_node)
    found: list[LaunchText] = []
    problems: list[tuple[int, str]] = []
    for m in LAUNCH_CONFIG.finditer(src):
        at = tree.root_node.descendant_for_byte_range(m.start(), m.start())
        skip = False
        while at is not None:
            if at.type in _SKIP_NODES or at.type.startswith("preproc_def") or at.type == "preproc_function_def":
                skip = True
                break
            at = at.parent
        if skip:
            continue
        line = src.count(b"\n", 0, m.start()) + 1
        p = m.end()
        while p < len(blanked) and blanked[p:p + 1] in (b" ", b"\t", b"\r", b"\n"):
            p += 1
        call = calls.get(p)
        fn = call.child_by_field_name("function") if call is not None else None
        args_node = call.child_by_field_name("arguments") if call is not None else None
        if fn is None or args_node is None or fn.end_byte > m.start() or blanked[fn.end_byte:m.start()].strip():
            problems.append((line, "cannot read this kernel launch: write it as "
                                   "kernel<<<blockDim, nullptr, stream>>>(arg, ...)"))
            continue
        args = [src[a.start_byte:a.end_byte].decode("utf-8", "replace") for a in args_node.named_children
                if a.type != "comment"]
        kline_start = src.rfind(b"\n", 0, fn.start_byte) + 1
        found.append(LaunchText(
            kernel=" ".join(src[fn.start_byte:fn.end_byte].decode("utf-8", "replace").split()),
            kernel_start=fn.start_byte, open_start=m.start(), close_start=m.end() - 3,
            config=src[m.start() + 3:m.end() - 3].decode("utf-8", "replace"), args=args,
            line=src.count(b"\n", 0, fn.start_byte) + 1,
            column=len(src[kline_start:fn.start_byte].decode("utf-8", "replace")) + 1))
    return found, problems


def rewrite(src: bytes) -> Rewrite:
    """The source with its launches turned into emulator calls and its `__ubuf__` arrays placed in
    the emulated UB (ubuf.py), every line in its place."""
    launches, problems = find_launches(src)
    out = bytearray()
    pos = 0
    edits: dict[int, list[tuple[int, int, int]]] = {}

    def edit(start: int, length: int, new: bytes) -> None:
        nonlocal pos
        out.extend(src[pos:start])
        out.extend(new)
        pos = start + length
        line = src.count(b"\n", 0, start) + 1
        line_start = src.rfind(b"\n", 0, start) + 1
        edits.setdefault(line, []).append((start - line_start, length, len(new)))

    pending = [(e.start, e.length, e.new) for e in ubuf_edits(src)]
    for ln in launches:
        args = " ".join(", ".join(ln.args).split())
        site = (f"::sage::sim::kernel_launch(::sage::sim::LaunchSite{{__FILE__, __LINE__, {ln.column}, "
                f"{_c_string(ln.kernel)}, {_c_string(args)}, true}}, ")
        pending += [(ln.kernel_start, 0, site.encode()), (ln.open_start, 3, b", "), (ln.close_start, 3, b")")]
    for start, length, new in sorted(pending, key=lambda e: e[0]):
        edit(start, length, new)
    out.extend(src[pos:])
    return Rewrite(out.decode("utf-8", "replace"), launches, edits, problems)


def map_column(edits: list[tuple[int, int, int]], col: int) -> int:
    """A 1-based byte column of a rewritten line, back in the original line."""
    delta = 0
    for start, old_len, new_len in sorted(edits):
        new_start = start + delta
        if col - 1 < new_start:
            break
        if col - 1 < new_start + new_len:
            return start + 1
        delta += new_len - old_len
    return max(col - delta, 1)


_DIAG_LOC = re.compile(r"^(?P<file>[^:\n]+?):(?P<line>\d+):(?P<col>\d+):", re.M)


def remap_compiler_output(text: str, rewrites: dict[str, Rewrite]) -> str:
    """Compiler messages on launch lines, with columns of the original text."""

    def fix(m: re.Match) -> str:
        rw = rewrites.get(m.group("file"))
        line = int(m.group("line"))
        if rw is None or line not in rw.edits:
            return m.group(0)
        return f"{m.group('file')}:{line}:{map_column(rw.edits[line], int(m.group('col')))}:"

    return _DIAG_LOC.sub(fix, text)


# ---- build ----

def _user_files(sources: list[Path]) -> set[str]:
    files = {str(p.resolve()) for p in sources}
    for d in {p.resolve().parent for p in sources}:
        files |= {str(p.resolve()) for p in d.iterdir() if p.suffix in SOURCE_SUFFIXES}
    return files


def _main_line(src: bytes) -> int:
    m = re.search(rb"\bint(?:32_t)?\s+main\s*\(", src)
    return src.count(b"\n", 0, m.start()) + 1 if m else 1


# A program that compiles kernels while it runs (aclrtc, acl/acl_rt_compile.h).
_RTC_USE = re.compile(rb"\baclrtcCompileProg\b")


def uses_rtc(sources: list[Path]) -> bool:
    return any(_RTC_USE.search(p.read_bytes()) for p in sources)


@dataclass
class Built:
    binary: Path | None
    seconds: float
    cached: bool
    diagnostics: list[Diagnostic]
    rewrites: dict[str, Rewrite]
    paths: PathMap = field(default_factory=PathMap)  # the neutral names the binary reports paths by
    rtc_compiler: list[str] = field(default_factory=list)  # aclrtc's command line, when the program uses it


def build_program(sources: list[Path], settings: EvalSettings, defines: dict[str, str] | None = None,
                  debug: bool = False, line_tables: bool = False) -> Built:
    """Rewrite and compile the program's sources (one translation unit, in order); `debug`: for
    gdb (`-g -O0`, under the sources' own paths). `line_tables` adds -g1, which GCC compiles to
    the same code: the twin a crash's program counter is looked up in (host_crash_line), built
    only when host code crashed."""
    chip = chip_profile(settings.chip)
    parts = ["// Generated by sage-npu run: the program, its launches rewritten. Do not edit.",
             '#include "sage_sim/launch.h"']
    rewrites: dict[str, Rewrite] = {}
    problems: list[Diagnostic] = []
    # gdb shows the sources by the names compiled in: a debug build keeps the real ones.
    paths = PathMap() if debug else neutral_paths([str(p.resolve()) for p in sources])
    for path in sources:
        resolved = str(path.resolve())
        rw = rewrite(path.read_bytes())
        rewrites[resolved] = rw
        problems += [diagnostic(resolved, line, "error", "compile-error", msg) for line, msg in rw.problems]
        # Named by its neutral name, so a copy elsewhere or a renamed one builds the same text.
        name = paths.files.get(resolved, resolved)
        parts += [f"#line 1 {_c_string(name)}", rw.text if rw.text.endswith("\n") else rw.text + "\n"]
    first = str(sources[0].resolve())
    if problems:
        return Built(None, 0.0, False, problems, rewrites, paths)
    coop = coop_define(*(p.read_bytes() for p in sources), defines={"ASCENDC_CPU_DEBUG": "1", **(defines or {})})
    flags = compile_flags(chip, "-O0" if debug else settings.opt_level,
                          {"ASCENDC_CPU_DEBUG": "1", **coop, **(defines or {})}, debug=debug)
    if line_tables and not debug:
        flags.append("-g1")
    for d in dict.fromkeys(str(p.resolve().parent) for p in sources):
        flags += ["-iquote", d]
    # An AI CPU kernel includes "aicpu_api.h" from the folder CANN's AICPU CMake language adds.
    flags += ["-idirafter", str(SIM_INCLUDE / "aicpu_api")]
    # aclrtc compiles kernels at run time with the program's own compiler and flags into a shared
    # object the program loads; -rdynamic lets it share the program's emulator state.
    rtc = [shutil.which(settings.cxx) or settings.cxx, *flags] if uses_rtc(sources) else []
    if rtc:
        flags.append("-rdynamic")
    user_files = _user_files(sources)
    fallback = (first, _main_line(sources[0].read_bytes()))
    cache = BuildCache(settings.cache_dir or default_cache_dir(), settings.build_cache_mb << 20)
    res = build("\n".join(parts), flags, settings.cxx, cache, user_files, fallback, settings.compile_timeout_s,
                paths=paths)
    if res.ok:
        return Built(res.binary, res.seconds, res.cached, [], rewrites, paths, rtc)
    if res.output:
        parsed = compile_errors.parse(remap_compiler_output(res.output, rewrites), user_files, fallback)
        cdiags = parsed or res.diagnostics
    else:
        cdiags = res.diagnostics
    diags = [diagnostic(d.file, d.line, d.severity, d.code, d.message, d.column)
             for d in cdiags]
    return Built(None, res.seconds, False, diags, rewrites, paths)


# ---- the working directory, mirrored into the sandbox ----

def _walk(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"
                       and not os.path.islink(os.path.join(dirpath, d))]
        yield Path(dirpath), filenames


def mirror_in(src: Path, dst: Path) -> dict[str, tuple[int, int]]:
    """Copy the working directory's files (hidden folders left out) into the sandbox; their
    (size, mtime) afterwards, to tell what the program changed."""
    files, total = 0, 0
    for d, names in _walk(src):
        for n in names:
            p = d / n
            with contextlib.suppress(OSError):
                if p.is_file():
                    files += 1
                    total += p.stat().st_size
        if files > MIRROR_MAX_FILES or total > MIRROR_MAX_BYTES:
            raise ProgramError(
                f"the current directory {src} holds more than {MIRROR_MAX_FILES} files or "
                f"{MIRROR_MAX_BYTES >> 20} MB; sage-npu run copies it into the sandbox, so run it from the "
                "program's own folder (or one holding only the files it reads)")
    state: dict[str, tuple[int, int]] = {}
    for d, names in _walk(src):
        rel_dir = d.relative_to(src)
        (dst / rel_dir).mkdir(parents=True, exist_ok=True)
        for n in names:
            p = d / n
            if not p.is_file():
                continue
            target = dst / rel_dir / n
            try:
                shutil.copy2(p, target)
            except OSError:
                continue
            st = target.stat()
            state[str(rel_dir / n)] = (st.st_size, st.st_mtime_ns)
    return state


def mirror_out(work: Path, dest: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    """Copy the files the program created or changed back to the working directory."""
    changed = []
    for d, names in _walk(work):
        rel_dir = d.relative_to(work)
        target_dir = dest / rel_dir
        if not target_dir.exists():
            with contextlib.suppress(OSError):
                target_dir.mkdir(parents=True)
        for n in names:
            p = d / n
            if p.is_symlink() or not p.is_file():
                continue
            rel = str(rel_dir / n)
            st = p.stat()
            if before.get(rel) == (st.st_size, st.st_mtime_ns):
                continue
            target = target_dir / n
            if target.is_dir():
                continue
            try:
                shutil.copyfile(p, target)
                changed.append(rel)
            except OSError:
                continue
    return changed


# ---- running ----

def _run(argv: list[str], work: Path, scratch: Path, out: Path, limits: sb.SandboxLimits, settings: EvalSettings,
         stdout: int | None, stderr: int | None) -> sb.SandboxResult:
    """The program through the sandbox's one entry, in the mirrored working directory; launch.h
    reads where to write each launch's files, whether to trace and whether to compute the cube's
    values (not with `check` false: run --estimate-only) from the environment."""
    env = {protocol.ENV_PROGRAM_OUT: str(out), protocol.ENV_PROGRAM_TRACE: "1" if settings.estimate else "0",
           protocol.ENV_PROGRAM_VALUES: "1" if settings.check else "0"}
    res = sb.run_sandboxed(argv, work, limits, settings.stdout_limit, scratch=scratch, env=env,
                           stdout_fd=stdout, stderr_fd=stderr)
    if res.stdout_truncated:
        res.stdout += "\n[output truncated]"
    return res


def _read_tsv(path: Path) -> list[list[str]]:
    try:
        return [ln.split("\t") for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return []


def _fault_diag(row: list[str], default: tuple[str, int], known: set[str], paths: PathMap) -> Diagnostic | None:
    """A finding row of the binary's, its file (a neutral name) in the user's folder."""
    if len(row) < 7:
        return None
    code, sev, file, line, block, _count, msg = row[:7]
    file, msg = paths.to_real(file), paths.to_real(msg)
    if not file or file not in known and not Path(file).is_file():
        file, line = default[0], str(default[1])
    blk = int(block) if block.lstrip("-").isdigit() and int(block) >= 0 else None
    return diagnostic(file, int(line) if line.isdigit() else 1, sev, code, msg, block=blk)


def _read_launch(d: Path, index: int, settings: EvalSettings, default_file: str,
                 known: set[str], program_died: bool, paths: PathMap) -> LaunchReport:
    meta = (_read_tsv(d / protocol.META) or [[str(index), default_file, "1", "1", "?", "1"]])[0]
    file, line, column = paths.to_real(meta[1]) or default_file, int(meta[2] or 1), max(int(meta[3] or 1), 1)
    kernel, block_dim = meta[4], int(meta[5])
    site = (file, line)
    diags: dict[tuple, Diagnostic] = {}
    rows = _read_tsv(d / protocol.FAULTS)
    crash_rows = _read_tsv(d / protocol.CRASH)
    for row in rows + crash_rows:
        if row[:1] == [protocol.CRASH_PC]:
            continue  # a program counter, for a crash before the kernel's first call
        dg = _fault_diag(row, site, known, paths)
        if dg is not None:
            # a warning and an error of one code at one line are two findings (an error must never
            # hide behind the warning that came first)
            diags.setdefault((dg.code, dg.file, dg.line, dg.severity), dg)
    done = _read_tsv(d / protocol.DONE)
    status: LaunchStatus
    if any(r and r[0] == "timeout" for r in crash_rows):
        status = "timeout"
    elif crash_rows or (not done and program_died):
        status = "crash"
        if not crash_rows:
            diags[("crash",)] = diagnostic(file, line, "error", "crash",
                                           f"the program died during this launch of {kernel}")
    elif not done:
        status = "crash"
        diags[("crash",)] = diagnostic(file, line, "error", "crash", f"this launch of {kernel} did not finish")
    elif done[0][0] != "0" or any(x.severity == "error" for x in diags.values()):
        status = "runtime_error"
        if not any(x.severity == "error" for x in diags.values()):
            # the binary stopped the launch but wrote no error for it: still a fault the user sees
            diags[("crash",)] = diagnostic(file, line, "error", "crash",
                                           f"this launch of {kernel} stopped (exit status {done[0][0]}) without "
                                           "saying why: a defect of the emulator, please report it")
    else:
        status = "ok"
    timing = None
    advice: list[AdviceFinding] = []
    if done and done[0][0] == "0" and settings.estimate:
        # The task pipeline's estimate stage on this launch's trace; a program names no outputs, so
        # no output-bytes floor applies.
        chip = chip_profile(settings.chip)
        costs = costs_for(settings, chip)
        timing, trace = estimate_launch(d, LaunchSite(block_dim, file, line), chip, costs, diags, paths=paths)
        if status == "ok" and any(x.severity == "error" for x in diags.values()):
            status = "runtime_error"  # a missing-sync the cost model's schedule found
        if status == "ok" and trace is not None and timing is not None and timing.estimated:
            # the host is the C++ file of the launch: its block count and tiling are set there
            advice = advise(AdviceInput(trace, block_dim, chip, costs, kernel_file(trace, Path(file)), Path(file)))
    # The cost model read the trace's locations as the binary wrote them: neutral names.
    real = [x.model_copy(update={"file": paths.to_real(x.file), "message": paths.to_real(x.message)})
            for x in diags.values()]
    if timing is not None:
        timing = timing.model_copy(update={"hot_lines": [h.model_copy(update={"file": paths.to_real(h.file)})
                                                         for h in timing.hot_lines]})
    order = sorted(real, key=lambda x: (0 if x.severity == "error" else 1, x.file, x.line))
    return LaunchReport(index=index, kernel=kernel, file=file, line=line, column=column, block_dim=block_dim,
                        status=status, diagnostics=order, timing=timing, advice=advice)


def launch_fingerprint(d: Path) -> bytes:
    """What `_read_launch` reads of a launch's folder, its index aside: every file's name and bytes,
    the first column of meta.tsv (the index) left out. Two launches with the same fingerprint get the
    same report but for the index."""
    h = hashlib.blake2b(digest_size=20)
    for p in sorted(d.iterdir()):
        if not p.is_file() or p.is_symlink():
            continue
        data = p.read_bytes()
        if p.name == protocol.META:
            data = data.partition(b"\t")[2]
        h.update(p.name.encode() + b"\0" + len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


def read_launches(out: Path, settings: EvalSettings, default_file: str, known: set[str], program_died: bool,
                  paths: PathMap, reuse: bool = True) -> list[LaunchReport]:
    """The report of every launch folder in `out`, in launch order. `reuse`: a launch whose folder
    holds the same files as an earlier one's (`launch_fingerprint`) gets a copy of that report with its
    own index, without reading its trace again: a program that launches the same kernel on the same
    data thousands of times (a timing loop) would otherwise have each identical trace estimated and
    advised again, several times the cost of the launch itself (benchmarks/bench_launches.py)."""
    n = len(protocol.LAUNCH_PREFIX)
    dirs = sorted((p for p in out.glob(protocol.LAUNCH_PREFIX + "*") if p.name[n:].isdigit()),
                  key=lambda p: int(p.name[n:]))
    memo: dict[bytes, LaunchReport] = {}
    reports = []
    for d in dirs:
        index = int(d.name[n:])
        key = launch_fingerprint(d) if reuse else b""
        seen = memo.get(key) if reuse else None
        if seen is not None:
            reports.append(seen.model_copy(update={"index": index}))
            continue
        report = _read_launch(d, index, settings, default_file, known, program_died, paths)
        if reuse:
            memo[key] = report
        reports.append(report)
    return reports


def run_program(file: str | Path, args: list[str] | None = None, settings: EvalSettings | None = None,
                cwd: str | Path | None = None, *, extra_sources: list[str | Path] | None = None,
                timeout_s: float | None = None, stdout: int | None = None, stderr: int | None = None,
                defines: dict[str, str] | None = None) -> ProgramReport:
    """Build and run one program. `stdout`/`stderr`: file descriptors the program writes to
    (passed through), or None to capture them into the report. Raises ProgramError when the
    program cannot be run at all."""
    settings = settings or EvalSettings.model_validate({})
    args = list(args or [])
    path = Path(file)
    sources = [path, *[Path(p) for p in extra_sources or []]]
    for p in sources:
        if not p.is_file():
            raise ProgramError(f"{p}: no such file")
    cwd = Path(cwd or os.getcwd()).resolve()
    program = str(path.resolve())
    chip = chip_profile(settings.chip)
    base: dict[str, Any] = dict(program=program, sources=[str(p.resolve()) for p in sources], args=args, chip=chip.name,
                                estimate_only=not settings.check)
    if settings.backend == "ascend":  # bisheng and the NPU; auto runs programs on the emulator
        from sage_npu.npu_eval.backends.ascend_program import run_device_program

        return run_device_program(sources, args, settings, cwd, timeout_s)
    missing = unavailable(settings.backend)
    if missing is not None:
        raise ProgramError(missing)

    built = build_program(sources, settings, defines)
    if built.binary is None:
        return ProgramReport(**base, status="compile_error", exit_code=1, diagnostics=built.diagnostics,
                             build_seconds=round(built.seconds, 3))

    scratch = scratch_dirs.make("run")
    scratch.chmod(0o711)
    try:
        work, out, bindir = scratch / "work", scratch / "out", scratch / "bin"
        for d in (out, bindir):
            d.mkdir()
        before = mirror_in(cwd, work)
        binary = bindir / (path.stem or "program")
        shutil.copy2(built.binary, binary)
        if built.rtc_compiler:
            (out / protocol.RTC_COMPILER).write_text("\n".join(built.rtc_compiler) + "\n")
        sb.prepare_scratch(scratch)
        limits = sb.SandboxLimits(timeout_s=timeout_s or DEFAULT_TIMEOUT_S,
                                  memory_bytes=settings.memory_limit_mb << 20, file_bytes=1 << 30)
        ran = _run([str(binary), *args], work, scratch, out, limits, settings, stdout, stderr)
        mirror_out(work, cwd, before)
        return _collect(base, built, ran, out, settings, program,
                        lambda: build_program(sources, settings, defines, line_tables=True).binary)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _collect(base: dict, built: Built, ran: sb.SandboxResult, out: Path, settings: EvalSettings,
             program: str, with_lines: Callable[[], Path | None]) -> ProgramReport:
    known = set(built.rewrites)
    main_line = _main_line(Path(program).read_bytes())
    default = (program, main_line)
    rc = ran.returncode
    died = ran.timed_out or rc < 0 or rc >= 128
    diags: list[Diagnostic] = []
    crash_rows = _read_tsv(out / protocol.HOST_CRASH)
    at = host_crash_line(crash_rows, built, known, with_lines) or default
    for row in _read_tsv(out / protocol.HOST_FAULTS) + crash_rows:
        if row[:1] == [protocol.CRASH_PC]:
            continue
        dg = _fault_diag(row, at if row[:1] in (["crash"], ["timeout"]) else default, known, built.paths)
        if dg is not None:
            diags.append(dg)
    launches = read_launches(out, settings, program, known, died, built.paths)
    in_launch = any(lr.status in ("timeout", "crash") for lr in launches)
    status: ProgramStatus
    if ran.timed_out or any(d.code == "timeout" for d in diags) or any(lr.status == "timeout" for lr in launches):
        status = "timeout"
        if not in_launch and not any(d.code == "timeout" for d in diags):
            diags.append(diagnostic(program, main_line, "error", "timeout",
                                    f"the program ran past its {ran.seconds:.1f} s limit (the --timeout option)"))
    elif died:
        status = "crash"
        if not in_launch and not any(d.code == "crash" for d in diags):
            sig = -rc if rc < 0 else rc - 128
            diags.append(diagnostic(program, main_line, "error", "crash",
                                    f"the program died of signal {sig} ({_signal_name(sig)})"))
    elif any(lr.status != "ok" for lr in launches) or any(d.severity == "error" for d in diags):
        status = "faulted"
    elif rc != 0:
        status = "failed"
    else:
        status = "ok"
    if status in ("ok", "failed"):
        exit_code = rc
    elif status == "faulted":
        exit_code = rc if rc != 0 else 1
    else:
        exit_code = 1
    return ProgramReport(**base, status=status, exit_code=exit_code, program_exit_code=None if died else rc,
                         diagnostics=diags, launches=launches, stdout=ran.stdout, stderr=ran.stderr,
                         build_seconds=round(built.seconds, 3), build_cached=built.cached,
                         run_seconds=round(ran.seconds, 3), protections=list(ran.protections))


def host_crash_line(rows: list[list[str]], built: Built, known: set[str],
                    with_lines: Callable[[], Path | None]) -> tuple[str, int] | None:
    """Where host code crashed (or hung): the line of the program counter the signal handler
    recorded, when it is in one of the program's sources (not in a library or the emulator).
    The run's binary has no line tables; `with_lines` builds its twin that has (cached)."""
    pc = next((CrashPc.parse(r[6]) for r in rows if len(r) >= 7 and r[0] == protocol.CRASH_PC), None)
    if pc is None or built.binary is None:
        return None
    frames = [f for f in (pc, *pc.callers()) if function_at(built.binary, f) is not None]
    twin = with_lines() if frames else None
    if twin is None:
        return None
    for frame in frames:
        # The innermost frame in the program's own sources: a library or emulator frame is skipped.
        found = line_at(twin, frame)
        file = built.paths.to_real(found[0]) if found else ""
        if found and file in known:
            return file, found[1]
    return None


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


# ---- human output ----

def _launch_key(lr: LaunchReport) -> tuple:
    """What a launch's lines say apart from its index: launches alike in it print once."""
    t = lr.timing
    return (lr.kernel, lr.file, lr.line, lr.block_dim, lr.status,
            tuple((d.code, d.severity, d.file, d.line, d.message) for d in lr.diagnostics),
            tuple((f.code, f.file, f.line, f.message) for f in lr.advice),
            None if t is None else (round(t.estimated_us, 2), t.bottleneck))


def alike_launches(launches: list[LaunchReport]) -> list[tuple[LaunchReport, int]]:
    """Runs of consecutive launches that would print the same lines (a timing loop launching one
    kernel 10000 times): each run's first launch and the index of its last."""
    runs: list[tuple[LaunchReport, int]] = []
    for lr in launches:
        if runs and _launch_key(runs[-1][0]) == _launch_key(lr) and runs[-1][1] + 1 == lr.index:
            runs[-1] = (runs[-1][0], lr.index)
        else:
            runs.append((lr, lr.index))
    return runs


def format_program_report(report: ProgramReport) -> str:
    """Compiler-style lines for every finding, then one line per launch and a summary; consecutive
    launches alike in all of that print once, as a range ("launches 2-10000")."""
    lines = []

    def emit(d: Diagnostic, where: str = "") -> None:
        block = f" (block {d.block})" if d.block is not None and f"block {d.block}" not in d.message else ""
        lines.append(f"{d.file}:{d.line}:{d.column}: {d.severity}: {d.message}{block}{where} [{d.code}]")

    def which(lr: LaunchReport, last: int) -> str:
        return f"launch {lr.index}" if last == lr.index else f"launches {lr.index}-{last}"

    runs = alike_launches(report.launches)
    for d in report.diagnostics:
        emit(d)
    for lr, last in runs:
        for d in lr.diagnostics:
            emit(d, f" ({which(lr, last)})")
    for lr, last in runs:
        for f in lr.advice:
            lines.append(f"{f.file}:{f.line}:1: {f.severity}: {f.message} ({which(lr, last)}) [{f.code}]")
    for lr, last in runs:
        t = lr.timing
        est = (f", {labelled(f'{t.estimated_us:.2f} us', t.estimated)} device time, bottleneck {t.bottleneck}"
               if t is not None else "")
        each = f" each ({last - lr.index + 1} alike)" if last != lr.index else ""
        lines.append(f"{which(lr, last)}: {lr.kernel} on {lr.block_dim} blocks at {Path(lr.file).name}:{lr.line}: "
                     f"{lr.status}{est}{each}")
    what = {"ok": "ran to its end", "failed": "ran to its end", "faulted": "ran, but a launch or ACL call faulted",
            "crash": "crashed", "timeout": "ran past its time limit", "compile_error": "did not compile"}[report.status]
    code = f", exit code {report.program_exit_code}" if report.program_exit_code is not None else ""
    lines.append(f"{Path(report.program).name} on {report.chip} (sim): {what}{code}; {len(report.launches)} "
                 f"launch(es); build {report.build_seconds:.1f} s{' (cached)' if report.build_cached else ''}, "
                 f"run {report.run_seconds:.2f} s")
    if report.estimate_only:
        lines.append("estimate only: the cube's multiply-accumulate was skipped, so the matrix results the program "
                     "read or checked are not computed; the estimates are those of a full run")
    return "\n".join(lines)
