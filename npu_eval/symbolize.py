"""Name the function a kernel was in when it died before its first Ascend C call.

Until a block makes its first Ascend C call the emulator knows no user line, so the harness's
signal handler (harness.h, write_crash_pc) records the program counter and the run-time address
of `__executable_start` instead. The binary's symbol table (`nm`) has the link-time address of
both, so `pc - exec_start + link_start` is the instruction's symbol-table address, and the
function whose range holds it is where the kernel was. Functions the compiler inlined are
reported as their caller, which is where their code then is.

A program's host code (program mode) is built with line tables (-g1), so a crash in it is
named by its line: `line_at` asks `addr2line` for the instruction's file and line.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_TEXT_TYPES = frozenset("TtWw")


@dataclass(frozen=True)
class CrashPc:
    """Where the program counter was (run-time addresses), from a crash.tsv row of code CRASH_PC."""

    pc: int
    exec_start: int
    # x86-64: the two words at the stack pointer (a return address when stopped in a prologue or
    # epilogue), then the return addresses up the frame-pointer chain, innermost first
    returns: tuple[int, ...] = ()

    @classmethod
    def parse(cls, message: str) -> CrashPc | None:
        try:
            pc, start, *returns = message.split()
            return cls(int(pc, 16), int(start, 16), tuple(int(r, 16) for r in returns))
        except ValueError:
            return None

    def callers(self) -> list[CrashPc]:
        """The call instructions up the stack, as program counters (a return address, less one)."""
        return [CrashPc(r - 1, self.exec_start) for r in self.returns]


@dataclass(frozen=True)
class _Symbol:
    start: int
    size: int
    name: str


@lru_cache(maxsize=16)
def _symbols(binary: str, mtime_ns: int) -> tuple[tuple[_Symbol, ...], int | None]:
    """The binary's function symbols (demangled), sorted, and the link-time address of
    __executable_start; `mtime_ns` keys the cache to one build of the file."""
    del mtime_ns
    nm = shutil.which("nm")
    if nm is None:
        return (), None
    try:
        out = subprocess.run([nm, "-S", "-C", "--defined-only", binary], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return (), None
    syms, link_start = [], None
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in _TEXT_TYPES:
            syms.append(_Symbol(int(parts[0], 16), int(parts[1], 16), parts[3]))
        elif len(parts) >= 3 and parts[-1] == "__executable_start":
            link_start = int(parts[0], 16)
    return tuple(sorted(syms, key=lambda s: s.start)), link_start


def _link_address(binary: Path, where: CrashPc) -> int | None:
    try:
        mtime = binary.stat().st_mtime_ns
    except OSError:
        return None
    _, link_start = _symbols(str(binary), mtime)
    return None if link_start is None else where.pc - where.exec_start + link_start


def line_at(binary: Path, where: CrashPc) -> tuple[str, int] | None:
    """The source file and line of the instruction (from the binary's line tables), or None when
    the program counter is outside the binary (in a shared library) or it has no line tables."""
    addr = _link_address(binary, where)
    tool = shutil.which("addr2line")
    if addr is None or tool is None:
        return None
    try:
        out = subprocess.run([tool, "-e", str(binary), hex(addr)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    file, _, line = out.split(" (discriminator")[0].strip().rpartition(":")
    return (file, int(line)) if file and file != "??" and line.isdigit() and int(line) > 0 else None


def function_at(binary: Path, where: CrashPc) -> str | None:
    """The demangled name of the function holding the instruction, or None when the program
    counter is outside the binary (in a shared library) or the binary has no symbols."""
    try:
        mtime = binary.stat().st_mtime_ns
    except OSError:
        return None
    syms, link_start = _symbols(str(binary), mtime)
    if link_start is None:
        return None
    addr = where.pc - where.exec_start + link_start
    for s in syms:
        if s.start <= addr < s.start + max(s.size, 1):
            return s.name
    return None


def short_name(demangled: str) -> str:
    """`void Foo<int>::Bar(unsigned int) const` -> `Foo<int>::Bar`: the qualified name without
    return type and parameters (an anonymous namespace is left out: sources never spell it)."""
    demangled = demangled.replace("(anonymous namespace)::", "")
    depth, cut = 0, len(demangled)
    for i, ch in enumerate(demangled):
        if ch in "<(":
            if ch == "(" and depth == 0:
                cut = i
                break
            depth += 1
        elif ch in ">)":
            depth -= 1
    head = demangled[:cut].strip()
    depth, space = 0, -1
    for i, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            space = i
    return head[space + 1:]


def definition_line(source: str, qualified: str) -> int | None:
    """The line where `qualified` (`Klass::Name` or `Name`, as short_name gives) is defined in
    `source`, or None when the source does not define it (an emulator or library function)."""
    from sage_npu.npu_eval.analysis.model import KernelModel  # tree-sitter, only on this rare path

    parts = [p.split("<")[0] for p in qualified.split("::")]
    name, klass = parts[-1], (parts[-2] if len(parts) > 1 else None)
    for fn in KernelModel(source).functions:
        if fn.name == name and (klass is None or fn.klass == klass):
            return fn.node.start_point[0] + 1
    return None
