"""The offline optimizer's catalog: known Ascend C transforms, each located in the source
(tree-sitter for the kernel, Python's own parser for host.py) and applied as a text edit.

A transform proposes candidates; it never decides they are good. Every candidate is
evaluated (compiled, checked on every trial, estimated) before it can win.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import tree_sitter as ts

from sage_npu.agent.episode import Candidate
from sage_npu.agent.reductions import block_then_whole_reduce
from sage_npu.agent.vectorise import vector_instead_of_scalar_loop
from sage_npu.npu_eval.analysis.model import Call, Decl, KernelModel, queue_position, type_kind
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.report import AdviceFinding
from sage_npu.npu_eval.signature import parse


@dataclass
class Sources:
    kernel_name: str
    kernel: str
    host: str


def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _offset(text: str, line: int, col: int) -> int:
    """Character offset of a 1-based line and 0-based UTF-8 byte column (as ast reports)."""
    lines = text.splitlines(keepends=True)
    head = "".join(lines[: line - 1])
    return len(head) + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def _const_int(node: ast.AST) -> int | None:
    """The value of an int literal or a product/sum of them (`16 * 1024`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.FloorDiv)):
        a, b = _const_int(node.left), _const_int(node.right)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Add):
            return a + b
        return a // b if b else None
    return None


def _host_constants(host: str) -> list[tuple[str, int, ast.expr]]:
    """Module-level `NAME = <int expression>` assignments of host.py, and each name of a tuple
    assignment (`BASE_M, BASE_N, BASE_K = 128, 128, 64`)."""
    try:
        tree = ast.parse(host)
    except SyntaxError:
        return []
    out = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        pairs = [(target, stmt.value)]
        if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
                and len(target.elts) == len(stmt.value.elts):
            pairs = list(zip(target.elts, stmt.value.elts, strict=True))
        for name, value in pairs:
            v = _const_int(value)
            if isinstance(name, ast.Name) and v is not None:
                out.append((name.id, v, value))
    return out


def _block_dim_literals(host: str) -> list[ast.Constant]:
    """Int literals passed straight as Launch(block_dim=...)."""
    try:
        tree = ast.parse(host)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "block_dim" and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, int):
            found.append(node.value)
    return found


