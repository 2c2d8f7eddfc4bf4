"""Checks read from the source alone (tree-sitter), before anything runs.

raw-gm-access: a kernel that reads or writes global memory through a raw `__gm__` pointer
(`p[i]`, `*p`, `p->f`) bypasses GlobalTensor/DataCopy: on the device every such access is a
slow scalar load or store, and it escapes the emulator's bounds checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from sage_npu.npu_eval.signature import parse


@dataclass
class Finding:
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    severity: str
    code: str
    message: str


def _text(src: bytes, n: ts.Node) -> str:
    return src[n.start_byte:n.end_byte].decode("utf-8", errors="replace")


def _gm_pointer_names(src: bytes, root: ts.Node) -> set[str]:
    """Names declared as GM pointers: `__gm__ T* p` (parameters and locals) and GM_ADDR."""
    names: set[str] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        if n.type not in ("parameter_declaration", "declaration", "field_declaration"):
            continue
        head = _text(src, n).split("=", 1)[0]
        # The parse saw `__gm__` as blanks, so a leading qualifier sits just before the node.
        qualified = src[:n.start_byte].rstrip().endswith(b"__gm__")
        if not qualified and "__gm__" not in head and "GM_ADDR" not in head:
            continue
        for d in _declarators(n):
            ident = d
            while ident is not None and ident.type not in ("identifier", "field_identifier"):
                ident = ident.child_by_field_name("declarator")
            if ident is not None:
                names.add(_text(src, ident))
    return names


def _declarators(n: ts.Node) -> list[ts.Node]:
    out = []
    for c in n.children_by_field_name("declarator"):
        out.append(c.child_by_field_name("declarator") if c.type == "init_declarator" else c)
    return [d for d in out if d is not None]


def _is_gm_pointer(src: bytes, n: ts.Node, names: set[str]) -> bool:
    while n.type == "parenthesized_expression" and n.named_child_count == 1:
        n = n.named_children[0]
    if n.type == "identifier":
        return _text(src, n) in names
    if n.type == "cast_expression":
        return "__gm__" in _text(src, n)
    return False


def char_column(lines: list[bytes], row: int, byte_col: int) -> int:
    """1-based character column of a 0-based (row, byte column) point: reports count characters."""
    if row >= len(lines):
        return byte_col + 1
    return len(lines[row][:byte_col].decode("utf-8", errors="ignore")) + 1


def raw_gm_accesses(src: bytes) -> list[Finding]:
    tree = parse(src)
    lines = src.split(b"\n")
    names = _gm_pointer_names(src, tree.root_node)
    findings: list[Finding] = []
    seen_lines: set[int] = set()
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        stack.extend(reversed(n.children))
        target = None
        if n.type == "subscript_expression":
            target = n.child_by_field_name("argument")
        elif n.type == "pointer_expression" and n.child_by_field_name("operator") is not None and \
                _text(src, n.child_by_field_name("operator")) == "*":
            target = n.child_by_field_name("argument")
        elif n.type == "field_expression" and _text(src, n.child_by_field_name("operator") or n) == "->":
            target = n.child_by_field_name("argument")
        if target is None or not _is_gm_pointer(src, target, names):
            continue
        line = n.start_point[0] + 1
        if line in seen_lines:
            continue
        seen_lines.add(line)
        expr = " ".join(_text(src, n).split())
        findings.append(Finding(
            line=line, column=char_column(lines, n.start_point[0], n.start_point[1]), end_line=n.end_point[0] + 1,
            end_column=char_column(lines, n.end_point[0], n.end_point[1]),
            severity="warning", code="raw-gm-access",
            message=f"`{expr}` accesses global memory through a raw pointer: on the device each access is a "
                    "slow scalar load/store outside the copy engines. Use a GlobalTensor with DataCopy (or "
                    "GlobalTensor::GetValue/SetValue for a few scalars)."))
    return findings
