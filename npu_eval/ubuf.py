"""`__ubuf__` arrays of the SIMD C API, placed in the emulated Unified Buffer.

A C-API kernel declares its UB storage as `__ubuf__ float x[256];`. On the device the compiler
gives each such array a fixed UB address; on the CPU the declaration would be a plain stack
array that the emulator's UB checks (bounds, uninitialized reads, pipe races) cannot see. So the
build rewrites each such declaration, on its own line, into
`auto& x = ::sage::sim::ub_array<float[256]>("x");`, which places the array in the block's UB
(npu_eval/sim/include/sage_sim/ubuf.h): `x` is still an array of that type (sizeof, indexing and
decay to a pointer work as written), and faults name the array and its line.

Left alone: arrays outside function bodies (namespace scope, class members) and `static`/`extern`
ones (no block runs when they are initialised), and pointers (`__ubuf__ float* p`), which stay
plain pointers into the UB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `__ubuf__ <type> <name>[<dim>]...;` on one line, with no initializer.
_DECL = re.compile(
    rb"__ubuf__[ \t]+(?P<type>(?:[A-Za-z_][\w:]*(?:[ \t]*<[^;<>\n]*>)?[ \t]+)*?[A-Za-z_][\w:]*(?:[ \t]*<[^;<>\n]*>)?)"
    rb"[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]*(?P<dims>(?:\[[^\]\[;\n]+\][ \t]*)+);")
_STORAGE = re.compile(rb"\b(static|extern|thread_local)\b")


@dataclass(frozen=True)
class UbufEdit:
    """One declaration to replace: `length` bytes at `start` of the source become `new`."""

    start: int
    length: int
    new: bytes


_SCOPE_HEAD = re.compile(rb"\b(struct|class|union|namespace|enum)\b")


class _Scopes:
    """The braces open at a position, scanned once front to back (comments and strings are not told
    apart, which only matters for an unbalanced brace in one before a declaration)."""

    def __init__(self, src: bytes) -> None:
        self.src, self.pos, self.open = src, 0, []

    def innermost(self, pos: int) -> int | None:
        """Where the innermost brace open at `pos` is, or None at file scope."""
        for i in range(self.pos, pos):
            c = self.src[i]
            if c == 0x7B:  # {
                self.open.append(i)
            elif c == 0x7D and self.open:  # }
                self.open.pop()
        self.pos = pos
        return self.open[-1] if self.open else None

    def in_function(self, pos: int) -> bool:
        """Inside a function body: the innermost brace opens neither a class nor a namespace."""
        brace = self.innermost(pos)
        if brace is None:
            return False
        head_start = max(self.src.rfind(c, 0, brace) for c in (b";", b"}", b"{")) + 1
        return not _SCOPE_HEAD.search(self.src[head_start:brace])


def ubuf_edits(src: bytes) -> list[UbufEdit]:
    """The `__ubuf__` array declarations inside function bodies, with their replacements."""
    if b"__ubuf__" not in src:
        return []
    edits: list[UbufEdit] = []
    scopes = _Scopes(src)
    for m in _DECL.finditer(src):
        line_start = src.rfind(b"\n", 0, m.start()) + 1
        if _STORAGE.search(src[line_start:m.start()]) or _STORAGE.search(m.group("type")):
            continue
        if not scopes.in_function(m.start()):
            continue
        name = m.group("name")
        dims = re.sub(rb"\][ \t]+\[", b"][", m.group("dims").strip())
        new = (b"auto& " + name + b" = ::sage::sim::ub_array<" + m.group("type") + b" " + dims + b">(\""
               + name + b"\");")
        edits.append(UbufEdit(m.start(), m.end() - m.start(), new))
    return edits


def rewrite_ubuf(src: bytes) -> bytes:
    """The source with its `__ubuf__` arrays placed in the UB; every line stays in its place."""
    out = bytearray()
    pos = 0
    for e in ubuf_edits(src):
        out += src[pos:e.start] + e.new
        pos = e.start + e.length
    return bytes(out + src[pos:])
