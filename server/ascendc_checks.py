"""The server's static findings on an Ascend C source, from one tree-sitter parse (no compile,
no run), each with quick fixes where a fix is safe:

- ub-overflow: the UB buffers a class or function sets up with compile-time constant sizes
  add up to more than the chip's Unified Buffer (error), or reach into its reserved top
  (warning), as the emulator judges InitBuffer at run time.
- unaligned-copy (error): a count-form DataCopy whose constant count is not a whole number of
  32-byte blocks (the device drops the tail), or a UB operand view `t[K]` with a constant K
  that starts off a 32-byte boundary. Fixes: round the count up (reads only), or DataCopyPad
  (910B).
- single-buffer (info): queues with one buffer feeding a tiled loop, so copy and compute never
  overlap. Fix: two buffers, unless the known sizes would then overflow UB.
- scalar-in-loop (warning): GetValue/SetValue/`t(i)` indexed by the loop variable in a loop that
  does no vector work: one element per iteration on the scalar pipe.
- missing-free (warning): AllocTensor on a queue that is never FreeTensor'd in its class or
  function (the next AllocTensor deadlocks once the buffers run out). Fix: insert the FreeTensor
  where the tensor's life plainly ends.
- missing-sync (warning): a TBuf tensor both moved by DataCopy and used by vector ops in one
  function with no flag or barrier there (TBuf has no queue to order the pipes). Fix: a
  SetFlag/WaitFlag pair before the later of the two.
- raw-gm-access (warning): from sage_npu.npu_eval.static_checks.

Every rule stays silent when the source does not let it be sure (sizes from tiling, unknown
types): a false alarm costs more trust than a missed hint.
"""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass, field

import tree_sitter as ts

from sage_npu.npu_eval import static_checks
from sage_npu.npu_eval.static_checks import raw_gm_accesses
from sage_npu.server.kernel_model import (
    COPY_APIS,
    SYNC_APIS,
    UB_POSITIONS,
    VECTOR_APIS,
    Call,
    Function,
    KernelModel,
    queue_position,
    template_args,
    type_kind,
)

BLOCK = 32
log = logging.getLogger("sage_npu.server.static")