def _edit_host(host: str, node: ast.expr, value: int) -> str:
    start = _offset(host, node.lineno, node.col_offset)
    # A parsed expression always has its end; the fallback only satisfies the optional typing.
    end = _offset(host, node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    return _replace(host, start, end, str(value))


# ---- the transforms ----

_BUFFER_NUM = re.compile(rb"\bBUFFER_NUM\b")


def double_buffering(src: Sources, chip: ChipProfile) -> list[Candidate]:
    """One buffer per queue serialises load, compute and store; two let them overlap."""
    text = src.kernel.encode("utf-8")
    tree = parse(text)
    out = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        # constexpr int32_t BUFFER_NUM = 1;  /  const int BUFFER_NUM = 1;
        if n.type == "init_declarator":
            name = n.child_by_field_name("declarator")
            value = n.child_by_field_name("value")
            if name is not None and value is not None and _BUFFER_NUM.fullmatch(text[name.start_byte:name.end_byte]) \
                    and text[value.start_byte:value.end_byte].strip() == b"1":
                new = (text[:value.start_byte] + b"2" + text[value.end_byte:]).decode("utf-8")
                out.append(Candidate("double-buffering", "BUFFER_NUM 1 -> 2: load, compute and store overlap",
                                     {src.kernel_name: new}, ("BUFFER_NUM", "double-buffering")))
    # #define BUFFER_NUM 1
    m = re.search(r"(?m)^(\s*#\s*define\s+BUFFER_NUM\s+)1\b", src.kernel)
    if m:
        new = src.kernel[: m.end(1)] + "2" + src.kernel[m.end(1) + 1:]
        out.append(Candidate("double-buffering", "#define BUFFER_NUM 1 -> 2", {src.kernel_name: new},
                             ("BUFFER_NUM", "double-buffering")))
    return out


_CUBE_ONLY = re.compile(r"\bKERNEL_TYPE_(AIC_ONLY|MIX_AIC_1_0)\b")


def all_vector_cores(src: Sources, chip: ChipProfile) -> list[Candidate]:
    """Use every core: raise the block count the host launches with to the chip's vector cores, or
    to its cube cores for a kernel that runs on the cube cores alone (blockDim counts AI Cores)."""
    cube = bool(_CUBE_ONLY.search(src.kernel))
    cores, what = (chip.cube_cores, "cube") if cube else (chip.vector_cores, "vector")
    out = []
    for name, value, node in _host_constants(src.host):
        if re.search(r"CORE|BLOCK_DIM|NUM_BLOCKS", name) and 0 < value < cores:
            out.append(Candidate("all-vector-cores", f"{name} {value} -> {cores} ({chip.name}'s {what} cores)",
                                 {"host.py": _edit_host(src.host, node, cores)}, ("multi-core", "block_dim")))
    for lit in _block_dim_literals(src.host):
        if isinstance(lit.value, int) and 0 < lit.value < cores:
            out.append(Candidate("all-vector-cores", f"block_dim {lit.value} -> {cores}",
                                 {"host.py": _edit_host(src.host, lit, cores)}, ("multi-core", "block_dim")))
    return out


def bigger_tiles(src: Sources, chip: ChipProfile) -> list[Candidate]:
    """Bigger tiles amortise each instruction's fixed cost, as long as they fit the UB."""
    out = []
    for name, value, node in _host_constants(src.host):
        if "TILE" in name and value > 0:
            for factor in (2, 4):
                out.append(Candidate("bigger-tiles", f"{name} {value} -> {value * factor}",
                                     {"host.py": _edit_host(src.host, node, value * factor)},
                                     ("tiling", "UB")))
    text = src.kernel
    for m in re.finditer(r"(?m)^(\s*(?:static\s+)?constexpr\s+\w+\s+(\w*TILE\w*)\s*=\s*)(\d+)(\s*;)", text):
        value = int(m.group(3))
        for factor in (2, 4):
            new = text[: m.start(3)] + str(value * factor) + text[m.end(3):]
            out.append(Candidate("bigger-tiles", f"{m.group(2)} {value} -> {value * factor}", {src.kernel_name: new},
                                 ("tiling", "UB")))
    return out


def fewer_tile_splits(src: Sources, chip: ChipProfile) -> list[Candidate]:
    """Tiling(tileNum=N) literal: fewer, bigger tiles per core."""
    try:
        tree = ast.parse(src.host)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg and re.fullmatch(r"tile(Num|Count|s)", node.arg) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int) and node.value.value > 1:
            v = node.value.value
            out.append(Candidate("bigger-tiles", f"{node.arg} {v} -> {v // 2}",
                                 {"host.py": _edit_host(src.host, node.value, v // 2)}, ("tiling", "UB")))
    return out


# ---- the cube transforms (docs/cube.md, Costs) ----

# The memory each cube queue position takes its buffers from (docs/cube.md, Memories and positions),
# as the chip profile's field.
_CUBE_MEMORY = {"A1": "l1_bytes", "B1": "l1_bytes", "C1": "l1_bytes", "A2": "l0a_bytes", "B2": "l0b_bytes",
                "CO1": "l0c_bytes", "C2": "bt_bytes"}


@dataclass
class _CubeBuffer:
    """One InitBuffer of a queue in a cube memory: its position, its count and its size as written."""

    queue: str
    position: str
    init: Call
    decl: Decl
    num: int | None


def _cube_buffers(m: KernelModel) -> list[_CubeBuffer]:
    out = []
    for c in m.calls:
        if c.name != "InitBuffer" or len(c.args) != 3:
            continue
        name = m.ref_name(c.args[0])
        d = m.decl_of(name, c.function) if name else None
        if name is None or d is None or type_kind(d.type) != "queue":
            continue
        pos = (queue_position(d.type) or "").split("::")[-1]
        if pos in _CUBE_MEMORY:
            out.append(_CubeBuffer(name, pos, c, d, m.const_value(c.args[1])))
    return out


def _tiling_fields(host: str) -> dict[str, tuple[str, int]]:
    """Tiling field -> (host.py constant, value) for the fields host.py passes a constant to:
    `Tiling(baseM=BASE_M)`, or `baseM=min(BASE_M, rows)` (the constant bounds the field)."""
    consts = {name: (value, node) for name, value, node in _host_constants(host)}
    try:
        tree = ast.parse(host)
    except SyntaxError:
        return {}
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Tiling":
            for kw in node.keywords:
                names = [n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name) and n.id in consts]
                if kw.arg and names:
                    out[kw.arg] = (names[0], consts[names[0]][0])
    return out


def _cube_bytes(m: KernelModel, buffers: list[_CubeBuffer], fields: dict[str, int],
                nums: dict[str, int] | None = None) -> dict[str, int] | None:
    """Bytes each cube memory's buffers take with the tiling `fields` written into their sizes
    (`t.baseM * t.baseK * sizeof(half)`) and the buffer counts `nums` (queue -> count) changed;
    None when a size or count is not known from the source and host.py."""
    used: dict[str, int] = {}
    for b in buffers:
        text = m.text(b.init.args[2])
        for f, v in fields.items():
            text = re.sub(rf"(?:\b\w+(?:\.|->))*\b{re.escape(f)}\b", str(v), text)
        size = m.const_text(text)
        num = (nums or {}).get(b.queue, b.num)
        if size is None or num is None:
            return None
        mem = _CUBE_MEMORY[b.position]
        used[mem] = used.get(mem, 0) + num * size
    return used


def _fits(used: dict[str, int] | None, chip: ChipProfile, memories: tuple[str, ...] | None = None) -> bool:
    """Whether the buffers fit the chip's memories (only `memories`, the ones a change grows, when
    given: a kernel already past another memory is not this transform's to judge)."""
    return used is not None and all(n <= getattr(chip, mem) for mem, n in used.items()
                                    if memories is None or mem in memories)


def cube_base_block(src: Sources, chip: ChipProfile) -> list[Candidate]:
    """A bigger base block (baseM or baseN doubled) loads each A and B byte into L1 fewer times per
    Mmad (asc-devkit's matmul best practice: [128, 256, 64] for 16-bit inputs on the 910B); proposed
    only when the kernel's L0A/L0B/L0C (and L1) buffers still fit at the new size."""
    m = KernelModel(src.kernel)
    buffers = _cube_buffers(m)
    if not buffers:
        return []
    tiling = _tiling_fields(src.host)
    fields = {f: v for f, (_, v) in tiling.items()}
    nodes = {name: node for name, _, node in _host_constants(src.host)}
    out = []
    for field in ("baseM", "baseN"):
        if field not in tiling:
            continue
        name, value = tiling[field]
        if not _fits(_cube_bytes(m, buffers, {**fields, field: value * 2}), chip):
            continue
        out.append(Candidate("cube-base-block", f"{name} {value} -> {value * 2}: each loaded byte of A and B "
                             "feeds twice the Mmad work", {"host.py": _edit_host(src.host, nodes[name], value * 2)},
                             ("cube", "tiling", "base-block")))
    return out


def _template_depth(m: KernelModel, d: Decl) -> ts.Node | None:
    """The depth argument of a `TQue<TPosition::A1, 1>` declaration."""
    stack = [d.node]
    while stack:
        n = stack.pop()
        if n.type == "template_argument_list":
            return n.named_children[1] if n.named_child_count == 2 else None
        stack.extend(n.children)
    return None


def l1_double_buffering(src: Sources, chip: ChipProfile) -> list[Candidate]:
    """Two buffers in the L1 queues (A1, B1): the next step's GM -> L1 copy (MTE2) runs while this
    step's LoadData and Mmad read the other buffer (asc-devkit's L1/L0 ping-pong); proposed only
    when L1 holds both."""
    m = KernelModel(src.kernel)
    buffers = _cube_buffers(m)
    single = [b for b in buffers if b.position in ("A1", "B1") and b.num == 1]
    fields = {f: v for f, (_, v) in _tiling_fields(src.host).items()}
    if not single or not _fits(_cube_bytes(m, buffers, fields, {b.queue: 2 for b in single}), chip, ("l1_bytes",)):
        return []
    edits: dict[int, tuple[int, str]] = {}
    for b in single:
        edits[b.init.args[1].start_byte] = (b.init.args[1].end_byte, "2")
        depth = _template_depth(m, b.decl)
        if depth is not None and m.const_value(depth) == 1:
            edits[depth.start_byte] = (depth.end_byte, "2")
    text = m.src
    for start in sorted(edits, reverse=True):
        end, new = edits[start]
        text = text[:start] + new.encode() + text[end:]
    names = ", ".join(b.queue for b in single)
    return [Candidate("l1-double-buffering", f"{names}: 1 -> 2 buffers in L1, the next GM -> L1 copy overlaps "
                      "LoadData and Mmad", {src.kernel_name: text.decode("utf-8")}, ("cube", "double-buffering", "L1"))]


CATALOG = {
    "double-buffering": double_buffering,
    "all-vector-cores": all_vector_cores,
    "bigger-tiles": bigger_tiles,
    "fewer-tile-splits": fewer_tile_splits,
    "cube-base-block": cube_base_block,
    "l1-double-buffering": l1_double_buffering,
    "block-then-whole-reduce": block_then_whole_reduce,
    "vector-instead-of-scalar-loop": vector_instead_of_scalar_loop,
}


def propose(src: Sources, chip: ChipProfile) -> list[Candidate]:
    out: list[Candidate] = []
    for fn in CATALOG.values():
        out.extend(fn(src, chip))
    return out


# ---- the advisor's findings as candidates (docs/advisor.md) ----

_CHANGE = re.compile(r"(?P<name>\w+) (?P<old>\d+) -> (?P<new>\d+)")


def _stepped(src: Sources, chip: ChipProfile, name: str, old: int, new: int) -> Sources | None:
    """`name` taken from `old` to `new` by the tile transforms' own steps: bigger_tiles' x2 and x4
    up, fewer_tile_splits' halvings down (a tile count)."""
    value = old
    while value != new:
        if new > value:
            step = value * (4 if value * 4 <= new else 2)
            options = bigger_tiles(src, chip)
        else:
            step = value // 2
            options = fewer_tile_splits(src, chip)
        found = next((c for c in options if c.description.startswith(f"{name} {value} -> {step}")), None)
        if found is None or step == value:
            return None
        files = found.files
        src = Sources(src.kernel_name, files.get(src.kernel_name, src.kernel), files.get("host.py", src.host))
        value = step
    return src


def for_finding(finding: AdviceFinding, src: Sources, chip: ChipProfile) -> Candidate | None:
    """The catalog's candidate that makes the change an advisor finding proposes, or None when no
    transform makes it; a slow reduction by agent/reductions.py, an element loop by agent/vectorise.py."""
    tags = ("advisor", finding.code)
    if finding.code == "perf-single-buffer":
        return next(iter(double_buffering(src, chip)), None)
    if finding.code == "perf-strong-barrier":
        return _edited_candidate(finding, src)
    if finding.code == "perf-slow-reduction":
        at_kernel = Path(finding.file).name == src.kernel_name
        return next(iter(block_then_whole_reduce(src, chip, finding.line)), None) if at_kernel else None
    if finding.code == "perf-scalar-loop":
        at_kernel = Path(finding.file).name == src.kernel_name
        return next(iter(vector_instead_of_scalar_loop(src, chip, finding.line)), None) if at_kernel else None
    m = _CHANGE.match(finding.change)
    if m is None:
        return None
    name, old, new = m.group("name"), int(m.group("old")), int(m.group("new"))
    if finding.code == "perf-few-cores":
        return next((c for c in all_vector_cores(src, chip)
                     if c.description.startswith((f"{name} {old} -> {new}", f"block_dim {old} -> {new}"))), None)
    if finding.code == "perf-small-tiles":
        done = _stepped(src, chip, name, old, new)
        if done is None:
            return None
        files = {k: v for k, v in ((src.kernel_name, done.kernel), ("host.py", done.host))
                 if v != (src.kernel if k == src.kernel_name else src.host)}
        return Candidate("bigger-tiles", f"{name} {old} -> {new}", files, tags)
    return None if finding.code != "perf-unaligned-gm" else _edited_candidate(finding, src)


# ---- the advisor's findings in a program's C++ sources (docs/advisor.md, program mode) ----

_QUEUE_DEPTH = re.compile(r"(TQue<[^<>;]*?,\s*)1(\s*>)")
_INIT_DEPTH = re.compile(r"(InitBuffer\(\s*\w+\s*,\s*)1(\s*,)")


def program_edit(finding: AdviceFinding, text: str) -> str | None:
    """The source of the finding's file with the change it proposes made, or None when no text
    edit makes it: a `NAME old -> new` change rewrites `old` on the finding's line (after NAME
    when the line names it); a single buffer without BUFFER_NUM takes each one-deep TQue and its
    InitBuffer to two."""
    lines = text.splitlines(keepends=True)
    if not 1 <= finding.line <= len(lines):
        return None
    m = _CHANGE.search(finding.change)
    if m is not None:
        line = lines[finding.line - 1]
        at = line.find(m.group("name"))
        head, tail = (line[:at], line[at:]) if at >= 0 else ("", line)
        new, n = re.subn(rf"\b{m.group('old')}\b", m.group("new"), tail, count=1)
        if n == 0:
            return None
        lines[finding.line - 1] = head + new
        return "".join(lines)
    if finding.code == "perf-single-buffer":
        out = _INIT_DEPTH.sub(r"\g<1>2\2", _QUEUE_DEPTH.sub(r"\g<1>2\2", text))
        return out if out != text else None
    if finding.code == "perf-strong-barrier":
        return _narrowed_barrier(lines, finding)
    return None


_BARRIER = re.compile(r"^(\s*)(?:AscendC::)?PipeBarrier<PIPE_ALL>\(\);\s*$")


def _narrowed_barrier(lines: list[str], finding: AdviceFinding) -> str | None:
    """The barrier line as the finding's flag pairs (set, then wait, on EVENT_ID0) or narrower barriers."""
    m = _BARRIER.match(lines[finding.line - 1])
    if m is None:
        return None
    pad, wanted = m.group(1), finding.change.split(" instead of ")[0]
    new = [f"{pad}AscendC::SetFlag<AscendC::HardEvent::{e}>(EVENT_ID0);\n"
           f"{pad}AscendC::WaitFlag<AscendC::HardEvent::{e}>(EVENT_ID0);\n"
           for e in re.findall(r"HardEvent::(\w+)>", wanted)]
    new += [f"{pad}AscendC::PipeBarrier<PIPE_{p}>();\n" for p in re.findall(r"PipeBarrier<PIPE_(\w+)>", wanted)]
    if not new:
        return None
    lines[finding.line - 1] = "".join(new)
    return "".join(lines)


def _edited_candidate(finding: AdviceFinding, src: Sources) -> Candidate | None:
    """A task's candidate for a finding `program_edit` makes in its kernel or host.py (an unaligned
    tile length, a barrier stronger than needed)."""
    host = Path(finding.file).name == "host.py"
    text = program_edit(finding, src.host if host else src.kernel)
    if text is None:
        return None
    return Candidate("advisor-edit", finding.change, {"host.py" if host else src.kernel_name: text},
                     ("advisor", finding.code))
