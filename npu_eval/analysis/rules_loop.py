"""Scalar work in loops.

- scalar-in-loop (warning): GetValue/SetValue/`t(i)` indexed by the loop variable in a loop that
  does no vector work: one element per iteration on the scalar pipe.
"""

from __future__ import annotations

import tree_sitter as ts

from sage_npu.npu_eval.analysis.findings import Finding, finding
from sage_npu.npu_eval.analysis.model import COPY_APIS, VECTOR_APIS, Call, Function, KernelModel
from sage_npu.npu_eval.chips import ChipProfile


def _scalar_access(m: KernelModel, c: Call) -> str | None:
    """"local"/"global" when a call reads or writes one tensor element: `t.GetValue(i)`,
    `t.SetValue(i, v)` or `t(i)`."""
    if c.name in ("GetValue", "SetValue") and c.receiver is not None:
        kind = m.object_kind(c.receiver, c.function, c.node.start_byte)
    elif c.receiver is None and len(c.args) == 1:
        kind = m.object_kind(c.name, c.function, c.node.start_byte)
    else:
        return None
    return kind if kind in ("local", "global") else None


def _does_vector_work(m: KernelModel, loop: ts.Node, fn: Function | None) -> bool:
    """Whether a loop body issues copies or vector ops, itself or through a method it calls:
    then one scalar per iteration (a row's reduced value) is not what makes it slow."""
    methods = {f.name for f in m.functions if fn is not None and f.klass == fn.klass}
    for c in m.calls_in(fn) if fn is not None else m.calls:
        if loop.start_byte <= c.node.start_byte and c.node.end_byte <= loop.end_byte:
            if c.name in COPY_APIS | VECTOR_APIS or (c.receiver in (None, "this") and c.name in methods):
                return True
    return False


def scalar_in_loop(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    out = []
    seen: set[tuple[int, int]] = set()
    for c in m.calls:
        if not c.loops or not c.args:
            continue
        kind = _scalar_access(m, c)
        if kind is None:
            continue
        index = m.identifiers(c.args[0])
        loop = next((lp for lp in reversed(c.loops) if index & m.varying(lp)), None)
        if loop is None or (loop.id, c.node.start_point[0]) in seen or _does_vector_work(m, loop, c.function):
            continue
        seen.add((loop.id, c.node.start_point[0]))
        where = "global memory (an uncached scalar GM access each time)" if kind == "global" else "UB"
        out.append(finding(
            m, c.node, "warning", "scalar-in-loop",
            f"`{m.text(c.node)}` in the loop at line {loop.start_point[0] + 1} touches one element of {where} per "
            "iteration on the scalar (S) pipe, which stalls the vector pipe around it. Express the loop as "
            "vector ops over the whole tile (Adds/Muls/Select/Duplicate, or a reduction), or move whole blocks "
            "with DataCopy."))
    return out
