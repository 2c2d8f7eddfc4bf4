"""The performance advisor (docs/advisor.md): findings, each at the line a person would change,
with the saving the cost model estimates for the change.

Every saving comes from a counterfactual: the kernel's own trace, rewritten as the change would
make it run, re-scheduled by the cost model (npu_eval/cost_model.py), with no rebuild. The
rewrites work on the trace's tile loop: a block's records split into a head and the iterations
of its loop (`split_loop`), which a change merges (bigger tiles), splits (double buffering with a
tile length divided by BUFFER_NUM), re-slots (a second queue buffer) or spreads over more blocks.
On the CPU each saving is a model figure and every message says so.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.cost_model import bank_factor, estimate
from sage_npu.npu_eval.costs import DTYPE_BYTES, CostTable
from sage_npu.npu_eval.protocol import EVENT_PIPES, PIPE_ALL
from sage_npu.npu_eval.report import AdviceCode, AdviceFinding, labelled
from sage_npu.npu_eval.trace import GmSpan, Rec, Trace

# A finding saving less than this share of the estimate is not reported (the model is not that precise).
MIN_SAVING_SHARE = 0.02
# A finding claiming more than this share of the estimate must deliver it (benchmarks/advice_promises.py)
PROMISE_SHARE = 0.10
# ... within this share of the saving its change delivers (re-estimated after the change is made)
WITHIN = 0.25
# A load reaches this share of its bandwidth from saturating_bytes() on (docs/advisor.md).
SATURATION_SHARE = 0.9


def kept(estimated_us: float, delivered_us: float) -> bool:
    """Whether a finding's estimated saving held: within WITHIN of the one its change delivered."""
    return delivered_us > 0 and abs(estimated_us - delivered_us) <= WITHIN * delivered_us


@dataclass(frozen=True)
class AdviceInput:
    """What the advisor reads: trial 0's trace and block_dim, the chip and cost table it was
    estimated with, and the task's sources (host None for a kernel alone)."""

    trace: Trace
    block_dim: int
    chip: ChipProfile
    costs: CostTable
    kernel: Path
    host: Path | None = None


@dataclass(frozen=True)
class Loop:
    """A block's records: those before its tile loop, and each iteration (the last keeps what
    follows the loop)."""

    head: list[Rec]
    iterations: list[list[Rec]]

    def records(self) -> list[Rec]:
        return [*self.head, *(r for it in self.iterations for r in it)]


def split_loop(recs: list[Rec]) -> Loop:
    """The iterations start at each occurrence of the first location seen more than once."""
    counts = Counter(r.loc for r in recs)
    first = next((r.loc for r in recs if counts[r.loc] > 1), None)
    if first is None:
        return Loop(list(recs), [])
    starts = [i for i, r in enumerate(recs) if r.loc == first]
    ends = [*starts[1:], len(recs)]
    return Loop(recs[:starts[0]], [recs[a:b] for a, b in zip(starts, ends, strict=True)])


def scaled(r: Rec, f: float) -> Rec:
    """An instruction over f times the elements (a tile f times as long); bursts of a multi-burst
    transfer grow with it, their length stays."""
    if r.kind != "I" or f == 1:
        return r
    bursts = r.b if r.b <= 1 else max(1, round(r.b * f))

    def span(x: tuple[int, int]) -> tuple[int, int]:
        return (x[0], round(x[1] * f))

    # the rescaled copy's GM bytes are not the recorded ones: no span, so the L2 model counts it a
    # miss rather than matching it against the original's address (halved() gives halves their own)
    return replace(r, elems=max(1, round(r.elems * f)), bytes=max(1, round(r.bytes * f)),
                   b=bursts if r.pipe in ("MTE2", "MTE3") else r.b, w=span(r.w), r0=span(r.r0), r1=span(r.r1),
                   gm=None, gm_at=0)


def halved(r: Rec, k: int) -> Rec:
    """The k-th (0 or 1) half of an instruction (scaled(r, 0.5)); a GM transfer's half keeps its own
    part of the recorded GM span (the first or second half of its bursts, or of its one burst), so
    the L2 model sees the two halves as the distinct bytes they are, and a later re-read of either."""
    half = scaled(r, 0.5)
    gm = r.gm
    if half is r or not (gm or r.gm_at):
        return half
    if gm is None:  # spanless (tracked whole by address and shape): a key of its own per half
        return replace(half, gm_at=r.gm_at + k * half.bytes)
    if gm.count != max(r.b, 1):
        return half
    if gm.count > 1:
        first = gm.count // 2 if k else 0
        n = gm.count - first if k else gm.count // 2
        return replace(half, b=n, bytes=max(1, round(r.bytes * n / gm.count)),
                       gm=GmSpan(gm.addr + first * (gm.burst + gm.gap), gm.burst, n, gm.gap))
    lo = gm.burst // 2
    return replace(half, gm=GmSpan(gm.addr + k * lo, gm.burst - lo if k else lo, 1))


def _us(trace: Trace, blocks: dict[int, list[Rec]], inp: AdviceInput, block_dim: int | None = None) -> float:
    # rewritten blocks keep the unit they ran on (a cube kernel's on the AI Cores' cube units)
    kind = "AIC" if trace.cores and all(k == "AIC" for k, _ in trace.cores.values()) else "AIV"
    t = Trace(blocks, trace.locs, trace.truncated, {b: (kind, b) for b in blocks})
    return estimate(t, inp.chip, inp.costs, block_dim or inp.block_dim).estimated_us


