"""Queue discipline.

- missing-free (warning): AllocTensor on a queue that is never FreeTensor'd in its class or
  function (the next AllocTensor deadlocks once the buffers run out). Fix: insert the FreeTensor
  where the tensor's life plainly ends.
- queue-deadlock (warning, from the source): DeQue on a queue whose class or function allocates
  on it but never EnQue's (the DeQue waits forever). The code is the emulator's for the same
  hang, so a run that confirms it shows one diagnostic. Fix: insert the EnQue at the end of the
  function that fills the tensor.
"""

from __future__ import annotations

import tree_sitter as ts

from sage_npu.npu_eval.analysis.findings import Edit, Finding, Fix, ScopeKey, finding, indent, scope_key
from sage_npu.npu_eval.analysis.model import Call, Function, KernelModel, type_kind
from sage_npu.npu_eval.chips import ChipProfile


def _queue_calls(m: KernelModel) -> dict[tuple[ScopeKey | None, str], list[Call]]:
    """The calls on each object, by (class or function, object name)."""
    by_scope: dict[tuple[ScopeKey | None, str], list[Call]] = {}
    for c in m.calls:
        if c.function is not None and c.receiver is not None:
            by_scope.setdefault((scope_key(c.function), c.receiver), []).append(c)
    return by_scope


def missing_enque(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    out = []
    for (key, name), calls in _queue_calls(m).items():
        deques = [c for c in calls if c.name == "DeQue"]
        allocs = [c for c in calls if c.name == "AllocTensor"]
        if not deques or not allocs or any(c.name == "EnQue" for c in calls):
            continue
        d = m.decl_of(name, deques[0].function)
        if d is None or type_kind(d.type) != "queue":
            continue
        if (key[0] if key is not None else "function") == "function" and d.function is not deques[0].function:
            continue  # a queue passed in may be fed by the caller
        out.append(finding(
            m, deques[0].node, "warning", "queue-deadlock",
            f"{name}.DeQue waits for a tensor queued with {name}.EnQue, and nothing in this "
            f"{'class' if key is not None and key[0] == 'class' else 'function'} EnQue's on {name}: the DeQue "
            "waits forever (a deadlock on the device). EnQue the tensor once the copy or computation that "
            "fills it is issued.", _enque_fix(m, name, allocs)))
    return out


def _enque_fix(m: KernelModel, queue: str, allocs: list[Call]) -> list[Fix]:
    """Insert `queue.EnQue(v);` at the end of the function of the queue's only AllocTensor, when
    the tensor is a variable of that function's body, the call is in no loop or branch, and the
    function neither frees the tensor nor returns early."""
    if len(allocs) != 1 or allocs[0].function is None or allocs[0].loops:
        return []
    held = _held_in(m, allocs[0])
    fn = allocs[0].function
    if held is None or held[1].parent is None or held[1].parent.id != fn.body.id:
        return []
    var = held[0]
    if any(c.name == "FreeTensor" and c.args and m.ref_name(c.args[0]) == var for c in m.calls_in(fn)):
        return []
    edit = _append_to(m, fn, held[1], f"{queue}.EnQue({var});")
    return [Fix(f"Insert {queue}.EnQue({var}) at the end of {fn.name}", [edit], preferred=True)] if edit else []


def missing_free(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    out = []
    for (key, name), calls in _queue_calls(m).items():
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
    edit = _append_to(m, fn, statement, f"{queue}.FreeTensor({var});")
    return [Fix(f"Insert {queue}.FreeTensor({var}) at the end of {fn.name}", [edit], preferred=True)] if edit else []


def _append_to(m: KernelModel, fn: Function, statement: ts.Node, code: str) -> Edit | None:
    """An edit adding the statement `code` as the last of `fn`'s body (indented as its statements),
    or None when the function returns early (the end would not always be reached)."""
    if _has_return(fn.body):
        return None
    statements = [s for s in fn.body.named_children if s.type != "comment"]
    pad = indent(m, statements[-1] if statements else statement)
    close = fn.body.children[-1]
    line, col, _, _ = m.span(close)
    before = m.lines[close.start_point[0]][:close.start_point[1]]
    if before.strip():  # `}` shares its line with code: put the statement on a line of its own before it
        return Edit(line, col, line, col, f"\n{pad}{code}\n{before[:len(before) - len(before.lstrip())].decode()}")
    return Edit(line, 1, line, 1, f"{pad}{code}\n")


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
