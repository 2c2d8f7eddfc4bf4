"""`__ubuf__` arrays of the SIMD C API, placed in the emulated Unified Buffer.

A C-API kernel declares its UB storage as `__ubuf__ float x[256];`. On the device the compiler
gives each such array a fixed UB address; on the CPU the declaration would be a plain stack
array that the emulator's UB checks (bounds, uninitialized reads, pipe races) cannot see. So the
build rewrites each such declaration, on its own line, into
`auto& x = ::sage::sim::ub_array<float[256]>("x");`, which places the array in the block's UB
(npu_eval/sim/include/sage_sim/ubuf.h): `x` is still an array of that type (sizeof, indexing and
decay to a pointer work as written), and faults name the array and its line.

Left alone: arrays at namespace scope and `static`/`extern` ones (no block runs when they are
initialised), and pointers (`__ubuf__ float* p`), which stay plain pointers into the UB.
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


def _depth(src: bytes, pos: int, memo: list[int]) -> int:
    """Braces open at `pos` (memo: [scanned up to, depth there]); comments and strings are not
    told apart, which only matters for an unbalanced brace in one before a declaration."""
    scanned, depth = memo
    chunk = src[scanned:pos]
    depth += chunk.count(b"{") - chunk.count(b"}")
    memo[0], memo[1] = pos, depth
    return depth


def ubuf_edits(src: bytes) -> list[UbufEdit]:
    """The `__ubuf__` array declarations inside functions, with their replacements."""
    if b"__ubuf__" not in src:
        return []
    edits: list[UbufEdit] = []
    memo = [0, 0]
    for m in _DECL.finditer(src):
        line_start = src.rfind(b"\n", 0, m.start()) + 1
        if _STORAGE.search(src[line_start:m.start()]) or _STORAGE.search(m.group("type")):
            continue
        if _depth(src, m.start(), memo) <= 0:
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
