"""Task mode on a single-source program (a CANN sample's `.asc`): the kernel part is the task,
the host part (its `main()`, the wrappers that launch with `<<<>>>`, the ACL calls) is left out
of the build, never run (docs/task-format.md: host code in the kernel file is ignored).

The host functions are blanked with spaces of the same length (newlines kept), so every line
and column of what remains is still the user's; the result is written to a content-addressed
file that the harness includes under a `#line 1 "<the original path>"`, so diagnostics name
the user's file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.build import touch
from sage_npu.npu_eval.signature import parse
from sage_npu.npu_eval.ubuf import rewrite_ubuf

_HOST_HINT = re.compile(rb"\bmain\s*\(|<<<")
# A function is host code when it is main, launches a kernel, or drives the runtime.
_HOST_BODY = re.compile(rb"<<<|\bacl[A-Z]\w*\s*\(|\bICPU_RUN_KF\s*\(|\bACLRT_LAUNCH_KERNEL\s*\(")
_DEVICE = re.compile(rb"\b(__global__|__aicore__)\b")


@dataclass(frozen=True)
class HostPart:
    name: str
    line: int      # 1-based, where its definition starts


def has_host_code(src: bytes) -> bool:
    return bool(_HOST_HINT.search(src))


def split_host(src: bytes) -> tuple[bytes, list[HostPart]]:
    """The source with its host functions blanked, and what was left out."""
    if not has_host_code(src):
        return src, []
    tree = parse(src)
    out = bytearray(src)
    removed: list[HostPart] = []

    def visit(node) -> None:
        for child in node.named_children:
            if child.type == "function_definition":
                consider(child, child)
            elif child.type == "template_declaration":
                fn = next((c for c in child.named_children if c.type == "function_definition"), None)
                if fn is not None:
                    consider(fn, child)
            elif child.type in ("namespace_definition", "linkage_specification", "declaration_list"):
                visit(child.child_by_field_name("body") or child)

    def consider(fn, outer) -> None:
        text = src[outer.start_byte:outer.end_byte]
        head = src[outer.start_byte:(fn.child_by_field_name("body") or fn).start_byte]
        prev = outer.prev_sibling
        qualifiers = src[(prev.end_byte if prev is not None else 0):outer.start_byte] + head
        if _DEVICE.search(qualifiers):
            return
        name = _name(src, fn)
        if name == "main" or _HOST_BODY.search(text):
            for i in range(outer.start_byte, outer.end_byte):
                if out[i] not in b"\n":
                    out[i] = 0x20
            removed.append(HostPart(name, outer.start_point[0] + 1))

    visit(tree.root_node)
    return bytes(out), removed


def _name(src: bytes, fn) -> str:
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    name = decl.child_by_field_name("declarator") if decl is not None else None
    return src[name.start_byte:name.end_byte].decode(errors="replace") if name is not None else "?"


def kernel_part(kernel: Path, cache_dir: Path, name: str | None = None) -> Path:
    """The file the harness should include for `kernel`: itself, or its kernel part when it holds
    host code or `__ubuf__` arrays to place in the emulated UB (ubuf.py), under `#line` naming the
    original, at a path that depends only on the content. With `name` (a build's neutral name
    for the kernel, build.neutral_paths) the part is always made and its `#line` gives that name,
    so a copy of the kernel in another folder gives the same part."""
    src = kernel.read_bytes()
    stripped, removed = split_host(src)
    placed = rewrite_ubuf(stripped)
    if name is None and not removed and placed == stripped:
        return kernel
    stripped = placed
    shown = name or str(kernel.resolve())
    text = f"#line 1 \"{_escape(shown)}\"\n".encode() + stripped
    digest = hashlib.sha256(text).hexdigest()[:20]
    suffix = kernel.suffix if kernel.suffix != ".asc" else ".cpp"
    out = cache_dir / "kernel-parts" / f"{Path(shown).stem}-{digest}{suffix}"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(text)
        tmp.replace(out)
    else:
        touch(out)  # recency for the build cache's size bound
    return out


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