def _map_blocks(trace: Trace, fn: Callable[[list[Rec]], list[Rec]]) -> dict[int, list[Rec]]:
    return {b: fn(recs) for b, recs in trace.blocks.items()}


# ---- counterfactual rewrites of one block's records ----

def single_buffered_queues(recs: list[Rec]) -> set[int]:
    """Queues (ids) whose every AllocTensor takes slot 0, allocated more than once."""
    slots: dict[int, set[int]] = {}
    allocs: Counter = Counter()
    for r in recs:
        if r.kind == "alloc":
            slots.setdefault(r.a, set()).add(r.b)
            allocs[r.a] += 1
    return {q for q, s in slots.items() if s == {0} and allocs[q] > 1}


def double_buffered(recs: list[Rec], queues: set[int], split: bool) -> list[Rec]:
    """The records as they run with two buffers per queue in `queues`: each queue's n-th alloc,
    enque, deque and free take slot n % 2; with `split`, each iteration first becomes two of half
    the length (a tile length divided by BUFFER_NUM)."""
    if split:
        loop = split_loop(recs)
        halves = [[halved(r, k) for r in it] for it in loop.iterations for k in range(2)]
        recs = Loop(loop.head, halves).records()
    seen: Counter = Counter()
    out = []
    for r in recs:
        if r.kind in ("alloc", "enque", "deque", "free") and r.a in queues:
            n = seen[(r.a, r.kind)]
            seen[(r.a, r.kind)] += 1
            r = replace(r, b=n % 2)
        out.append(r)
    return out


def merged(recs: list[Rec], f: int) -> list[Rec]:
    """Every f iterations as one over f times the elements (tiles f times as long); what follows
    the loop stays after the last."""
    loop = split_loop(recs)
    its = loop.iterations
    if f <= 1 or len(its) < f:
        return list(recs)
    width = len(its[0])
    epilogue, body = its[-1][width:], [it[:width] for it in its]
    n = len(body) // f * f
    out = [[scaled(r, f) for r in body[i]] for i in range(0, n, f)] + body[n:]
    out[-1] = [*out[-1], *epilogue]
    return Loop(loop.head, out).records()


def uniform(loop: Loop) -> bool:
    """Whether every iteration runs the same locations (the loop a tile change rewrites)."""
    if len(loop.iterations) < 2:
        return False
    first = [r.loc for r in loop.iterations[0]]
    return all([r.loc for r in it[:len(first)]] == first for it in loop.iterations)


def vectorised(recs: list[Rec]) -> tuple[list[Rec], Counter]:
    """Each run of scalar UB accesses (LocalTensor Get/SetValue) between two other instructions as
    one vector instruction over the elements it set; also the scalar accesses per location."""
    out: list[Rec] = []
    run: list[Rec] = []
    per_loc: Counter = Counter()

    def flush() -> None:
        if not run:
            return
        sets = [r for r in run if "SetValue" in r.api] or run
        n = len(sets)
        size = DTYPE_BYTES.get(sets[0].dtype, 2)
        out.append(replace(sets[0], pipe="V", api="Muls", elems=n, bytes=n * size, a=0, b=0,
                           w=(sets[0].w[0], n * size), r0=(sets[0].w[0], n * size), r1=(0, 0)))
        run.clear()

    for r in recs:
        if r.kind == "I" and r.pipe == "S" and r.api.startswith("LocalTensor::"):
            run.append(r)
            per_loc[r.loc] += 1
        elif r.kind == "I":
            flush()
            out.append(r)
        else:
            out.append(r)
    flush()
    return out, per_loc


def aligned(recs: list[Rec]) -> list[Rec]:
    return [replace(r, a=0) if r.kind == "I" and r.pipe in ("MTE2", "MTE3") and r.a else r for r in recs]


def contiguous(recs: list[Rec]) -> list[Rec]:
    return [replace(r, b=1) if r.kind == "I" and r.pipe in ("MTE2", "MTE3") and r.b > 1 else r for r in recs]