@dataclass
class Edit:
    """Replace the text between two 1-based (line, character column) points."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass
class Fix:
    title: str
    edits: list[Edit]
    preferred: bool = False


@dataclass
class Finding(static_checks.Finding):
    fixes: list[Fix] = field(default_factory=list)


@dataclass
class Chip:
    """The part of a chip profile the checks need."""

    name: str
    ub_bytes: int    # past this InitBuffer fails: an error
    family: int      # 910 or 310: DataCopyPad's GM paths exist only on 910B
    ub_reserved_bytes: int = 0  # the risky top of ub_bytes: reaching into it is a warning


def check_source(source: str | bytes, chip: Chip) -> list[Finding]:
    """All static findings on one source, in line order."""
    # The parse makes tens of thousands of short-lived node objects and no reference cycles;
    # a collector pass in the middle would traverse them all (40 ms on a 500-line kernel), so
    # it waits until they are freed.
    collecting = gc.isenabled()
    gc.disable()
    try:
        m = KernelModel(source)
        findings: list[Finding] = []
        for rule in RULES:
            try:
                findings.extend(rule(m, chip))
            except Exception:  # noqa: BLE001 - a half-typed kernel may trip one rule; the others still speak
                log.exception("static rule %s failed", rule.__name__)
        for f in raw_gm_accesses(m.src):
            findings.append(Finding(f.line, f.column, f.end_line, f.end_column, f.severity, f.code, f.message))
        findings.sort(key=lambda f: (f.line, f.column, f.code))
        return findings
    finally:
        if collecting:
            gc.enable()


def _finding(m: KernelModel, node: ts.Node, severity: str, code: str, message: str,
             fixes: list[Fix] | None = None) -> Finding:
    return Finding(*m.span(node), severity, code, message, fixes or [])


def _replace(m: KernelModel, node: ts.Node, text: str) -> Edit:
    line, col, end_line, end_col = m.span(node)
    return Edit(line, col, end_line, end_col, text)


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _scope_key(fn: Function | None) -> object:
    """Buffers and queues belong to a class (its methods share them), else to their function."""
    if fn is None:
        return None
    return ("class", fn.klass) if fn.klass else ("function", fn.node.id)


def _kb(n: int) -> str:
    return f"{n / 1024:g} KB"


# ---- ub-overflow ----

@dataclass
class _Buffer:
    name: str
    call: Call
    num: int | None
    length: int | None  # bytes per buffer as written (before rounding)

    @property
    def bytes(self) -> int | None:
        if self.num is None or self.length is None:
            return None
        return self.num * _round_up(self.length, BLOCK)


def _ub_buffers(m: KernelModel) -> dict[object, dict[str, _Buffer]]:
    """UB buffers per scope. A buffer set up twice (re-InitBuffer, or alternatives in if/else)
    counts once, at its largest."""
    scopes: dict[object, dict[str, _Buffer]] = {}
    reset: set[object] = set()
    for c in m.calls:
        key = _scope_key(c.function)
        if c.name in ("Reset", "Destroy") and m.object_kind(c.receiver, c.function) == "pipe":
            reset.add(key)
        if c.name == "InitBufPool" and len(c.args) == 2 and m.object_kind(c.receiver, c.function) != "pool":
            # A pool carves its length out of the UB once; the buffers inside it (pool.InitBuffer)
            # share that space. The three-argument form shares another pool's space: nothing new.
            pool = m.ref_name(c.args[0]) or "pool"
            buf = _Buffer(pool, c, 1, m.const_value(c.args[1]))
            scopes.setdefault(key, {})[pool] = buf
            continue
        if c.name != "InitBuffer" or len(c.args) not in (2, 3) or m.object_kind(c.receiver, c.function) == "pool":
            continue
        name = m.ref_name(c.args[0])
        d = m.decl_of(name, c.function) if name else None
        if d is None or type_kind(d.type) not in ("queue", "tbuf"):
            continue
        positions = template_args(d.type)[:2] if d.type.split("<")[0].endswith("TQueBind") else [queue_position(d.type)]
        if not any((p or "").split("::")[-1] in UB_POSITIONS for p in positions):
            continue
        num = m.const_value(c.args[1]) if len(c.args) == 3 else 1
        buf = _Buffer(name, c, num, m.const_value(c.args[-1]))
        old = scopes.setdefault(key, {}).get(name)
        if old is None or (old.bytes is not None and (buf.bytes is None or buf.bytes > old.bytes)):
            scopes[key][name] = buf
    # After a pipe Reset the same UB is handed out again: a plain sum would over-count.
    return {k: v for k, v in scopes.items() if k not in reset}


def ub_overflow(m: KernelModel, chip: Chip) -> list[Finding]:
    safe = chip.ub_bytes - chip.ub_reserved_bytes
    out = []
    for buffers in _ub_buffers(m).values():
        known = sorted((b for b in buffers.values() if b.bytes is not None), key=lambda b: b.call.node.start_byte)
        total = sum(b.bytes for b in known)
        if total <= safe:
            continue
        running = 0
        # Report on the InitBuffer that crosses the line, as the emulator does at run time.
        at = next(b for b in known if (running := running + b.bytes) > (chip.ub_bytes if total > chip.ub_bytes
                                                                          else safe))
        parts = ", ".join(f"{x.name} {x.num} x {x.bytes // x.num} B" for x in known)
        unknown = len(buffers) - len(known)
        more = f" (and {unknown} buffer(s) sized at run time)" if unknown else ""
        if total > chip.ub_bytes:
            out.append(_finding(
                m, at.call.node, "error", "ub-overflow",
                f"These buffers need {total} bytes of Unified Buffer ({parts}){more}, more than the "
                f"{chip.ub_bytes} bytes ({_kb(chip.ub_bytes)}) on {chip.name}: InitBuffer fails on the device. "
                "Shrink the tiles (more tiles per block), use fewer buffers, or reuse one TBuf for several "
                "temporaries."))
        else:
            out.append(_finding(
                m, at.call.node, "warning", "ub-overflow",
                f"These buffers need {total} bytes of Unified Buffer ({parts}){more}, reaching into the top "
                f"{_kb(chip.ub_reserved_bytes)} of the {_kb(chip.ub_bytes)} on {chip.name}, which some CANN "
                f"versions reserve (data placed there was seen corrupted). Staying under {safe} bytes is safe."))
    return out


# ---- unaligned-copy ----

def _copy_direction(m: KernelModel, c: Call) -> str | None:
    dst, src = (m.expr_kind(a, c.function) for a in c.args[:2])
    if dst == "local" and src == "global":
        return "GM->UB"
    if dst == "global" and src == "local":
        return "UB->GM"
    if dst == "local" and src == "local":
        return "UB->UB"
    return None


def unaligned_copy(m: KernelModel, chip: Chip) -> list[Finding]:
    out = []
    for c in m.calls:
        if c.name != "DataCopy" or len(c.args) != 3 or c.receiver is not None:
            continue
        count = m.const_value(c.args[2])
        if not count or count <= 0:
            continue
        elem = m.element_type(c.args[0], c.function) or m.element_type(c.args[1], c.function)
        size = m.element_bytes(elem)
        if size is None or count * size % BLOCK == 0:
            continue
        per = BLOCK // size
        kept = count * size // BLOCK * BLOCK // size
        rounded = _round_up(count, per)
        direction = _copy_direction(m, c)
        fixes = []
        if direction in ("GM->UB", "UB->UB"):
            fixes.append(Fix(f"Round the DataCopy count up to {rounded} (copies {rounded - count} extra "
                             f"{elem} elements into UB)", [_replace(m, c.args[2], str(rounded))],
                             preferred=chip.family == 310))
        if direction in ("GM->UB", "UB->GM") and chip.family != 310:
            fixes.append(_pad_fix(m, c, direction, elem, count * size))
        where = f" {direction}" if direction else ""
        out.append(_finding(
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
               [_replace(m, c.node, f"{ns}DataCopyPad({dst}, {src}, {params}{pad})")], preferred=True)


def unaligned_view(m: KernelModel, chip: Chip) -> list[Finding]:
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
            out.append(_finding(
                m, a, "error", "unaligned-copy",
                f"{c.name} on `{m.text(a)}`, a UB view that starts {k * size % BLOCK} bytes past a 32-byte "
                f"boundary: vector and DataCopy operands in UB must start 32-byte aligned. Offset views by "
                f"multiples of {BLOCK // size} elements, or load the shifted data into its own buffer."))
    return out


# ---- single-buffer ----

def _called_in_loop(m: KernelModel) -> set[tuple[str | None, str]]:
    """(class, function) pairs that run inside a loop: called from a loop, or from a function
    that does, within the same class (a kernel's Process loop calling CopyIn/Compute/CopyOut)."""
    by_name = {(f.klass, f.name) for f in m.functions}
    hot: set[tuple[str | None, str]] = set()
    changed = True
    while changed:
        changed = False
        for c in m.calls:
            if c.receiver not in (None, "this") or c.function is None:
                continue
            key = (c.function.klass, c.name)
            if key in by_name and key not in hot and \
                    (c.loops or (c.function.klass, c.function.name) in hot):
                hot.add(key)
                changed = True
    return hot


def single_buffer(m: KernelModel, chip: Chip) -> list[Finding]:
    hot = _called_in_loop(m)
    scopes = _ub_buffers(m)
    # Queues whose buffer count is one shared name (BUFFER_NUM = 1) make one finding, not one each.
    groups: dict[tuple[object, str], list[tuple[Call, str, Call]]] = {}
    for c in m.calls:
        if c.name != "InitBuffer" or len(c.args) != 3 or m.const_value(c.args[1]) != 1:
            continue
        name = m.ref_name(c.args[0])
        if m.object_kind(name, c.function) != "queue":
            continue
        key = _scope_key(c.function)
        looped = [u for u in m.calls if u.receiver == name and u.name in ("AllocTensor", "DeQue", "EnQue")
                  and _scope_key(u.function) == key and u.function is not None
                  and (u.loops or (u.function.klass, u.function.name) in hot)]
        if looped:
            count = c.args[1]
            group = m.text(count) if count.type == "identifier" else str(count.id)
            groups.setdefault((key, group), []).append((c, name, looped[0]))
    out = []
    for (key, _), members in groups.items():
        c, _, use = members[0]
        names = [n for _, n, _ in members]
        count = m.text(c.args[1])
        what = f"{names[0]} has a single buffer" if len(names) == 1 else \
            f"{', '.join(names[:-1])} and {names[-1]} have a single buffer each"
        why = f" ({count} = 1)" if c.args[1].type == "identifier" else ""
        out.append(_finding(
            m, c.args[1], "info", "single-buffer",
            f"{what}{why} but {'is' if len(names) == 1 else 'are'} used in a loop (line "
            f"{use.node.start_point[0] + 1}): each tile's copy waits for the previous tile's compute, so the copy "
            "and vector pipes never overlap. Two buffers (double buffering) let them run side by side, if UB "
            "allows.",
            _double_buffer_fix(m, c, scopes.get(key, {}), chip)))
    return out


def _double_buffer_fix(m: KernelModel, c: Call, buffers: dict[str, _Buffer], chip: Chip) -> list[Fix]:
    arg = c.args[1]
    same = [b for b in buffers.values() if len(b.call.args) == 3 and m.text(b.call.args[1]) == m.text(arg)]
    known = sum(b.bytes or 0 for b in buffers.values()) + sum(b.bytes or 0 for b in same)
    if known > chip.ub_bytes - chip.ub_reserved_bytes:
        return []  # doubled, even the sizes known here would not fit the safe UB: no fix
    if arg.type == "number_literal":
        return [Fix("Use 2 buffers (double buffering)", [_replace(m, arg, "2")], preferred=True)]
    if arg.type != "identifier":
        return []
    name = m.text(arg)
    decls = m.decls.get(name, [])
    if len(decls) != 1 or decls[0].value is None:
        return []
    value = decls[0].value
    if m.text(value).strip() != "1":
        return []
    others = sorted({u.start_point[0] + 1 for u in m.uses.get(name, [])
                     if not _is_buffer_count_use(m, u) and u.id != decls[0].name_node.id})
    note = f"; {name} also sets the tiling arithmetic on line{'s' if len(others) > 1 else ''} " \
           f"{', '.join(map(str, others))}" if others else ""
    return [Fix(f"Set {name} to 2 (double buffering{note})", [_replace(m, value, "2")], preferred=not others)]


def _is_buffer_count_use(m: KernelModel, ident: ts.Node) -> bool:
    """An identifier used as InitBuffer's buffer count."""
    args = ident.parent
    call = args.parent if args is not None else None
    if args is None or call is None or args.type != "argument_list" or call.type != "call_expression":
        return False
    func = call.child_by_field_name("function")
    named = [a for a in args.named_children if a.type != "comment"]
    return func is not None and m.text(func).endswith("InitBuffer") and len(named) == 3 and named[1].id == ident.id


# ---- scalar-in-loop ----

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


def scalar_in_loop(m: KernelModel, chip: Chip) -> list[Finding]:
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
        out.append(_finding(
            m, c.node, "warning", "scalar-in-loop",
            f"`{m.text(c.node)}` in the loop at line {loop.start_point[0] + 1} touches one element of {where} per "
            "iteration on the scalar (S) pipe, which stalls the vector pipe around it. Express the loop as "
            "vector ops over the whole tile (Adds/Muls/Select/Duplicate, or a reduction), or move whole blocks "
            "with DataCopy."))
    return out


# ---- missing-free ----

def missing_free(m: KernelModel, chip: Chip) -> list[Finding]:
    by_scope: dict[tuple[object, str], list[Call]] = {}
    for c in m.calls:
        if c.function is not None and c.receiver is not None:
            by_scope.setdefault((_scope_key(c.function), c.receiver), []).append(c)
    out = []
    for (key, name), calls in by_scope.items():
        allocs = [c for c in calls if c.name == "AllocTensor"]
        if not allocs or any(c.name == "FreeTensor" for c in calls):
            continue
        d = m.decl_of(name, allocs[0].function)
        if d is None or type_kind(d.type) != "queue":
            continue  # TBuf's AllocTensor needs no free; an unknown object may be freed elsewhere
        if key[0] == "function" and d.function is not allocs[0].function:
            continue  # a queue passed in may be freed by the caller
        out.append(_finding(
            m, allocs[0].node, "warning", "missing-free",
            f"{name}.AllocTensor has no matching {name}.FreeTensor in this "
            f"{'class' if key[0] == 'class' else 'function'}: every AllocTensor holds one of the queue's buffers "
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
    holder = last.node.parent
    var = None
    if holder is not None and holder.type == "init_declarator":
        ident = holder.child_by_field_name("declarator")
        statement = holder.parent
        var = m.text(ident) if ident is not None and ident.type == "identifier" else None
    elif holder is not None and holder.type == "assignment_expression":
        ident = holder.child_by_field_name("left")
        statement = holder.parent
        var = m.text(ident) if ident is not None and ident.type == "identifier" else None
    else:
        return []
    if var is None or statement is None or statement.parent is None or statement.parent.id != fn.body.id:
        return []
    for c in m.calls_in(fn):
        if c.name == "EnQue" and c.args and m.ref_name(c.args[0]) == var:
            return []
    if _has_return(fn.body):
        return []
    statements = [s for s in fn.body.named_children if s.type != "comment"]
    indent = _indent(m, statements[-1] if statements else statement)
    close = fn.body.children[-1]
    line, col, _, _ = m.span(close)
    before = m.lines[close.start_point[0]][:close.start_point[1]]
    if before.strip():  # `}` shares its line with code: put the free on a line of its own before it
        text = f"\n{indent}{queue}.FreeTensor({var});\n{before[:len(before) - len(before.lstrip())].decode()}"
    else:
        text = f"{indent}{queue}.FreeTensor({var});\n"
        col = 1
    return [Fix(f"Insert {queue}.FreeTensor({var}) at the end of {fn.name}", [Edit(line, col, line, col, text)],
                preferred=True)]


def _has_return(body: ts.Node) -> bool:
    stack = list(body.children)
    while stack:
        n = stack.pop()
        if n.type == "return_statement":
            return True
        if n.type != "lambda_expression":
            stack.extend(n.children)
    return False


def _indent(m: KernelModel, n: ts.Node) -> str:
    line = m.lines[n.start_point[0]].decode("utf-8", errors="replace")
    return line[:len(line) - len(line.lstrip())]


# ---- missing-sync on TBuf ----

def tbuf_missing_sync(m: KernelModel, chip: Chip) -> list[Finding]:
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
        out.append(_finding(
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
    indent = _indent(m, stmt)
    line = stmt.start_point[0] + 1
    text = (f"{indent}{ns}SetFlag<{ns}HardEvent::{event}>(EVENT_ID0);\n"
            f"{indent}{ns}WaitFlag<{ns}HardEvent::{event}>(EVENT_ID0);\n")
    return [Fix(f"Insert SetFlag/WaitFlag<HardEvent::{event}> before {later.name}", [Edit(line, 1, line, 1, text)],
                preferred=True)]


RULES = (ub_overflow, unaligned_copy, unaligned_view, single_buffer, scalar_in_loop, missing_free, tbuf_missing_sync)
