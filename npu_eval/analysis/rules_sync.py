"""Pipe synchronisation around TBuf tensors.

- missing-sync (warning): a TBuf tensor both moved by DataCopy and used by vector ops in one
  function with no flag or barrier there (TBuf has no queue to order the pipes). Fix: a
  SetFlag/WaitFlag pair before the later of the two.
"""

from __future__ import annotations

import tree_sitter as ts

from sage_npu.npu_eval.analysis.findings import Edit, Finding, Fix, finding, indent
from sage_npu.npu_eval.analysis.model import COPY_APIS, SYNC_APIS, VECTOR_APIS, Call, Function, KernelModel
from sage_npu.npu_eval.chips import ChipProfile


def tbuf_missing_sync(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    out = []
    flagged = {(f.klass, f.name) for f in m.functions if any(c.name in SYNC_APIS for c in m.calls_in(f))}
    for fn in m.functions:
        if (fn.klass, fn.name) in flagged:
            continue
        # A helper of the same class that sets flags (a ReadScalar with V_S flags) may order the pipes.
        if any(c.receiver in (None, "this") and (fn.klass, c.name) in flagged for c in m.calls_in(fn)):
            continue
        copies: dict[str, Call] = {}
        vectors: dict[str, Call] = {}
        for c in m.calls_in(fn):
            if c.receiver is not None or c.name not in COPY_APIS | VECTOR_APIS:
                continue
            operands = c.args[:2] if c.name in COPY_APIS else c.args
            for a in operands:
                root = _tbuf_root(m, a, fn)
                if root is None:
                    continue
                target = copies if c.name in COPY_APIS else vectors
                target.setdefault(root, c)
        both = [r for r in copies if r in vectors]
        if not both:
            continue
        root = min(both, key=lambda r: copies[r].node.start_byte)
        copy, vector = copies[root], vectors[root]
        into_ub = _tbuf_root(m, copy.args[0], fn) == root
        if into_ub and copy.node.start_byte < vector.node.start_byte:
            event, order = "MTE2_V", f"{vector.name} may read it before the copy lands"
        elif not into_ub and vector.node.start_byte < copy.node.start_byte:
            event, order = "V_MTE3", f"the copy may read it before {vector.name} has written it"
        else:
            event, order = None, "the copy and vector pipes may reorder around it"
        fix = _flag_fix(m, copy, vector, event, fn) if event else []
        hint = f"SetFlag<HardEvent::{event}>/WaitFlag<HardEvent::{event}>" if event else "SetFlag/WaitFlag"
        out.append(finding(
            m, copy.node, "warning", "missing-sync",
            f"{root} is a TBuf used by {copy.name} (line {copy.node.start_point[0] + 1}) and {vector.name} "
            f"(line {vector.node.start_point[0] + 1}) in {fn.name} with no SetFlag/WaitFlag or PipeBarrier there: "
            f"a TBuf has no queue to order the pipes, so {order}. Put {hint} between them, or move the data "
            "through a TQue.", fix))
    return out


def _tbuf_root(m: KernelModel, n: ts.Node, fn: Function, depth: int = 0) -> str | None:
    """The TBuf a tensor expression comes from: `buf.Get<T>()`, a variable initialised from it,
    or a view of such a variable."""
    if depth > 4:
        return None
    if n.type == "call_expression":
        func = n.child_by_field_name("function")
        if func is not None and func.type == "field_expression":
            recv = m.ref_name(func.child_by_field_name("argument"))
            method = func.child_by_field_name("field")
            if method is not None and m.text(method).split("<")[0] in ("Get", "GetWithOffset") and \
                    m.object_kind(recv, fn) == "tbuf":
                return recv
        return None
    name = m.ref_name(n)
    d = m.decl_of(name, fn, n.start_byte) if name else None
    if d is None or d.function is not fn or d.value is None:
        return None
    return _tbuf_root(m, d.value, fn, depth + 1)


def _flag_fix(m: KernelModel, copy: Call, vector: Call, event: str, fn: Function) -> list[Fix]:
    """A SetFlag/WaitFlag pair right before the later of the two calls, when both are statements
    of the same block."""
    later = vector if event == "MTE2_V" else copy
    earlier = copy if later is vector else vector
    stmt, other = later.node.parent, earlier.node.parent
    if stmt is None or other is None or stmt.type != "expression_statement" or stmt.parent is None \
            or other.parent is None or stmt.parent.id != other.parent.id:
        return []
    ns = "AscendC::" if later.qualified or earlier.qualified else ""
    pad = indent(m, stmt)
    line = stmt.start_point[0] + 1
    text = (f"{pad}{ns}SetFlag<{ns}HardEvent::{event}>(EVENT_ID0);\n"
            f"{pad}{ns}WaitFlag<{ns}HardEvent::{event}>(EVENT_ID0);\n")
    return [Fix(f"Insert SetFlag/WaitFlag<HardEvent::{event}> before {later.name}", [Edit(line, 1, line, 1, text)],
                preferred=True)]
