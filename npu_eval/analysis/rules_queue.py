"""Queue discipline.

- missing-free (warning): AllocTensor on a queue that is never FreeTensor'd in its class or
  function (the next AllocTensor deadlocks once the buffers run out). Fix: insert the FreeTensor
  where the tensor's life plainly ends.
"""

from __future__ import annotations

import tree_sitter as ts

from sage_npu.npu_eval.analysis.findings import Edit, Finding, Fix, ScopeKey, finding, indent, scope_key
from sage_npu.npu_eval.analysis.model import Call, KernelModel, type_kind
from sage_npu.npu_eval.chips import ChipProfile


def missing_free(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    by_scope: dict[tuple[ScopeKey | None, str], list[Call]] = {}
    for c in m.calls:
        if c.function is not None and c.receiver is not None:
            by_scope.setdefault((scope_key(c.function), c.receiver), []).append(c)
    out = []
    for (key, name), calls in by_scope.items():
        scope = key[0] if key is not None else "function"
        allocs = [c for c in calls if c.name == "AllocTensor"]
        if not allocs or any(c.name == "FreeTensor" for c in calls):
            continue
        d = m.decl_of(name, allocs[0].function)
        if d is None or type_kind(d.type) != "queue":
            continue  # TBuf's AllocTensor needs no free; an unknown object may be freed elsewhere
        if scope == "function" and d.function is not allocs[0].function:
            continue  # a queue passed in may be freed by the caller
        out.append(finding(
            m, allocs[0].node, "warning", "missing-free",
            f"{name}.AllocTensor has no matching {name}.FreeTensor in this "
            f"{scope}: every AllocTensor holds one of the queue's buffers "
            "until FreeTensor returns it, so once they are all held the next AllocTensor waits forever. Free the "
            "tensor after its last use (after the DeQue that consumes it).",
            _free_fix(m, name, calls)))
    return out


def _free_fix(m: KernelModel, queue: str, calls: list[Call]) -> list[Fix]:
    """Insert `queue.FreeTensor(v);` at the end of the function where the tensor's life ends: the
    only DeQue of the queue (or, if it is never queued, its only AllocTensor), when that tensor
    is a variable of the function body, the call is not in a loop or branch, the tensor is not
    queued on again, and the function has no early return."""
    deques = [c for c in calls if c.name == "DeQue"]
    enques = [c for c in calls if c.name == "EnQue"]
    if deques:
        if len(deques) != 1:
            return []
        last = deques[0]
    else:
        allocs = [c for c in calls if c.name == "AllocTensor"]
        if len(allocs) != 1 or enques:
            return []
        last = allocs[0]
    fn = last.function
    if fn is None or last.loops:
        return []
    held = _held_in(m, last)
    if held is None:
        return []
    var, statement = held
    if statement.parent is None or statement.parent.id != fn.body.id:
        return []
    for c in m.calls_in(fn):
        if c.name == "EnQue" and c.args and m.ref_name(c.args[0]) == var:
            return []
    if _has_return(fn.body):
        return []
    statements = [s for s in fn.body.named_children if s.type != "comment"]
    pad = indent(m, statements[-1] if statements else statement)
    close = fn.body.children[-1]
    line, col, _, _ = m.span(close)
    before = m.lines[close.start_point[0]][:close.start_point[1]]
    if before.strip():  # `}` shares its line with code: put the free on a line of its own before it
        text = f"\n{pad}{queue}.FreeTensor({var});\n{before[:len(before) - len(before.lstrip())].decode()}"
    else:
        text = f"{pad}{queue}.FreeTensor({var});\n"
        col = 1
    return [Fix(f"Insert {queue}.FreeTensor({var}) at the end of {fn.name}", [Edit(line, col, line, col, text)],
                preferred=True)]


def _held_in(m: KernelModel, c: Call) -> tuple[str, ts.Node] | None:
    """The variable a call's result is stored in (`auto v = c;` or `v = c;`) and that statement."""
    holder = c.node.parent
    if holder is None or holder.type not in ("init_declarator", "assignment_expression"):
        return None
    ident = holder.child_by_field_name("declarator" if holder.type == "init_declarator" else "left")
    statement = holder.parent
    if ident is None or ident.type != "identifier" or statement is None:
        return None
    return m.text(ident), statement


def _has_return(body: ts.Node) -> bool:
    stack = list(body.children)
    while stack:
        n = stack.pop()
        if n.type == "return_statement":
            return True
        if n.type != "lambda_expression":
            stack.extend(n.children)
    return False