def spread(trace: Trace, old: int, new: int, fixed_count: bool) -> dict[int, list[Rec]]:
    """The blocks as `new` blocks share the data `old` blocks had: with a fixed tile count per
    block the tiles shrink; with a fixed tile length each block runs fewer iterations."""
    loop = split_loop(trace.blocks[min(trace.blocks)])
    n_its = len(loop.iterations)
    total = n_its * old
    if fixed_count or total < new:
        recs = [scaled(r, old / new) for r in loop.records()]
    else:
        k = -(-total // new)
        its = [*loop.iterations[:k - 1], loop.iterations[-1]] if k < n_its else loop.iterations
        recs = Loop(loop.head, its).records()
    return {b: recs for b in range(new)}


def even_split(trace: Trace, old: int, cores: int, fixed_count: bool) -> int:
    """The most blocks, up to `cores`, over which the data of `old` blocks divides evenly: each
    copy's share a whole number of 32-byte blocks (tiles shrink), or, with a loop of fixed-length
    tiles, whole iterations per block."""
    loop = split_loop(trace.blocks[min(trace.blocks)])
    copies = [r.bytes for r in loop.records() if r.kind == "I" and r.pipe in ("MTE2", "MTE3")]
    its = len(loop.iterations)
    for n in range(cores, old, -1):
        if fixed_count or its * old < n:
            if all(b * old % (n * 32) == 0 for b in copies):
                return n
        elif its * old % n == 0:
            return n
    return old


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[1] > 0 and b[1] > 0 and a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def depends(first: Rec, then: Rec) -> bool:
    """Whether `then` must wait for `first`: one writes UB the other reads or writes."""
    return (any(_overlap(first.w, x) for x in (then.w, then.r0, then.r1))
            or any(_overlap(x, then.w) for x in (first.r0, first.r1)))


# A barrier's window of instructions on either side that dependencies are looked for in (a bound
# on the pairwise check; a longer window keeps its barrier).
BARRIER_WINDOW = 512
# pipe_t of the pipes a narrower PipeBarrier<PIPE_X> names (kernel_operator's order)
PIPE_T = {"S": 0, "V": 1, "M": 2, "MTE1": 3, "MTE2": 4, "MTE3": 5}


@dataclass(frozen=True)
class Narrowing:
    """What a PipeBarrier<PIPE_ALL> can become: flag pairs (setter, waiter) between the pipes whose
    instructions across it depend on each other, and barriers on the pipes that depend on
    themselves (PipeBarrier<PIPE_V> between two vector instructions)."""

    pairs: frozenset[tuple[str, str]]
    pipes: frozenset[str]

    def records(self, at: Rec) -> list[Rec]:
        flags = [Rec(kind, "S", "SetFlag" if kind == "setflag" else "WaitFlag", "", 0, 0, at.loc,
                     EVENT_PIPES.index(pair), 0, (0, 0), (0, 0), (0, 0))
                 for pair in sorted(self.pairs) for kind in ("setflag", "waitflag")]
        return flags + [replace(at, pipe=p, a=PIPE_T[p]) for p in sorted(self.pipes)]

    def describe(self) -> str:
        parts = [f"SetFlag/WaitFlag<HardEvent::{s}_{w}>" for s, w in sorted(self.pairs)]
        return ", ".join(parts + [f"PipeBarrier<PIPE_{p}>" for p in sorted(self.pipes)])


def narrowing(before: list[Rec], after: list[Rec]) -> Narrowing | None:
    """What suffices for a barrier between `before` and `after` (its windows up to the neighbouring
    synchronisation: a queue hand-over, a flag or a barrier orders what lies beyond it); None when
    nothing depends across it (it may order GM, which the windows do not see), a pair has no
    HardEvent, or the windows are too long to check."""
    if len(before) > BARRIER_WINDOW or len(after) > BARRIER_WINDOW:
        return None
    deps = {(p.pipe, c.pipe) for p in before for c in after if depends(p, c)}
    pairs = frozenset(d for d in deps if d[0] != d[1])
    pipes = frozenset(p for p, c in deps if p == c)
    if not deps or any(pair not in EVENT_PIPES for pair in pairs) or any(p not in PIPE_T for p in pipes):
        return None
    return Narrowing(pairs, pipes)


def narrowed_barriers(recs: list[Rec]) -> tuple[list[Rec], Counter, list[tuple[int, Narrowing]]]:
    """Each PipeBarrier<PIPE_ALL> replaced by what suffices (`narrowing`); also the barriers
    replaced per location and each one's (location, narrowing)."""
    replaced: dict[int, list[Rec]] = {}
    per_loc: Counter = Counter()
    used: list[tuple[int, Narrowing]] = []
    sync = [i for i, r in enumerate(recs) if r.kind != "I"]
    for k, i in enumerate(sync):
        r = recs[i]
        if r.kind != "barrier" or r.a != PIPE_ALL:
            continue
        lo, hi = sync[k - 1] + 1 if k else 0, sync[k + 1] if k + 1 < len(sync) else len(recs)
        n = narrowing(recs[lo:i], recs[i + 1:hi])
        if n is None:
            continue
        replaced[i] = n.records(r)
        per_loc[r.loc] += 1
        used.append((r.loc, n))
    return [x for i, r in enumerate(recs) for x in replaced.get(i, [r])], per_loc, used



# ---- redundant copies: loads of GM bytes the UB still holds ----

# Scalar instructions that write GM (at an address the trace does not keep), or hand a line of the
# data cache to other cores: GlobalTensor::SetValue, the dcache bypass write, the scalar atomics.
GM_SCALAR_WRITES = ("GlobalTensor::SetValue", "WriteGmByPassDCache", "Atomic", "DataCacheCleanAndInvalid")
# Barriers that order this core's pipes only; any other (SyncAll, IBWait, ...) lets other cores' GM
# writes in, which the block's trace does not show.
CORE_BARRIERS = ("PipeBarrier", "pipe_barrier", "TPipe::Reset", "TPipe::Destroy")


@dataclass(frozen=True)
class Held:
    """A load whose bytes the UB still holds: its GM span, the UB range it wrote, its location."""

    gm: GmSpan
    ub: tuple[int, int]
    loc: int

    def serves(self, load: Rec) -> bool:
        """Whether `load`'s bytes can be read from here: the same span laid out alike, or a
        contiguous part of a contiguous load (a sub-tensor of it)."""
        gm = load.gm
        if gm is None:
            return False
        if gm == self.gm:
            return load.w[1] == self.ub[1]
        whole = self.ub[1] == self.gm.end - self.gm.addr
        return whole and self.gm.gap == 0 and (gm.gap == 0 or gm.count == 1) and self.gm.covers(gm)


def _writes_unseen_gm(r: Rec) -> bool:
    """Whether `r` may change GM bytes the trace gives no span for: a copy out without one, a
    Fixpipe, a scalar GM write, or a synchronisation with other cores (their writes)."""
    if r.kind == "xwait" or (r.kind == "barrier" and r.api not in CORE_BARRIERS):
        return True
    if r.kind != "I":
        return False
    return ((r.pipe == "MTE3" and r.gm is None) or r.pipe == "FIX"
            or (r.pipe == "S" and r.api.startswith(GM_SCALAR_WRITES)))


def redundant_loads(recs: list[Rec], ub_bytes: int) -> list[tuple[int, Held]]:
    """The GM->UB copies (index, the earlier load that serves it) whose bytes an earlier copy of
    the block loaded into UB which still holds them: no record wrote that UB range since, its
    queue buffer was not freed, and nothing wrote those GM bytes (`_writes_unseen_gm` forgets all)."""
    held: list[Held] = []
    slots: dict[tuple[int, int], tuple[int, int]] = {}  # (queue, slot) -> its UB range, from its AllocTensor
    found: list[tuple[int, Held]] = []
    for i, r in enumerate(recs):
        if _writes_unseen_gm(r):
            held.clear()
            continue
        if r.kind == "alloc":
            slots[(r.a, r.b)] = r.w
        gone = slots.get((r.a, r.b), (0, 0)) if r.kind == "free" else r.w
        load = r.gm if r.kind == "I" and r.pipe == "MTE2" and 0 < r.w[1] and sum(r.w) <= ub_bytes else None
        source = next((h for h in held if h.serves(r)), None) if load else None
        if source is not None:
            found.append((i, source))
        if gone[1] and held:
            # what the record overwrote is gone, except a load's own bytes loaded again in place
            held = [h for h in held if not _overlap(h.ub, gone) or (h.ub == r.w and h.gm == load)]
        if r.gm is not None and r.pipe == "MTE3" and held:
            written = r.gm
            held = [h for h in held if not h.gm.overlaps(written)]
        if load is not None and source is None:
            held.append(Held(load, r.w, r.loc))
    return found


# ---- where a person would make the change ----

@dataclass(frozen=True)
class Site:
    """A value to change at a line: `name` (a constant or keyword), its current value."""

    file: str
    line: int
    name: str
    value: int


def _read(path: Path | None) -> str:
    try:
        return path.read_text(errors="replace") if path else ""
    except OSError:
        return ""


def _line_of(text: str, pattern: str) -> int:
    m = re.search(pattern, text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else 0


def _int_of(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def kernel_file(trace: Trace, default: Path) -> Path:
    """The source most of the trace's instructions come from (a program's kernel file), else `default`."""
    files = Counter(trace.where(r.loc)[0] for recs in trace.blocks.values() for r in recs if r.kind == "I")
    files.pop("", None)
    return Path(files.most_common(1)[0][0]) if files else default


def _python_host(host: Path | None) -> bool:
    """host.py (a task's) rather than a program's C++ host code."""
    return host is not None and host.suffix == ".py"


_CPP_INT = r"(?:\((?:u?int\d+_t|size_t|int|unsigned)\)\s*)?(\d+)[uUlL]*"


def cpp_assignment(host: Path | None, pattern: str, value: int | None = None) -> Site | None:
    """The first C++ `NAME = <int>;` (a declaration or a field, `tiling.tileNum = 8;`) whose name
    fully matches `pattern`, and whose value is `value` when given."""
    text = _read(host)
    for m in re.finditer(rf"(?m)(?:\.|->|\b)(\w+)\s*(?:=|\{{)\s*{_CPP_INT}\s*\}}?\s*;", text):
        if re.fullmatch(pattern, m.group(1)) and (value is None or int(m.group(2)) == value):
            return Site(str(host), text.count("\n", 0, m.start(2)) + 1, m.group(1), int(m.group(2)))
    return None


def cpp_block_dim(host: Path | None, block_dim: int) -> Site | None:
    """A program's block count: the literal of its `<<<N, ...>>>` launch, or the variable the launch
    names, where it is given its value."""
    text = _read(host)
    for m in re.finditer(r"<<<\s*(\w+)\s*,", text):
        word = m.group(1)
        if word.isdigit() and int(word) == block_dim:
            return Site(str(host), text.count("\n", 0, m.start(1)) + 1, "blockDim", block_dim)
        site = cpp_assignment(host, re.escape(word), block_dim)
        if site is not None:
            return site
    return None


def host_keyword(host: Path | None, pattern: str) -> Site | None:
    """The `Launch(...)`/`Tiling(...)` keyword whose name fully matches `pattern`, at the line of
    its int literal, or of the module-level constant it names; in C++ host code, the assignment
    of a name matching `pattern`."""
    if host is not None and not _python_host(host):
        return cpp_assignment(host, pattern)
    try:
        tree = ast.parse(_read(host))
    except SyntaxError:
        return None
    consts = {t.id: (stmt, v) for stmt in tree.body if isinstance(stmt, ast.Assign)
              for t in stmt.targets if isinstance(t, ast.Name) and (v := _int_of(stmt.value)) is not None}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.keyword) and node.arg and re.fullmatch(pattern, node.arg)):
            continue
        v = _int_of(node.value)
        if v is not None:
            return Site(str(host), node.value.lineno, node.arg, v)
        if isinstance(node.value, ast.Name) and node.value.id in consts:
            stmt, v = consts[node.value.id]
            return Site(str(host), stmt.lineno, node.value.id, v)
    return None


def host_constant(host: Path | None, pattern: str, value: int) -> Site | None:
    """A module-level constant of host.py whose name matches `pattern` and whose value is `value`
    (`MAX_CORES = 2` when the launch computes its block_dim from it)."""
    try:
        tree = ast.parse(_read(host))
    except SyntaxError:
        return None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and _int_of(stmt.value) == value:
            for t in stmt.targets:
                if isinstance(t, ast.Name) and re.search(pattern, t.id):
                    return Site(str(host), stmt.lineno, t.id, value)
    return None


def tile_site(inp: AdviceInput) -> Site | None:
    """A tile length constant (`*TILE*` in the kernel or host.py), else the host's tile count."""
    text = _read(inp.kernel)
    m = re.search(r"(?m)^\s*(?:static\s+)?(?:constexpr|const)\s+\w+\s+(\w*TILE\w*)\s*=\s*(\d+)\s*;", text)
    if m:
        return Site(str(inp.kernel), text.count("\n", 0, m.start(1)) + 1, m.group(1), int(m.group(2)))
    host = _read(inp.host)
    m = re.search(r"(?m)^(\w*TILE\w*)\s*=\s*(\d+)\s*$", host) if _python_host(inp.host) else None
    if m and "NUM" not in m.group(1):
        return Site(str(inp.host), host.count("\n", 0, m.start()) + 1, m.group(1), int(m.group(2)))
    return host_keyword(inp.host, r"tile(Num|Count|s)|TILE_NUM")


# ---- the findings ----

@dataclass(frozen=True)
class Base:
    inp: AdviceInput
    us: float

    def finding(self, code: AdviceCode, file: str, line: int, after_us: float, change: str, cause: str
                ) -> AdviceFinding | None:
        saving = self.us - after_us
        if saving < MIN_SAVING_SHARE * self.us or not file:
            return None
        # on the CPU every saving is the cost model's figure (a device re-measures it)
        message = f"{cause}; {change} would save {labelled(f'~{saving:.2f} us of {self.us:.2f} us', True)}"
        return AdviceFinding(code=code, message=message, file=file, line=max(line, 1), saving_us=round(saving, 4),
                             before_us=round(self.us, 4), after_us=round(after_us, 4), change=change)

    def where(self, loc: int) -> tuple[str, int]:
        return self.inp.trace.where(loc)


def single_buffer_finding(base: Base) -> AdviceFinding | None:
    trace, inp = base.inp.trace, base.inp
    queues = set.intersection(*(single_buffered_queues(r) for r in trace.blocks.values())) if trace.blocks else set()
    if not queues:
        return None
    text = _read(inp.kernel)
    split = bool(re.search(r"/\s*BUFFER_NUM\b", text))
    after = _us(trace, _map_blocks(trace, lambda r: double_buffered(r, queues, split)), inp)
    line = _line_of(text, r"^[ \t]*(?:(?:static\s+)?(?:constexpr|const)\s+\w+\s+BUFFER_NUM\s*=\s*1\s*;|#\s*define\s+"
                          r"BUFFER_NUM\s+1\b)")
    file = str(inp.kernel)
    if not line:
        first = next(r for r in trace.blocks[min(trace.blocks)] if r.kind == "alloc" and r.a in queues)
        file, line = base.where(first.loc)
    change = "double buffering (BUFFER_NUM 1 -> 2)" if split or line else "double buffering (a queue depth of 2)"
    return base.finding("perf-single-buffer", file, line, after, change,
                        f"{len(queues)} queue(s) have one buffer: copies in, computation and copies out never overlap")


def few_cores_finding(base: Base) -> AdviceFinding | None:
    inp = base.inp
    kinds = {kind for kind, _ in inp.trace.cores.values()} or {"AIV"}
    if len(kinds) > 1:
        return None  # a mixed kernel: its blocks are AI Cores of one AIC and two AIVs, not one unit each
    # a cube kernel's blocks are AI Cores (one cube unit each): 24 on 910B, not the 48 vector cores
    unit = "AI Cores" if kinds == {"AIC"} else "vector cores"
    cores = chip_cores = inp.chip.cube_cores if kinds == {"AIC"} else inp.chip.vector_cores
    if inp.block_dim >= cores or not inp.trace.blocks or len(inp.trace.blocks) != inp.block_dim:
        return None
    if not re.search(r"\bGetBlock(Idx|Num)\b|\bblock_(idx|num)\b", _read(inp.kernel)):
        return None  # every block runs the whole data: more blocks would repeat the work, not share it
    if len({frozenset((r.kind, r.pipe, r.api) for r in recs) for recs in inp.trace.blocks.values()}) > 1:
        return None  # the blocks play different parts (block 0 writes, block 1 polls): not a data split
    site = (host_keyword(inp.host, "block_dim") or host_constant(inp.host, r"CORE|BLOCK_DIM|NUM_BLOCKS", inp.block_dim)
            if _python_host(inp.host) else cpp_block_dim(inp.host, inp.block_dim))
    if site is None:
        return None
    fixed_count = host_keyword(inp.host, r"tile(Num|Count|s)") is not None
    scope = f"all of {inp.chip.name}'s {unit}"
    if not _python_host(inp.host):
        # a program's host splits the data its own way (`totalLength / GetBlockNum()`), unseen here:
        # the most cores that split every copy into whole 32-byte blocks
        cores = even_split(inp.trace, inp.block_dim, cores, fixed_count)
        scope = f"the most {unit} that split every copy into whole 32-byte blocks"
        if cores <= inp.block_dim:
            return None
    after = _us(inp.trace, spread(inp.trace, inp.block_dim, cores, fixed_count), inp, cores)
    return base.finding("perf-few-cores", site.file, site.line, after, f"{site.name} {site.value} -> {cores} ({scope})",
                        f"{inp.block_dim} block(s) on a chip of {chip_cores} {unit}: the other cores stay idle")


def saturating_bytes(inp: AdviceInput) -> int:
    """The load length from which a copy in reaches SATURATION_SHARE of the large-block bandwidth:
    the public model's large-block case, or longer if its head still weighs more."""
    c = inp.costs
    active = max(1, min(inp.block_dim, inp.chip.vector_cores))
    rate = min(c.load.a + c.load.b / active, inp.chip.hbm_gbps / inp.chip.clock_ghz / active)
    # stream / (stream + h) >= share  <=>  bytes >= share / (1 - share) * h * rate
    return max(c.small_load_below_bytes, round(SATURATION_SHARE / (1 - SATURATION_SHARE) * c.load.h * rate))


def _is_count(name: str) -> bool:
    """Whether a tiling value counts tiles (tileNum, TILE_NUM) rather than giving their length."""
    return bool(re.search(r"num|count|tiles$", name, re.I))


def small_tiles_finding(base: Base) -> AdviceFinding | None:
    inp = base.inp
    loops = {b: split_loop(r) for b, r in inp.trace.blocks.items()}
    if not loops or not all(uniform(lp) for lp in loops.values()):
        return None
    loads = [r for r in loops[min(loops)].iterations[0] if r.kind == "I" and r.pipe == "MTE2"]
    site = tile_site(inp)
    if not loads or site is None:
        return None
    biggest = max(r.bytes for r in loads)
    target = saturating_bytes(inp)
    ub_top = max((x[0] + x[1] for r in inp.trace.blocks[min(loops)] for x in (r.w, r.r0, r.r1) if x[1]), default=0)
    its = min(len(lp.iterations) for lp in loops.values())
    count = _is_count(site.name)
    # each power of two up to the saturating length that the loop, the UB and a tile count allow;
    # the best of them (a single tile loses the overlap of copies and computation)
    best: tuple[float, int] = (base.us, 1)
    f = 2
    ub = inp.chip.ub_bytes - inp.chip.ub_reserved_bytes
    while biggest * f // 2 < target and f <= its and ub_top * f <= ub and (not count or f <= site.value):
        best = min(best, (_us(inp.trace, _map_blocks(inp.trace, lambda r, f=f: merged(r, f)), inp), f))
        f *= 2
    after, f = best
    if f == 1:
        return None
    new = max(1, site.value // f) if count else site.value * f
    return base.finding("perf-small-tiles", site.file, site.line, after, f"{site.name} {site.value} -> {new} "
                        f"({biggest * f} bytes per copy)",
                        f"copies in of {biggest} bytes are too short to keep GM busy (a copy reaches 90% of its "
                        f"bandwidth from about {target} bytes)")


def scalar_loop_finding(base: Base) -> AdviceFinding | None:
    trace, inp = base.inp.trace, base.inp
    per_loc: Counter = Counter()
    blocks = {}
    for b, recs in trace.blocks.items():
        blocks[b], n = vectorised(recs)
        per_loc.update(n)
    if not per_loc:
        return None
    loc, _ = per_loc.most_common(1)[0]
    file, line = base.where(loc)
    after = _us(trace, blocks, inp)
    total = sum(per_loc.values())
    return base.finding("perf-scalar-loop", file, line, after, "one vector instruction per tile instead of the "
                        "element loop", f"{total} scalar LocalTensor GetValue/SetValue calls keep the scalar unit busy "
                        "one element at a time")


def _gm_finding(base: Base, code: AdviceCode, bad: Callable[[Rec], bool], fix: Callable[[list[Rec]], list[Rec]],
                change: str, cause: str, site: Callable[[Rec], tuple[str, int, str] | None] | None = None
                ) -> AdviceFinding | None:
    """A finding on the copies `bad` picks, saving what `fix` makes of them; at the copy run most,
    or where `site` says its cause is set (file, line, change)."""
    trace = base.inp.trace
    picked = [r for recs in trace.blocks.values() for r in recs
              if r.kind == "I" and r.pipe in ("MTE2", "MTE3") and bad(r)]
    if not picked:
        return None
    per_loc = Counter(r.loc for r in picked)
    worst = next(r for r in picked if r.loc == per_loc.most_common(1)[0][0])
    file, line = base.where(worst.loc)
    at = site(worst) if site else None
    if at is not None:
        file, line, change = at
    after = _us(trace, _map_blocks(trace, fix), base.inp)
    return base.finding(code, file, line, after, change, cause.format(n=len(picked)))


def unaligned_finding(base: Base) -> AdviceFinding | None:
    def tile_length(r: Rec) -> tuple[str, int, str] | None:
        """A tile whose length in bytes is off 512 moves every following copy off: at its length."""
        site, size = tile_site(base.inp), DTYPE_BYTES.get(r.dtype, 2)
        if site is None or _is_count(site.name) or site.value * size != r.bytes or r.bytes % 512 == 0:
            return None
        fixed = r.bytes // 512 * 512 // size
        return site.file, site.line, f"{site.name} {site.value} -> {fixed} (a multiple of 512 bytes)"

    return _gm_finding(base, "perf-unaligned-gm", lambda r: r.a != 0, aligned,
                       "GM addresses aligned to 512 bytes",
                       "{n} copies start off a 512-byte GM boundary and reach about 70% of the bandwidth", tile_length)


def fragmented_finding(base: Base) -> AdviceFinding | None:
    # A cube kernel's loads reorder a matrix into fractals (ND to NZ): their bursts are the layout's,
    # not a choice one contiguous copy could replace.
    if any(r.pipe in ("MTE1", "M", "FIX") for recs in base.inp.trace.blocks.values() for r in recs):
        return None
    return _gm_finding(base, "perf-fragmented-gm", lambda r: r.b > 1 and r.bytes // r.b < 512, contiguous,
                       "one contiguous burst per copy",
                       "{n} copies move GM in bursts under 512 bytes, each paying its own start")


def bank_conflict_finding(base: Base) -> AdviceFinding | None:
    """Vector instructions whose operands collide in UB banks (cost_model.bank_factor): the saving
    is the estimate with every such instruction conflict-free."""
    inp = base.inp
    per_loc = Counter(r.loc for recs in inp.trace.blocks.values() for r in recs
                      if r.kind == "I" and r.pipe == "V" and bank_factor(r, inp.costs) > 1.0)
    if not per_loc:
        return None
    free = inp.costs.model_copy(update={"bank_read_read_factor": 1.0, "bank_read_write_factor": 1.0})
    after = _us(inp.trace, inp.trace.blocks, replace(inp, costs=free))
    file, line = base.where(per_loc.most_common(1)[0][0])
    return base.finding("perf-bank-conflict", file, line, after,
                        "buffers placed apart (the second source 256 bytes off the first modulo 512; the destination "
                        "in another 64 KB bank or exactly over a source)",
                        f"{sum(per_loc.values())} vector instructions have operands colliding in UB banks "
                        "(docs/cost-model.md)")


def strong_barrier_finding(base: Base) -> AdviceFinding | None:
    """PipeBarrier<PIPE_ALL> where flag pairs between the dependent pipes, or a barrier on one pipe,
    suffice (CANN best practice: synchronise only the pipes that share data)."""
    trace, inp = base.inp.trace, base.inp
    per_loc: Counter = Counter()
    used: Counter = Counter()
    blocks = {}
    for b, recs in trace.blocks.items():
        blocks[b], n, narrowings = narrowed_barriers(recs)
        per_loc.update(n)
        used.update(narrowings)
    if not per_loc:
        return None
    loc = per_loc.most_common(1)[0][0]
    file, line = base.where(loc)
    change = Counter(n.describe() for at, n in used if at == loc).most_common(1)[0][0]
    return base.finding("perf-strong-barrier", file, line, _us(trace, blocks, inp),
                        f"{change} instead of PipeBarrier<PIPE_ALL>",
                        f"{sum(per_loc.values())} PipeBarrier<PIPE_ALL> wait for every pipe where only the pipes "
                        "sharing data need to wait")



def redundant_copy_finding(base: Base) -> AdviceFinding | None:
    """Copies in of GM bytes that an earlier copy of the block put in UB and that are still there
    (`redundant_loads`): the saving of the trace without them, at the one run most."""
    trace, inp = base.inp.trace, base.inp
    per_loc: Counter = Counter()
    sources: Counter = Counter()
    blocks = {}
    for b, recs in trace.blocks.items():
        found = redundant_loads(recs, inp.chip.ub_bytes)
        per_loc.update(recs[i].loc for i, _ in found)
        sources.update((recs[i].loc, h.loc) for i, h in found)
        dropped = {i for i, _ in found}
        blocks[b] = [r for i, r in enumerate(recs) if i not in dropped]
    if not per_loc:
        return None
    loc = per_loc.most_common(1)[0][0]
    file, line = base.where(loc)
    first = next(h for (at, h), _ in sources.most_common() if at == loc)
    first_file, first_line = base.where(first)
    where = f"line {first_line}" if first_file == file else f"{Path(first_file).name}:{first_line}"
    return base.finding("perf-redundant-copy", file, line, _us(trace, blocks, inp),
                        f"reading the tensor filled at {where} instead of copying again",
                        f"{sum(per_loc.values())} copies in load GM bytes the UB already holds (copied in at "
                        f"{where}, neither the buffer nor those GM bytes written since)")
# ---- reductions done the slow way (asc-devkit's reduction best practice, docs/advisor.md) ----

# The reductions the fast form rewrites: CANN 8's names (CANN 9 renames them ReduceRepeat and
# ReduceDataBlock, whose traced name does not say SUM from MAX).
WHOLE_REDUCE_SUM = "WholeReduceSum"
BLOCK_REDUCE_SUM = "BlockReduceSum"
# BlockReduceSum writes one sum per 32-byte block: eight per 256-byte repeat.
BLOCKS_PER_REPEAT = 8


def _slow_pair(first: Rec, second: Rec) -> bool:
    """Whether two consecutive vector instructions are a WholeReduceSum over 2 or more full,
    contiguous repeats whose sums (one per repeat, side by side) a second WholeReduceSum of one
    repeat reduces to one value, with few enough repeats that their block sums still fit one
    repeat (float: 2 KB, half: 4 KB; beyond that two WholeReduceSum passes are the faster form)."""
    if first.api != WHOLE_REDUCE_SUM or second.api != WHOLE_REDUCE_SUM or first.dtype != second.dtype:
        return False
    size = DTYPE_BYTES.get(first.dtype, 0)
    if size not in (2, 4):
        return False
    per_repeat = 256 // size
    repeats = first.bytes // 256
    return (2 <= repeats <= per_repeat // BLOCKS_PER_REPEAT and first.elems == repeats * per_repeat
            and first.r0[1] == first.bytes and first.w[1] == repeats * size
            and second.elems == repeats and second.bytes == 256 and _overlap(second.r0, first.w))


def block_then_whole(recs: list[Rec]) -> tuple[list[Rec], Counter]:
    """Each slow pair (`_slow_pair`) as BlockReduceSum over the same repeats (its block sums side by
    side where the repeat sums were) then the WholeReduceSum over those block sums; also the pairs
    rewritten per location of their first WholeReduceSum."""
    out = list(recs)
    per_loc: Counter = Counter()
    vec = [i for i, r in enumerate(recs) if r.kind == "I" and r.pipe == "V"]
    for i, j in zip(vec, vec[1:], strict=False):
        first, second = recs[i], recs[j]
        if out[i] is not first or not _slow_pair(first, second):
            continue  # `first` was the second of the pair before
        sums = first.bytes // 256 * BLOCKS_PER_REPEAT
        span = (first.w[0], sums * DTYPE_BYTES[first.dtype])
        out[i] = replace(first, api=BLOCK_REDUCE_SUM, w=span)
        out[j] = replace(second, elems=sums, r0=span)
        per_loc[first.loc] += 1
    return out, per_loc


def slow_reduction_finding(base: Base) -> AdviceFinding | None:
    """Two chained WholeReduceSum passes where BlockReduceSum then WholeReduceSum does the job: the
    per-block instruction costs less than the per-repeat one (asc-devkit's reduction best practice:
    256 floats, BlockReduceSum + WholeReduceSum 8.44 us against two WholeReduceSum 13 us over 100
    loops). The saving re-schedules the trace with the fast form's instructions, each costed as the
    cost model costs that instruction."""
    trace = base.inp.trace
    rewritten = {b: block_then_whole(recs) for b, recs in trace.blocks.items()}
    per_loc = sum((n for _, n in rewritten.values()), Counter())
    if not per_loc:
        return None
    file, line = base.where(per_loc.most_common(1)[0][0])
    after = _us(trace, {b: recs for b, (recs, _) in rewritten.items()}, base.inp)
    return base.finding("perf-slow-reduction", file, line, after,
                        "BlockReduceSum then one WholeReduceSum instead of two WholeReduceSum passes",
                        f"{sum(per_loc.values())} sums take two WholeReduceSum passes where the faster "
                        "BlockReduceSum can take the first")


FINDERS: tuple[Callable[[Base], AdviceFinding | None], ...] = (
    single_buffer_finding, few_cores_finding, small_tiles_finding, scalar_loop_finding, unaligned_finding,
    fragmented_finding, bank_conflict_finding, strong_barrier_finding, redundant_copy_finding,
    slow_reduction_finding)


def advise(inp: AdviceInput) -> list[AdviceFinding]:
    """The findings for one evaluated launch, largest saving first."""
    if not inp.trace.blocks or inp.trace.truncated:
        return []
    base = Base(inp, _us(inp.trace, inp.trace.blocks, inp))
    found = [f for fn in FINDERS if (f := fn(base)) is not None]
    return sorted(found, key=lambda f: -f.saving_us)


def beside_device(findings: list[AdviceFinding], measured_us: float) -> list[AdviceFinding]:
    """Findings of the emulator's trace given with a device's verdict (the device records no
    per-instruction trace): each message says its saving is the CPU model's, not the device's, and
    what the device measured. Their figures stay model figures (`estimated` True)."""
    note = (f"; on the device: {labelled(f'{measured_us:.2f} us', False)} (the saving is the CPU model's, from the "
            "emulator's trace of this kernel)")
    return [f.model_copy(update={"message": f.message + note}) for f in findings]
