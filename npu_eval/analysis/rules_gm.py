"""Raw global-memory access.

- raw-gm-access (warning): a kernel that reads or writes global memory through a raw `__gm__`
  pointer (`p[i]`, `*p`, `p->f`) bypasses GlobalTensor/DataCopy: on the device every such
  access is a slow scalar load or store, and it escapes the emulator's bounds checks.
"""

from __future__ import annotations

import tree_sitter as ts

from sage_npu.npu_eval.analysis.findings import Finding, finding
from sage_npu.npu_eval.analysis.model import KernelModel
from sage_npu.npu_eval.chips import ChipProfile


def _gm_pointer_names(m: KernelModel) -> set[str]:
    """Names declared as GM pointers: `__gm__ T* p` (parameters and locals) and GM_ADDR."""
    names: set[str] = set()
    for name, decls in m.decls.items():
        for d in decls:
            if d.kind == "define" or d.node.type not in ("parameter_declaration", "declaration",
                                                         "field_declaration"):
                continue
            head = m.text(d.node).split("=", 1)[0]
            # The parse saw `__gm__` as blanks, so a leading qualifier sits just before the node.
            qualified = m.src[:d.node.start_byte].rstrip().endswith(b"__gm__")
            if qualified or "__gm__" in head or "GM_ADDR" in head:
                names.add(name)
                break
    return names


def _is_gm_pointer(m: KernelModel, n: ts.Node, names: set[str]) -> bool:
    while n.type == "parenthesized_expression" and n.named_child_count == 1:
        n = n.named_children[0]
    if n.type == "identifier":
        return m.text(n) in names
    if n.type == "cast_expression":
        return "__gm__" in m.text(n)
    return False


def _access_target(m: KernelModel, n: ts.Node) -> ts.Node | None:
    """The pointer an access goes through: `p` of `p[i]`, `*p` or `p->f`."""
    if n.type == "subscript_expression":
        return n.child_by_field_name("argument")
    op = n.child_by_field_name("operator")
    if op is None:
        return None
    if (n.type == "pointer_expression" and m.text(op) == "*") or (n.type == "field_expression" and m.text(op) == "->"):
        return n.child_by_field_name("argument")
    return None


def raw_gm_access(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    names = _gm_pointer_names(m)
    if not names:
        return []
    findings: list[Finding] = []
    seen_lines: set[int] = set()
    for n in m.accesses:
        target = _access_target(m, n)
        if target is None or not _is_gm_pointer(m, target, names):
            continue
        line = n.start_point[0] + 1
        if line in seen_lines:
            continue
        seen_lines.add(line)
        expr = " ".join(m.text(n).split())
        findings.append(finding(
            m, n, "warning", "raw-gm-access",
            f"`{expr}` accesses global memory through a raw pointer: on the device each access is a "
            "slow scalar load/store outside the copy engines. Use a GlobalTensor with DataCopy (or "
            "GlobalTensor::GetValue/SetValue for a few scalars)."))
    return findings
