"""Alignment of copies and UB operands.

- unaligned-copy (error): a count-form DataCopy whose constant count is not a whole number of
  32-byte blocks (the device drops the tail), or a UB operand view `t[K]` with a constant K
  that starts off a 32-byte boundary. Fixes: round the count up (reads only), or DataCopyPad
  (910B).
"""

from __future__ import annotations

from sage_npu.npu_eval.analysis.findings import BLOCK, Finding, Fix, finding, replace, round_up
from sage_npu.npu_eval.analysis.model import COPY_APIS, VECTOR_APIS, Call, KernelModel
from sage_npu.npu_eval.chips import ChipProfile


def _copy_direction(m: KernelModel, c: Call) -> str | None:
    dst, src = (m.expr_kind(a, c.function) for a in c.args[:2])
    if dst == "local" and src == "global":
        return "GM->UB"
    if dst == "global" and src == "local":
        return "UB->GM"
    if dst == "local" and src == "local":
        return "UB->UB"
    return None


def unaligned_copy(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    out = []
    for c in m.calls:
        if c.name != "DataCopy" or len(c.args) != 3 or c.receiver is not None:
            continue
        count = m.const_value(c.args[2])
        if not count or count <= 0:
            continue
        elem = m.element_type(c.args[0], c.function) or m.element_type(c.args[1], c.function)
        size = m.element_bytes(elem)
        if elem is None or size is None or count * size % BLOCK == 0:
            continue
        per = BLOCK // size
        kept = count * size // BLOCK * BLOCK // size
        rounded = round_up(count, per)
        direction = _copy_direction(m, c)
        fixes = []
        if direction in ("GM->UB", "UB->UB"):
            fixes.append(Fix(f"Round the DataCopy count up to {rounded} (copies {rounded - count} extra "
                             f"{elem} elements into UB)", [replace(m, c.args[2], str(rounded))],
                             preferred=chip.family == 310))
        if direction in ("GM->UB", "UB->GM") and chip.family != 310:
            fixes.append(_pad_fix(m, c, direction, elem, count * size))
        where = f" {direction}" if direction else ""
        out.append(finding(
            m, c.node, "error", "unaligned-copy",
            f"DataCopy{where} of {count} {elem} elements = {count * size} bytes, not a multiple of 32: the count "
            f"form moves whole 32-byte blocks, so the device copies only {kept} elements and drops the last "
            f"{count - kept}. Make the count a multiple of {per} (e.g. {rounded}), or use DataCopyPad with a "
            "byte length.", fixes))
    return out


def _pad_fix(m: KernelModel, c: Call, direction: str, elem: str, nbytes: int) -> Fix:
    ns = "AscendC::" if c.qualified else ""
    dst, src = (m.text(a) for a in c.args[:2])
    params = f"{ns}DataCopyExtParams{{1, {nbytes}, 0, 0, 0}}"
    pad = f", {ns}DataCopyPadExtParams<{elem}>{{false, 0, 0, 0}}" if direction == "GM->UB" else ""
    return Fix(f"Use DataCopyPad with a {nbytes}-byte length (exactly the data, no tail dropped)",
               [replace(m, c.node, f"{ns}DataCopyPad({dst}, {src}, {params}{pad})")], preferred=True)


def unaligned_view(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    """`t[K]` passed to a copy or vector op, with K constant and K * sizeof(T) off a 32-byte
    boundary: UB operands must start 32-byte aligned (GM ones need only element alignment)."""
    out = []
    for c in m.calls:
        if c.receiver is not None or c.name not in COPY_APIS | VECTOR_APIS:
            continue
        for a in c.args:
            if a.type != "subscript_expression":
                continue
            base = a.child_by_field_name("argument")
            indices = a.child_by_field_name("indices")
            if base is None or indices is None or indices.named_child_count != 1:
                continue
            if m.expr_kind(base, c.function) != "local":
                continue
            k = m.const_value(indices.named_children[0])
            size = m.element_bytes(m.element_type(base, c.function))
            if k is None or size is None or k * size % BLOCK == 0:
                continue
            out.append(finding(
                m, a, "error", "unaligned-copy",
                f"{c.name} on `{m.text(a)}`, a UB view that starts {k * size % BLOCK} bytes past a 32-byte "
                f"boundary: vector and DataCopy operands in UB must start 32-byte aligned. Offset views by "
                f"multiples of {BLOCK // size} elements, or load the shifted data into its own buffer."))
    return out
