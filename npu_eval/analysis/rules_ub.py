"""Unified Buffer budget: the UB buffers a class or function sets up, summed.

- ub-overflow: buffers with compile-time constant sizes that add up to more than the chip's
  Unified Buffer (error), or reach into its reserved top (warning), as the emulator judges
  InitBuffer at run time.
- single-buffer (info): queues with one buffer feeding a tiled loop, so copy and compute never
  overlap. Fix: two buffers, unless the known sizes would then overflow UB.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from sage_npu.npu_eval.analysis.findings import BLOCK, Finding, Fix, finding, replace, round_up, scope_key
from sage_npu.npu_eval.analysis.model import UB_POSITIONS, Call, KernelModel, queue_position, template_args, type_kind
from sage_npu.npu_eval.chips import ChipProfile


def _kb(n: int) -> str:
    return f"{n / 1024:g} KB"


# ---- ub-overflow ----

@dataclass
class UbBuffer:
    """One InitBuffer (or InitBufPool) as the source writes it: the queue or TBuf, the call, the
    buffer count and the bytes per buffer when they are compile-time constants."""

    name: str
    call: Call
    num: int | None
    length: int | None  # bytes per buffer as written (before rounding)

    @property
    def bytes(self) -> int | None:
        if self.num is None or self.length is None:
            return None
        return self.num * round_up(self.length, BLOCK)


def ub_buffers(m: KernelModel) -> dict[object, dict[str, UbBuffer]]:
    """UB buffers per scope (`scope_key`: a class, or a free function). A buffer set up twice
    (re-InitBuffer, or alternatives in if/else) counts once, at its largest; a scope that resets
    its pipe is left out (its UB is handed out again, a sum would over-count)."""
    scopes: dict[object, dict[str, UbBuffer]] = {}
    reset: set[object] = set()
    for c in m.calls:
        key = scope_key(c.function)
        if c.name in ("Reset", "Destroy") and m.object_kind(c.receiver, c.function) == "pipe":
            reset.add(key)
        if c.name == "InitBufPool" and len(c.args) == 2 and m.object_kind(c.receiver, c.function) != "pool":
            # A pool carves its length out of the UB once; the buffers inside it (pool.InitBuffer)
            # share that space. The three-argument form shares another pool's space: nothing new.
            pool = m.ref_name(c.args[0]) or "pool"
            buf = UbBuffer(pool, c, 1, m.const_value(c.args[1]))
            scopes.setdefault(key, {})[pool] = buf
            continue
        if c.name != "InitBuffer" or len(c.args) not in (2, 3) or m.object_kind(c.receiver, c.function) == "pool":
            continue
        name = m.ref_name(c.args[0])
        d = m.decl_of(name, c.function) if name else None
        if name is None or d is None or type_kind(d.type) not in ("queue", "tbuf"):
            continue
        positions = template_args(d.type)[:2] if d.type.split("<")[0].endswith("TQueBind") else [queue_position(d.type)]
        if not any((p or "").split("::")[-1] in UB_POSITIONS for p in positions):
            continue
        num = m.const_value(c.args[1]) if len(c.args) == 3 else 1
        buf = UbBuffer(name, c, num, m.const_value(c.args[-1]))
        old = scopes.setdefault(key, {}).get(name)
        if old is None or (old.bytes is not None and (buf.bytes is None or buf.bytes > old.bytes)):
            scopes[key][name] = buf
    # After a pipe Reset the same UB is handed out again: a plain sum would over-count.
    return {k: v for k, v in scopes.items() if k not in reset}


def ub_overflow(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    safe = chip.ub_bytes - chip.ub_reserved_bytes
    out = []
    for buffers in ub_buffers(m).values():
        known = sorted(((b, n) for b in buffers.values() if (n := b.bytes) is not None),
                       key=lambda bn: bn[0].call.node.start_byte)
        total = sum(n for _, n in known)
        if total <= safe:
            continue
        running = 0
        # Report on the InitBuffer that crosses the line, as the emulator does at run time.
        limit = chip.ub_bytes if total > chip.ub_bytes else safe
        at = next(b for b, n in known if (running := running + n) > limit)
        parts = ", ".join(f"{x.name} {x.num} x {n // (x.num or 1)} B" for x, n in known)
        unknown = len(buffers) - len(known)
        more = f" (and {unknown} buffer(s) sized at run time)" if unknown else ""
        fixes = _single_buffer_fixes(m, known, total - safe)
        if total > chip.ub_bytes:
            out.append(finding(
                m, at.call.node, "error", "ub-overflow",
                f"These buffers need {total} bytes of Unified Buffer ({parts}){more}, more than the "
                f"{chip.ub_bytes} bytes ({_kb(chip.ub_bytes)}) on {chip.name}: InitBuffer fails on the device. "
                "Shrink the tiles (more tiles per block), use fewer buffers, or reuse one TBuf for several "
                "temporaries.", fixes))
        else:
            out.append(finding(
                m, at.call.node, "warning", "ub-overflow",
                f"These buffers need {total} bytes of Unified Buffer ({parts}){more}, reaching into the top "
                f"{_kb(chip.ub_reserved_bytes)} of the {_kb(chip.ub_bytes)} on {chip.name}, which some CANN "
                f"versions reserve (data placed there was seen corrupted). Staying under {safe} bytes is safe.",
                fixes))
    return out


def _single_buffer_fixes(m: KernelModel, known: list[tuple[UbBuffer, int]], excess: int) -> list[Fix]:
    """Shrinking that needs no judgement: queues of several buffers down to one, when that alone
    brings the total under the safe size. Fewer buffers only take away the overlap of copy and
    compute (a smaller tile would change the tiling arithmetic, which is the author's call). A
    kernel that holds two of the queue's tensors at once would then wait forever: the verdict of
    the next save shows it (deadlock at that AllocTensor). A literal count is edited where it
    stands; a named constant (NBUF) where it is defined, when it is used for nothing but buffer
    counts. Not preferred: the overlap is what double buffering was for."""
    by_count: dict[str, list[tuple[UbBuffer, int]]] = {}
    for b, n in known:
        if b.num is not None and b.num >= 2 and len(b.call.args) == 3:
            by_count.setdefault(m.text(b.call.args[1]), []).append((b, n))
    fixes = []
    for text, group in by_count.items():
        arg = group[0][0].call.args[1]
        if arg.type == "number_literal":
            fixes += [Fix(f"Use 1 buffer for {b.name} (frees {freed} bytes; its copies no longer overlap compute)",
                          [replace(m, b.call.args[1], "1")])
                      for b, n in group if (freed := n - n // (b.num or 1)) >= excess]
            continue
        freed = sum(n - n // (b.num or 1) for b, n in group)
        decls = m.decls.get(text, []) if arg.type == "identifier" else []
        if freed < excess or len(decls) != 1 or decls[0].value is None:
            continue
        if any(not _is_buffer_count_use(m, u) for u in m.uses.get(text, []) if u.id != decls[0].name_node.id):
            continue  # the constant also sets other arithmetic
        names = ", ".join(b.name for b, _ in group)
        fixes.append(Fix(f"Set {text} to 1 (frees {freed} bytes: {names} single-buffered)",
                         [replace(m, decls[0].value, "1")]))
    return fixes


# ---- what the buffers take, for the editor's UB view ----

@dataclass(frozen=True)
class BufferUse:
    """One buffer's share of the Unified Buffer: `count` buffers of `each_bytes` (rounded up to
    32 bytes, as the pipe allocates), None where the source sizes it at run time."""

    name: str
    line: int            # 1-based, the InitBuffer call
    count: int | None
    each_bytes: int | None
    size: str            # the size argument as written ("tileLength * sizeof(half)")

    @property
    def bytes(self) -> int | None:
        return None if self.count is None or self.each_bytes is None else self.count * self.each_bytes


@dataclass(frozen=True)
class UbUsage:
    """The UB one class (or free function) sets up, against the chip: `ub_bytes` usable, past
    `safe_bytes` the reserved top."""

    scope: str
    buffers: tuple[BufferUse, ...]
    chip: str
    ub_bytes: int
    safe_bytes: int

    @property
    def known_bytes(self) -> int:
        return sum(b.bytes or 0 for b in self.buffers)

    @property
    def sized_at_run_time(self) -> int:
        return sum(b.bytes is None for b in self.buffers)


def ub_usage(source: str | bytes, chip: ChipProfile) -> list[UbUsage]:
    """Per class or free function, the UB its buffers take (constant sizes summed as the
    ub-overflow rule does), in source order; nothing compiled or run."""
    m = KernelModel(source)
    out = []
    for key, buffers in ub_buffers(m).items():
        if not buffers:
            continue
        uses = tuple(sorted((BufferUse(b.name, b.call.node.start_point[0] + 1, b.num,
                                       None if b.length is None else round_up(b.length, BLOCK),
                                       m.text(b.call.args[-1]))
                             for b in buffers.values()), key=lambda u: u.line))
        first = min(buffers.values(), key=lambda b: b.call.node.start_byte).call.function
        scope = (first.klass or first.name) if first is not None else str(key)
        out.append(UbUsage(scope, uses, chip.name, chip.ub_bytes, chip.ub_bytes - chip.ub_reserved_bytes))
    return sorted(out, key=lambda u: u.buffers[0].line)


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


def single_buffer(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    hot = _called_in_loop(m)
    scopes = ub_buffers(m)
    # Queues whose buffer count is one shared name (BUFFER_NUM = 1) make one finding, not one each.
    groups: dict[tuple[object, str], list[tuple[Call, str, Call]]] = {}
    for c in m.calls:
        if c.name != "InitBuffer" or len(c.args) != 3 or m.const_value(c.args[1]) != 1:
            continue
        name = m.ref_name(c.args[0])
        if name is None or m.object_kind(name, c.function) != "queue":
            continue
        key = scope_key(c.function)
        if name not in scopes.get(key, {}):
            continue  # not a UB queue: an L1/L0 queue's depth is the cube's own trade-off (the advisor's)
        looped = [u for u in m.calls if u.receiver == name and u.name in ("AllocTensor", "DeQue", "EnQue")
                  and scope_key(u.function) == key and u.function is not None
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
        out.append(finding(
            m, c.args[1], "info", "single-buffer",
            f"{what}{why} but {'is' if len(names) == 1 else 'are'} used in a loop (line "
            f"{use.node.start_point[0] + 1}): each tile's copy waits for the previous tile's compute, so the copy "
            "and vector pipes never overlap. Two buffers (double buffering) let them run side by side, if UB "
            "allows.",
            _double_buffer_fix(m, c, scopes.get(key, {}), chip)))
    return out


def _double_buffer_fix(m: KernelModel, c: Call, buffers: dict[str, UbBuffer], chip: ChipProfile) -> list[Fix]:
    arg = c.args[1]
    same = [b for b in buffers.values() if len(b.call.args) == 3 and m.text(b.call.args[1]) == m.text(arg)]
    known = sum(b.bytes or 0 for b in buffers.values()) + sum(b.bytes or 0 for b in same)
    if known > chip.ub_bytes - chip.ub_reserved_bytes:
        return []  # doubled, even the sizes known here would not fit the safe UB: no fix
    if arg.type == "number_literal":
        return [Fix("Use 2 buffers (double buffering)", [replace(m, arg, "2")], preferred=True)]
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
    return [Fix(f"Set {name} to 2 (double buffering{note})", [replace(m, value, "2")], preferred=not others)]


def _is_buffer_count_use(m: KernelModel, ident: ts.Node) -> bool:
    """An identifier used as InitBuffer's buffer count."""
    args = ident.parent
    call = args.parent if args is not None else None
    if args is None or call is None or args.type != "argument_list" or call.type != "call_expression":
        return False
    func = call.child_by_field_name("function")
    named = [a for a in args.named_children if a.type != "comment"]
    return func is not None and m.text(func).endswith("InitBuffer") and len(named) == 3 and named[1].id == ident.id
