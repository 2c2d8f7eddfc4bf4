"""The pipeline cost model: a discrete-event schedule of each block's trace over the pipes,
and, from the same happens-before graph, the missing-sync check (docs/profile.md, docs/cost-model.md).

Within a block the scalar unit issues API calls in program order (each charged on S); each
instruction runs on its pipe (S, V, MTE2, MTE3, ...), in order within the pipe, in parallel across
pipes, held back by the synchronisation the program expresses: queue EnQue/DeQue and AllocTensor/
FreeTensor pairs, SetFlag/WaitFlag, PipeBarrier. An instruction costs what Huawei's public per-API
model for Atlas A2 says (costs.py): vector APIs k*N + b, GM transfers bytes / (a + b / active
cores) + h by their public cases, each pipe's head on its first instruction, and the op head once;
a read and a write at once share the core's part of the chip's GM bandwidth (CANN's profiling guide);
a read of bytes the L2 cache holds streams at the L2 rate (l2cache.py replays the launch's GM accesses).
Across blocks: blocks beyond the chip's vector cores run in waves on the same cores; the kernel
takes as long as its slowest core, and never less than the roofline bound.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from typing import Literal

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.chips import ChipProfile, local_memories
from sage_npu.npu_eval.costs import DTYPE_BYTES, CostTable, Transfer
from sage_npu.npu_eval.l2cache import L2Result, replay
from sage_npu.npu_eval.report import TimeCauseName
from sage_npu.npu_eval.trace import Rec, Trace

PIPES = protocol.PIPES
_PIX = {p: i for i, p in enumerate(PIPES)}
_S = _PIX["S"]
_MTE2, _MTE3 = _PIX["MTE2"], _PIX["MTE3"]
# Flags name their pipes: HardEvent order of utils/common_types.h -> (setter, waiter).
_EVENT_PIPES = protocol.EVENT_PIPES
_PIPE_ALL = protocol.PIPE_ALL
LATENCY_BOUND_BELOW = 0.5  # busiest pipe's share of the time under which a kernel is latency-bound


# What each `Timing.bottleneck` value means and what to try, for every surface that prints one
# (docs/profile.md explains them at length).
BOTTLENECK_ADVICE = {
    "latency": "no pipe is busy even half of the time: the pipes wait on each other (a copy waits for the "
               "computation before it, or the tiles are too small to keep a pipe busy). Overlap them: double "
               "buffering (queue depth 2) so tile i+1 is copied in while tile i is computed, bigger tiles, "
               "more blocks (up to the chip's vector cores)",
    "HBM": "memory-bound: the bytes moved to and from global memory take longer than anything else at the "
           "chip's bandwidth. Move fewer bytes (fuse steps, keep data in the Unified Buffer, narrower dtypes); "
           "more blocks do not help past the bandwidth",
    "MTE2": "copies in (global memory -> Unified Buffer, or -> L1 in a cube kernel) keep their pipe the busiest: "
            "fewer, longer, 32-byte aligned DataCopy calls, double buffering to hide them behind the computation, "
            "and in a matmul bigger base blocks so each loaded byte feeds more Mmads",
    "MTE3": "copies out (Unified Buffer -> global memory) keep their pipe the busiest: fewer, longer, 32-byte "
            "aligned DataCopy calls, and double buffering to hide them behind the computation",
    "V": "vector computation is the busiest: fewer vector instructions (fuse steps, full 256-byte repeats "
         "instead of short counts), a narrower dtype where the precision allows",
    "S": "the scalar unit is the busiest: per-element GetValue/SetValue or scalar loops; use vector APIs and "
         "move index arithmetic out of the loops. In a Matmul kernel it is the API's own work (each Init, K step "
         "and GM -> L1 copy, and in a MIX kernel each call's message to the AIC): a constant tiling "
         "(GetMatmulApiTiling), pure Cube mode (ASCENDC_CUBE_ONLY) when the AIVs do no vector work, fewer calls "
         "(IterateAll, IBSHARE) and larger L1 steps (stepKa, stepKb) cut it",
    "MTE1": "L1 -> L0 loads (LoadData) keep their pipe the busiest: reuse what L0A/L0B hold across more Mmads "
            "(a bigger baseK, or keep A in L0A while B moves), and double-buffer L0A/L0B so loads overlap the cube",
    "M": "the cube (Mmad) is the busiest: the kernel is compute-bound, which is where a matmul should be; fewer "
         "padded fractals (shapes that are multiples of 16) and int8 or half inputs go faster",
    "FIX": "Fixpipe (L0C -> GM/L1) keeps its pipe the busiest: write bigger blocks (larger baseM/baseN) less "
           "often, accumulate more of K in L0C before each Fixpipe, and a narrower output dtype",
    "none": "nothing was traced, so nothing was busy",
}


_CROSS_PASSES = 64  # at most this many passes over a mixed launch's timelines (cross-core waits)
_RECENT = 4096  # accesses per pipe the missing-sync check keeps (the newest)


def bottleneck_advice(bottleneck: str) -> str:
    """What the bottleneck means and what to try, in a sentence or two."""
    return BOTTLENECK_ADVICE.get(bottleneck, "")


@dataclass
class SyncHazard:
    block: int
    loc: int         # the access that may run too early
    other_loc: int   # the unordered access on the other pipe
    pipe: str
    other_pipe: str
    kind: str        # "RAW", "WAR" or "WAW"
    api: str
    other_api: str
    addr: int = -1   # where in the block's local memories the two accesses overlap (-1: unknown)


@dataclass
class TimedEvent:
    block: int
    pipe: str
    api: str
    loc: int
    start: float  # cycles from the block's start
    end: float
    bytes: int


@dataclass
class BlockSchedule:
    block: int
    cycles: float
    busy: dict[str, float]
    line_cycles: dict[int, float]
    gm_bytes: int
    vec_cycles: float
    events: list[TimedEvent] = field(default_factory=list)
    # Of each pipe's busy cycles: its head, UB bank conflicts, and the GM bandwidth shared (with the
    # other cores, and between a read and a write at once).
    heads: dict[str, float] = field(default_factory=dict)
    bank: dict[str, float] = field(default_factory=dict)
    share: dict[str, float] = field(default_factory=dict)
    # cross-core synchronisation id -> when this block's set of it was done (cycles from launch start)
    xsets: dict[int, float] = field(default_factory=dict)
    # each cross-core wait that held this block: (id, when it started holding, when the block went on)
    xheld: list[tuple[int, float, float]] = field(default_factory=list)
    l2_saved: float = 0.0  # MTE2 cycles the L2 hits saved (each hit read's cost at the HBM rate less its own)


@dataclass(frozen=True)
class Rates:
    """Per-core GM rates in bytes per cycle (a + b / active cores, capped by the core's share of HBM),
    at the launch's active cores and for one core alone (the difference is the bandwidth share)."""

    active: int
    load: float
    load_small: float
    store: float
    load_alone: float
    load_small_alone: float
    store_alone: float
    # the core's share of the chip's GM bandwidth, which its reads and writes running at once share
    core_gm: float = float("inf")
    # GM -> L1 copies (a cube core's MTE2 into L1): the core's share of the chip's HBM and L2 read rates,
    # bytes a cycle (0: such copies take the GM -> UB figures), and the L1 window of the local addresses
    l1_hbm_share: float = 0.0
    l1_l2_share: float = 0.0
    l1_window: tuple[int, int] = (0, 0)
    l1_alone: float = 0.0  # one core's GM -> L1 rate from HBM, large copies (0: the GM -> UB figures)

    @property
    def rw_can_share(self) -> bool:
        """Whether a read and a write at their fastest rates together pass the core's GM share (if
        not, gm_share_extra is always 0 and the schedule skips it)."""
        return max(self.load, self.load_small) + self.store > self.core_gm
    # (api, dtype) -> (k, b, element size, passes: whether k, b are a WholeReduce pass's): looked up once
    vec_rows: dict[tuple[str, str], tuple[float, float, int, bool]] = field(default_factory=dict, compare=False)


def transfer_rates(costs: CostTable, active: int, hbm_bytes_per_cycle: float) -> Rates:
    def rate(t: Transfer, n: int) -> float:
        return min(t.a + t.b / n, hbm_bytes_per_cycle / n)

    return Rates(active, rate(costs.load, active), rate(costs.load_small, active), rate(costs.store, active),
                 rate(costs.load, 1), rate(costs.load_small, 1), rate(costs.store, 1),
                 hbm_bytes_per_cycle / active if costs.read_write_sharing else float("inf"))


def cube_load_rates(rates: Rates, costs: CostTable, chip: ChipProfile) -> Rates:
    """`rates` with the GM -> L1 shares of the chip's cube figures (CostTable.cube_load_*) at its
    active cores, and the L1 window of the emulator's local array (chips.local_memories)."""
    if not costs.cube_load_hbm_gbps or not costs.cube_load_l2_gbps:
        return rates
    windows = dict(local_memories(chip))
    per_core = rates.active * chip.clock_ghz
    return replace(rates, l1_hbm_share=costs.cube_load_hbm_gbps / per_core,
                   l1_l2_share=costs.cube_load_l2_gbps / per_core, l1_window=(windows["L1"], windows["L0A"]),
                   l1_alone=costs.cube_load_core_bytes_per_cycle or 0.0)


def gm_share_extra(overlap: float, rate: float, other_rate: float, core_gm: float) -> float:
    """Cycles a transfer streaming at `rate` bytes per cycle loses to one in the other direction at
    `other_rate` that it overlaps for `overlap` cycles. Reads and writes running at once share the
    chip's GM bandwidth: CANN's profiling guide (分析性能数据.md:10) times MTE2 and MTE3 moving data
    together as (MTE2 bytes + MTE3 bytes) / GM bandwidth. A core's share of that bandwidth is
    `core_gm`; within it both run at their own rates, past it the window takes the bytes over the
    share, and the later transfer (this one) is lengthened by the difference."""
    excess = (rate + other_rate) / core_gm - 1.0
    return overlap * excess if excess > 0 else 0.0


def _shared_gm_extra(start: float, cycles: float, rate: float, other: deque, core_gm: float) -> float:
    """gm_share_extra over the other direction's recent transfers (start, end, rate) that overlap."""
    extra = 0.0
    for b0, e, other_rate in other:
        overlap = min(e, start + cycles) - max(b0, start)
        if overlap > 0:
            extra += gm_share_extra(overlap, rate, other_rate, core_gm)
    return extra


def instr_cycles(r: Rec, costs: CostTable, rates: Rates) -> float:
    """Cycles one traced instruction occupies its pipe (pipe heads aside)."""
    return instr_cost(r, costs, rates)[0]


def instr_cost(r: Rec, costs: CostTable, rates: Rates, l2: float = 0.0) -> tuple[float, float, float]:
    """(cycles on its pipe, of which UB bank conflicts, of which the bandwidth other cores take); the
    sharing between a read and a write at once is added by the schedule (gm_share_extra). `l2`: the
    share of a GM read's bytes found in the L2 cache."""
    if r.pipe == "V":
        return vec_cost(r, costs, rates.vec_rows)
    if r.pipe == "MTE2":
        return load_cost(r, costs, rates, l2)
    if r.pipe == "MTE3":
        return store_cost(r, costs, rates)
    if r.pipe == "S":
        return scalar_cost(r, costs), 0.0, 0.0
    if r.pipe in ("MTE1", "M", "FIX"):
        return costs.cube.cycles(r.pipe, r.elems, r.bytes), 0.0, 0.0
    return costs.vec_head_cycles + r.bytes / 256.0, 0.0, 0.0


def vec_cost(r: Rec, costs: CostTable, rows: dict[tuple[str, str], tuple[float, float, int, bool]] | None = None
             ) -> tuple[float, float, float]:
    """k * N + b of the public per-API model (N: the elements the instruction spans), the per-element
    part slowed by UB bank conflicts; reductions to one value as the WholeReduce passes they issue.
    `rows` caches the table lookups per (api, dtype)."""
    row = rows.get((r.api, r.dtype)) if rows is not None else None
    if row is None:
        base = costs.vec_passes.get(r.api)
        c = costs.vec_cost(base or r.api, r.dtype)
        row = (c.k, c.b, DTYPE_BYTES.get(r.dtype, 2), base is not None)
        if rows is not None:
            rows[(r.api, r.dtype)] = row
    k, b, size, passes = row
    n = max(r.elems, r.bytes // size)
    if passes:
        per_repeat, total = max(1, 256 // size), 0.0
        while True:
            total += k * n + b
            if n <= per_repeat:
                return total, 0.0, 0.0
            n = -(-n // per_repeat)
    work = k * n
    f = bank_factor(r, costs)
    return work * f + b, work * (f - 1.0), 0.0


def bank_factor(r: Rec, costs: CostTable) -> float:
    """How much longer a vector instruction's per-element work takes from UB bank conflicts (2201: 48
    banks of 4 KB in 16 groups; address bits 17:16 the bank, 8:5 the group). Two sources starting in
    the same group collide on every block (read-read); a source and the destination in the same bank
    with their group orders shifted collide (read-write; the same start group is free)."""
    f = 1.0
    (s0, n0), (s1, n1), (d, nd) = r.r0, r.r1, r.w
    if n0 and n1 and (s0 - s1) % 512 == 0:
        f += costs.bank_read_read_factor - 1.0
    if nd:
        for s, n in ((s0, n0), (s1, n1)):
            if n and s >> 16 == d >> 16 and ((d - s) >> 5) % 16 not in (0, 8):
                f += costs.bank_read_write_factor - 1.0
                break
    return f


def stride_mod(r: Rec, costs: CostTable) -> float:
    """The stride term's stride mod 256: the copy's recorded GM row stride when the cost table says so
    and the trace has it, else the assumed mean (CostTable.stride_mod_256)."""
    if costs.stride_from_trace and r.gm is not None:
        return float((r.gm.burst + r.gm.gap) % 256)
    return costs.stride_mod_256


def load_cost(r: Rec, costs: CostTable, rates: Rates, l2: float = 0.0) -> tuple[float, float, float]:
    """GM -> UB: bytes / (a + b / active cores) + h, the small-block figures under 25,000 bytes; a burst
    under 32 bytes fills a 32-byte UB block; strided bursts add k * bursts * (stride mod 256). The
    share `l2` of the bytes found in the L2 cache streams l2_read_speedup times faster. GM -> L1
    (into rates.l1_window, with chip-wide cube figures): each part at the smaller of the one-core
    rate (times l2_read_speedup for L2 bytes) and the core's share of the chip's HBM or L2 rate."""
    bursts = max(r.b, 1)
    nbytes = bursts * 32 if bursts > 1 and r.bytes < bursts * 32 else r.bytes
    small = r.bytes < costs.small_load_below_bytes
    t, alone, h = ((rates.load_small, rates.load_small_alone, costs.load_small.h) if small
                   else (rates.load, rates.load_alone, costs.load.h))
    slow = 1.0 / costs.unaligned_bandwidth if r.a else 1.0
    stride = costs.load_stride_k * bursts * stride_mod(r, costs) if bursts > 1 else 0.0
    fast = costs.l2_read_speedup
    if rates.l1_hbm_share and rates.l1_window[0] <= r.w[0] < rates.l1_window[1]:
        # the cube core's own rate, a small copy slower by the public small-block figure's ratio
        alone *= rates.l1_alone / rates.load_alone if rates.l1_alone else 1.0
        hbm, hit = nbytes * (1.0 - l2), nbytes * l2
        stream = (hbm / min(alone, rates.l1_hbm_share) + hit / min(alone * fast, rates.l1_l2_share)) * slow
        return stream + h + stride, 0.0, stream - (hbm / alone + hit / (alone * fast)) * slow
    slow *= 1.0 - l2 + l2 / fast if l2 else 1.0
    stream = nbytes / t * slow
    return stream + h + stride, 0.0, stream - nbytes / alone * slow


def store_cost(r: Rec, costs: CostTable, rates: Rates) -> tuple[float, float, float]:
    """UB -> GM by the public store cases on the burst length: 32-byte multiples stream at
    a + b / active cores; longer than 512 bytes unaligned pays a penalty; 33-511 bytes unaligned
    2 bytes per cycle; under 32 bytes a per-burst cost growing with the active cores."""
    bursts = max(r.b, 1)
    blk = r.bytes / bursts
    h, t, alone = costs.store.h, rates.store, rates.store_alone
    slow = 1.0 / costs.unaligned_bandwidth if r.a else 1.0
    if blk % 32 == 0 or blk > 512:
        stream = r.bytes / t * slow
        extra = costs.store_stride_k * bursts * costs.stride_mod_256 if bursts > 1 else 0.0
        if blk % 32:
            extra += 256.0 - (h + 512.0 / t)
        return stream + h + extra, 0.0, stream - r.bytes / alone * slow
    if blk > 32:
        return r.bytes / costs.store_middle_bytes_per_cycle + costs.store_middle_h, 0.0, 0.0

    def small(n: int) -> float:
        a = costs.store_small_a.k * n + costs.store_small_a.b
        b = costs.store_small_b.k * n + costs.store_small_b.b
        return (a * blk + b) * bursts + h

    c = small(rates.active)
    return c, 0.0, c - small(1)


# Scalar instructions that reach GM (a round trip each): GlobalTensor Get/SetValue, the dcache
# bypass reads and writes, the scalar atomics and the dcache clean/invalidate of a line.
# A Matmul call in a mixed kernel is a message the AIV writes to GM (MatmulMessage) and the AIC's
# server reads and decodes (MatmulServe: listed so its bytes count as GM traffic, its cycles are
# scalar_cost's own figure; matmul.h CubeClient).
_SCALAR_GM = ("GlobalTensor", "ReadGmByPassDCache", "WriteGmByPassDCache", "AtomicAdd", "AtomicMax", "AtomicMin",
              "AtomicExch", "AtomicCas", "DataCacheCleanAndInvalid", protocol.MATMUL_MESSAGE, protocol.MATMUL_SERVE)


def scalar_cost(r: Rec, costs: CostTable) -> float:
    """Cycles of a scalar record: the Matmul API's own work by its record (Init, a K step, a GM -> L1
    copy, less with a constant tiling; the AIC's handling of a message), a GM round trip, else a UB
    access."""
    static = r.dtype == protocol.STATIC_TILING
    if r.api == protocol.MATMUL_INIT:
        return costs.matmul_static_init_cycles if static else costs.matmul_init_cycles
    share = costs.matmul_static_share if static else 1.0
    if r.api == protocol.MATMUL_KSTEP:
        return costs.matmul_kstep_cycles * share
    if r.api == protocol.MATMUL_COPY:
        return costs.matmul_copy_cycles * share
    if r.api == protocol.MATMUL_SERVE:
        return costs.matmul_serve_cycles
    return costs.scalar_gm_cycles if _scalar_gm(r.api) else costs.scalar_ub_cycles


def _scalar_gm(api: str) -> bool:
    return api.startswith(_SCALAR_GM)


def _gm_bytes(r: Rec) -> int:
    if r.pipe in ("MTE2", "MTE3") or (r.pipe == "S" and _scalar_gm(r.api)):
        return r.bytes
    if r.pipe == "FIX" and r.b:  # a Fixpipe to GM (the emulator records its bursts; one to L1 has none)
        return r.bytes
    return 0


def pipe_heads(costs: CostTable, recs: list[Rec], active: int) -> list[float]:
    """Each pipe's head, paid by its first instruction in a block: MTE2's grows with the block count,
    the larger figure once a load reaches 25,000 bytes; MTE3 and V fixed."""
    heads = [0.0] * len(PIPES)
    biggest = max((r.bytes for r in recs if r.pipe == "MTE2" and r.kind == "I"), default=0)
    h2 = costs.mte2_head if biggest >= costs.small_load_below_bytes else costs.mte2_head_small
    heads[_PIX["MTE2"]] = h2.k * active + h2.b
    heads[_PIX["MTE3"]] = costs.mte3_head_cycles
    heads[_PIX["V"]] = costs.vec_head_cycles
    return heads


class _Clock:
    """Happens-before by vector clocks: known[P][Q] is the last instruction of pipe Q that
    is ordered before pipe P's next instruction."""

    def __init__(self) -> None:
        n = len(PIPES)
        self.seq = [0] * n
        self.known = [[0] * n for _ in range(n)]

    def snapshot(self, p: int) -> list[int]:
        s = list(self.known[p])
        s[p] = self.seq[p]
        return s

    def merge(self, p: int, snap: list[int] | None) -> None:
        if snap:
            k = self.known[p]
            for i, v in enumerate(snap):
                if v > k[i]:
                    k[i] = v


def schedule_block(block: int, recs: list[Rec], costs: CostTable, rates: Rates,
                   keep_events: bool = False, floors: dict[int, float] | None = None,
                   l2: dict[int, float] | None = None) -> tuple[BlockSchedule, list[SyncHazard]]:
    """One block's timeline. `floors`: cross-core synchronisation id -> when the sets that released
    it were done on their cores; a CrossCoreWaitFlag taking it holds every pipe until then. `l2`:
    record index -> the share of that GM read's bytes found in the L2 cache (l2cache.replay)."""
    free = [0.0] * len(PIPES)           # when each pipe can start its next instruction
    done = [0.0] * len(PIPES)           # when everything issued to each pipe is complete
    busy = [0.0] * len(PIPES)
    head = pipe_heads(costs, recs, rates.active)  # paid by each pipe's first instruction, then zeroed
    heads, bank, share = [0.0] * len(PIPES), [0.0] * len(PIPES), [0.0] * len(PIPES)
    wait = costs.event_cycles
    port = {_MTE2: deque(maxlen=8), _MTE3: deque(maxlen=8)}  # recent transfer intervals per direction
    issue = 0.0                          # the scalar unit's issue time
    clock = _Clock()
    flags: dict[tuple[int, int], deque] = defaultdict(deque)   # (event, id) -> (time, snapshot)
    enq: dict[tuple[int, int], tuple[float, list[int]]] = {}
    freed: dict[tuple[int, int], tuple[float, list[int]]] = {}
    # per pipe: (seq, start, end, loc, is_write, api), the newest _RECENT of them (an unsynchronised
    # stream keeps no more); the check stops at the first one the checking pipe is ordered after
    recent: list[deque] = [deque(maxlen=_RECENT) for _ in PIPES]
    hazards: list[SyncHazard] = []
    reported: set[tuple[int, int]] = set()
    line_cycles: dict[int, float] = defaultdict(float)
    gm_bytes = 0
    vec_cycles = 0.0
    events: list[TimedEvent] = []
    xsets: dict[int, float] = {}
    xheld: list[tuple[int, float, float]] = []
    units = _UnitFlags()

    def hazard_check(p: int, r: Rec, ranges: list[tuple[int, int]], is_write: bool) -> None:
        known, seqs = clock.known[p], clock.seq
        for q in range(len(PIPES)):
            # q's newest instruction is already ordered before p's: nothing of q's can race
            if q == p or q == _S or seqs[q] <= known[q]:
                continue
            horizon = known[q]
            for seq, a0, a1, loc, w, api in reversed(recent[q]):
                if seq <= horizon:
                    break
                if not (w or is_write):
                    continue  # two reads never race
                for s0, n in ranges:
                    if s0 < a1 and a0 < s0 + n:
                        key = (r.loc, loc)
                        if key not in reported:
                            reported.add(key)
                            kind = "RAW" if w and not is_write else ("WAW" if w else "WAR")
                            hazards.append(SyncHazard(block, r.loc, loc, PIPES[p], PIPES[q], kind, r.api, api,
                                                      max(s0, a0)))
                        break

    l2 = l2 or {}
    l2_saved = 0.0
    for i, r in enumerate(recs):
        p = _PIX.get(r.pipe, _S)
        k = r.kind
        if k == "I":
            hit = l2.get(i, 0.0) if p == _MTE2 else 0.0
            c, b_extra, s_extra = instr_cost(r, costs, rates, hit)
            if hit:
                l2_saved += instr_cost(r, costs, rates)[0] - c
            h0 = head[p]
            if h0:
                c, heads[p], head[p] = c + h0, h0, 0.0
            start = max(issue, free[p])
            unit = units.take(p)
            if unit:
                start = max(start, unit.start_floor)
            if p in port and rates.rw_can_share:
                # a read beside a write shares the chip's GM bandwidth (gm_share_extra); a pipe head
                # moves no data, so the window that shares starts after it
                # its mean rate from HBM while it moves data (what it reads from L2 takes no HBM bandwidth)
                rate = r.bytes * (1.0 - hit) / (c - h0) if c > h0 else 0.0
                other = port[_MTE3 if p == _MTE2 else _MTE2]
                if other:
                    extra = _shared_gm_extra(start + h0, c - h0, rate, other, rates.core_gm)
                    c += extra
                    s_extra += extra
                port[p].append((start + h0, start + c, rate))
            end = start + c
            if unit:
                end = max(end, unit.end_floor(c))
            free[p] = end
            done[p] = max(done[p], end)
            busy[p] += c
            bank[p] += b_extra
            share[p] += s_extra
            line_cycles[r.loc] += c
            gm_bytes += _gm_bytes(r)
            if p == _PIX["V"]:
                vec_cycles += c
            if p == _S:
                issue = end  # scalar work blocks the issuing unit
            else:
                issue += costs.issue_cycles
                busy[_S] += costs.issue_cycles
                reads = [x for x in (r.r0, r.r1) if x[1]]
                if reads:
                    hazard_check(p, r, reads, False)
                if r.w[1]:
                    hazard_check(p, r, [r.w], True)
                clock.seq[p] += 1
                seq = clock.seq[p]
                for a0, n in reads:
                    recent[p].append((seq, a0, a0 + n, r.loc, False, r.api))
                if r.w[1]:
                    recent[p].append((seq, r.w[0], r.w[0] + r.w[1], r.loc, True, r.api))
                if unit and unit.mode == 3:
                    units.release(p, unit.blocks, start, end, clock.snapshot(p))
            if keep_events:
                events.append(TimedEvent(block, r.pipe, r.api, r.loc, start, end, r.bytes))
            continue
        if k == "unitflag":
            units.wait(p, r, clock)  # part of the instruction that follows: no issue of its own
            continue
        issue += costs.issue_cycles
        busy[_S] += costs.issue_cycles
        if k in ("enque", "free"):
            t = max(issue, done[p])
            snap = (t, clock.snapshot(p))
            (enq if k == "enque" else freed)[(r.a, r.b)] = snap
        elif k in ("deque", "alloc"):
            got = (enq if k == "deque" else freed).get((r.a, r.b))
            if got:
                # a hand-over from another pipe costs its latency only when the waiter has to wait
                if got[0] >= free[p]:
                    free[p] = got[0] + wait
                clock.merge(p, got[1])
        elif k == "setflag":
            setter = _PIX[_EVENT_PIPES[r.a][0]] if r.a < len(_EVENT_PIPES) else p
            flags[(r.a, r.b)].append((max(issue, done[setter]), clock.snapshot(setter)))
        elif k == "waitflag":
            waiter = _PIX[_EVENT_PIPES[r.a][1]] if r.a < len(_EVENT_PIPES) else p
            if flags[(r.a, r.b)]:
                t, snap = flags[(r.a, r.b)].popleft()
                if t >= free[waiter]:
                    free[waiter] = t + wait
                clock.merge(waiter, snap)
                if waiter == _S:
                    issue = max(issue, free[waiter])
        elif k == "barrier":
            issue = _barrier(r, p, costs, free, done, issue, clock)
        elif k == "xset":
            # reported to the scheduling module once the pipe's earlier work is done
            # (a set on every pipe, as SyncAll's and a served Matmul call's reply, once all are done)
            t = max(issue, max(done) if r.pipe == "ALL" else done[p])
            xsets[r.b] = max(xsets.get(r.b, 0.0), t)
        elif k == "xwait":
            before, issue = issue, _cross_wait(r, costs, free, issue, floors, clock)
            if issue > before:
                xheld.append((r.b, before, issue))
    total = max(max(done), max(free), issue)
    named = range(len(PIPES))
    sched = BlockSchedule(block, total, {PIPES[i]: busy[i] for i in named if busy[i]},
                          dict(line_cycles), gm_bytes, vec_cycles, events,
                          heads={PIPES[i]: heads[i] for i in named if heads[i]},
                          bank={PIPES[i]: bank[i] for i in named if bank[i]},
                          share={PIPES[i]: share[i] for i in named if share[i]}, xsets=xsets,
                          xheld=xheld, l2_saved=l2_saved)
    return sched, hazards


class _UnitWait:
    """What a Mmad or Fixpipe with unitFlag 2/3 waits for (the UnitFlag page): the 512-byte blocks of
    L0C it writes or reads, each released by the last instruction of the other pipe with unitFlag 3.
    The hand-over is per block, so the two overlap: it starts once the releaser's first block is
    done and ends no earlier than one of its own blocks after the releaser's end."""

    def __init__(self, mode: int, blocks: range, released: list[tuple[float, float, int]]) -> None:
        self.mode, self.blocks = mode, blocks
        self.start_floor = max((s + (e - s) / n for s, e, n in released), default=0.0)
        self._last = max((e for _s, e, _n in released), default=0.0)

    def end_floor(self, cycles: float) -> float:
        return self._last + cycles / max(len(self.blocks), 1) if self._last else 0.0


class _UnitFlags:
    """L0C's unit flags in the schedule: for each pipe (M or FIX), which unitFlag-3 instruction last
    released each 512-byte block of L0C, as (start, end, blocks, clock snapshot); the emulator has
    checked the flags' values (kernel_operator_mm_intf.h unit_flag), this orders the pipes and times
    them. The blocks are kept as disjoint runs (a base block's Mmad covers hundreds of blocks, and a
    large matmul makes ~10^5 of them: one entry per block made each wait a scan of its blocks)."""

    def __init__(self) -> None:
        # pipe -> sorted disjoint runs (first block, end block, entry), the newest release of each block
        self.rel: dict[int, list[tuple[int, int, tuple[float, float, int, list[int]]]]] = {
            _PIX["M"]: [], _PIX["FIX"]: []}
        self.pending: dict[int, _UnitWait] = {}

    def wait(self, p: int, r: Rec, clock: _Clock) -> None:
        other = _PIX["FIX"] if p == _PIX["M"] else _PIX["M"]
        blocks = range(r.w[0] // 512, (r.w[0] + max(r.w[1], 1) - 1) // 512 + 1)
        got = {id(e): e for lo, hi, e in self.rel[other] if lo < blocks.stop and blocks.start < hi}
        for x in got.values():
            clock.merge(p, x[3])
        self.pending[p] = _UnitWait(r.a, blocks, [(x[0], x[1], x[2]) for x in got.values()])

    def take(self, p: int) -> _UnitWait | None:
        return self.pending.pop(p, None)

    def release(self, p: int, blocks: range, start: float, end: float, snap: list[int]) -> None:
        entry = (start, end, len(blocks), snap)
        lo, hi = blocks.start, blocks.stop
        runs = []
        for a, b, e in self.rel[p]:
            if b <= lo or hi <= a:
                runs.append((a, b, e))
                continue
            if a < lo:
                runs.append((a, lo, e))
            if hi < b:
                runs.append((hi, b, e))
        runs.append((lo, hi, entry))
        runs.sort(key=lambda x: x[0])
        self.rel[p] = runs


def _barrier(r: Rec, p: int, costs: CostTable, free: list[float], done: list[float], issue: float,
             clock: _Clock) -> float:
    """PipeBarrier: PIPE_ALL waits for every pipe; PipeBarrier<PIPE_X> drains pipe X before its next
    instruction. Returns the scalar unit's issue time after it."""
    if r.a == _PIPE_ALL:
        t = max(max(done), max(free), issue) + costs.barrier_cycles
        snaps = [clock.snapshot(i) for i in range(len(PIPES))]
        for i in range(len(PIPES)):
            free[i] = t
            for s in snaps:
                clock.merge(i, s)
        return t
    free[p] = max(free[p], done[p]) + costs.barrier_cycles
    return max(issue, free[p]) if p == _S else issue


def _cross_wait(r: Rec, costs: CostTable, free: list[float], issue: float, floors: dict[int, float] | None,
                clock: _Clock) -> float:
    """CrossCoreWaitFlag on the 910B holds every pipe of the core until its flag's sets are done on
    the other cores (plus an event's latency). Returns the scalar unit's issue time after it.
    What the core issued before it is ordered before what follows, as after PipeBarrier<PIPE_ALL>:
    the wait's set came from another core that first waited for this core's own set (the AIC/AIV
    hand-over), and each set is reported only once its pipe's earlier work is done."""
    snaps = [clock.snapshot(i) for i in range(len(PIPES))]
    for i in range(len(PIPES)):
        for snap in snaps:
            clock.merge(i, snap)
    ready = (floors or {}).get(r.b)
    if ready is None:
        return issue
    t = max(issue, ready + costs.event_cycles)
    for i in range(len(free)):
        free[i] = max(free[i], t)
    return t


def _schedule_all(trace: Trace, costs: CostTable, rates: Rates, keep_events: bool, l2: L2Result
                  ) -> tuple[list[BlockSchedule], list[SyncHazard]]:
    """Every block's timeline. With cross-core flags (a mixed kernel) the blocks depend on each
    other: each wait starts no earlier than the sets it took, so the timelines are recomputed with
    the sets' times until they no longer move (each pass only delays; bounded by the longest chain)."""
    floors: dict[int, float] = {}
    crossing = any(r.kind == "xwait" for recs in trace.blocks.values() for r in recs)
    for _ in range(_CROSS_PASSES if crossing else 1):
        schedules: list[BlockSchedule] = []
        hazards: list[SyncHazard] = []
        for b in sorted(trace.blocks):
            s, h = schedule_block(b, trace.blocks[b], costs, rates, keep_events, floors, l2.hits.get(b))
            schedules.append(s)
            hazards.extend(h)
        sets: dict[int, float] = {}
        for s in schedules:
            for k, t in s.xsets.items():
                sets[k] = max(sets.get(k, 0.0), t)
        if sets == floors:
            break
        floors = sets
    return schedules, hazards


@dataclass(frozen=True)
class TimeShare:
    """One part of the estimate by cause (report.TimeCauseName), in cycles."""

    cause: TimeCauseName
    pipe: str      # the pipe the cause is on ("" for op_head, waits, roofline)
    cycles: float


@dataclass
class Estimate:
    cycles: float
    estimated_us: float
    roofline_us: float
    launch_overhead_us: float
    bottleneck: str
    pipes: dict[str, float]
    hot_lines: list[tuple[int, float]]  # (loc id, us) on the profiled core (profiled_core)
    hazards: list[SyncHazard]
    schedules: list[BlockSchedule]
    block_core: dict[int, int]
    core_offsets: dict[int, float]  # block -> start cycle on its core
    causes: list[TimeShare] = field(default_factory=list)
    l2_hit_bytes: int = 0   # GM bytes read from the L2 cache (the rest of gm_read_bytes from HBM)
    gm_read_bytes: int = 0
    l2_saved_us: float = 0.0  # MTE2 time the L2 hits saved on the critical core (BlockSchedule.l2_saved)
    # The core the pipes, causes, hot lines and L2 saving describe when it is not the slowest one: the
    # core the slowest waits for (waited_core), as "AIC 0"; "" for the slowest core itself.
    profiled_core: str = ""


def block_cores(trace: Trace, chip: ChipProfile) -> dict[int, int]:
    """Block -> the core it runs on: block b on core b % cores, after the earlier ones (waves). A mixed
    launch's AICs run on the cube cores, numbered after the vector cores."""
    cores = max(1, chip.vector_cores)
    out = {}
    for b in sorted(trace.blocks):
        kind, idx = trace.cores.get(b, ("AIV", b))
        out[b] = idx % cores if kind == "AIV" else cores + idx % max(1, chip.cube_cores)
    return out


def waves(block_core: dict[int, int]) -> list[list[int]]:
    """The blocks that run at once: the n-th block of every core in wave n."""
    seen: dict[int, int] = defaultdict(int)
    out: list[list[int]] = []
    for b in sorted(block_core):
        n = seen[block_core[b]]
        seen[block_core[b]] += 1
        if n == len(out):
            out.append([])
        out[n].append(b)
    return out


def estimate(trace: Trace, chip: ChipProfile, costs: CostTable, block_dim: int, keep_events: bool = False
             ) -> Estimate:
    cores = max(1, chip.vector_cores)
    active = max(1, min(block_dim, cores))
    hbm_bytes_per_cycle = chip.hbm_gbps / chip.clock_ghz  # GB/s over G cycles/s
    rates = cube_load_rates(transfer_rates(costs, active, hbm_bytes_per_cycle), costs, chip)
    block_core = block_cores(trace, chip)
    l2 = replay(trace, waves(block_core), chip.l2_bytes, costs.l2_line_bytes)
    schedules, hazards = _schedule_all(trace, costs, rates, keep_events, l2)
    core_time: dict[int, float] = defaultdict(float)
    offsets = {}
    for s in schedules:
        core = block_core[s.block]
        offsets[s.block] = core_time[core]
        core_time[core] += s.cycles
    critical_core = max(core_time, key=lambda c: core_time[c]) if core_time else 0
    op_head = costs.op_head_cycles if schedules else 0.0
    path = core_time.get(critical_core, 0.0) + op_head
    # bytes from HBM at its bandwidth, those served by L2 at L2's (l2_read_speedup times HBM's): read hits,
    # the bytes several cores read at once, which HBM moves once, and writes over lines an earlier write
    # left dirty in L2, which reach HBM once when the line leaves (l2cache.L2Result)
    from_l2 = l2.hit_bytes + l2.shared_fill_bytes + l2.rewrite_bytes
    memory_bound = (sum(s.gm_bytes for s in schedules) - from_l2 * (1.0 - 1.0 / costs.l2_read_speedup)
                    ) / hbm_bytes_per_cycle
    compute_bound = sum(s.vec_cycles for s in schedules) / active
    roofline = max(memory_bound, compute_bound)
    cycles = max(path, roofline)
    to_us = 1.0 / (chip.clock_ghz * 1e3)
    focus = waited_core(schedules, block_core, critical_core)
    crit = [s for s in schedules if block_core[s.block] == focus]
    busy, lines = _sum_blocks(crit, "busy"), _sum_line_cycles(crit)
    pipes = {p: round(min(1.0, c / cycles), 4) for p, c in sorted(busy.items())} if cycles else {}
    if cycles and path < memory_bound and memory_bound >= compute_bound:
        bottleneck = "HBM"
    elif pipes and max(pipes.values()) >= LATENCY_BOUND_BELOW:
        bottleneck = max(pipes, key=lambda p: pipes[p])
    elif pipes:
        bottleneck = "latency"  # no pipe is busy most of the time: they wait on each other
    else:
        bottleneck = "none"
    hot = sorted(lines.items(), key=lambda kv: -kv[1])[:5]
    causes = time_causes(crit, op_head, path, cycles)
    return Estimate(cycles=cycles, estimated_us=cycles * to_us, roofline_us=roofline * to_us,
                    launch_overhead_us=costs.launch_overhead_us, bottleneck=bottleneck, pipes=pipes,
                    hot_lines=[(loc, c * to_us) for loc, c in hot], hazards=hazards, schedules=schedules,
                    block_core=block_core, core_offsets=offsets, causes=causes, l2_hit_bytes=l2.hit_bytes,
                    gm_read_bytes=l2.read_bytes, l2_saved_us=sum(s.l2_saved for s in crit) * to_us,
                    profiled_core=core_name(trace, crit[0].block) if focus != critical_core and crit else "")


def waited_core(schedules: list[BlockSchedule], block_core: dict[int, int], core: int) -> int:
    """The core that holds most of the critical path, walked back from the slowest core's end: a
    stretch a core worked belongs to it; a stretch it was held at a cross-core wait belongs to the
    core whose set released it, walked back from that set the same way. In a MIX kernel whose AIVs
    send their Matmul calls to the AIC and wait, that is the AIC; in a pipeline of AIC and AIV
    stages, the side whose stages take longer; otherwise the slowest core itself."""
    setter: dict[int, tuple[float, int]] = {}  # id -> (when, block) of its last set
    for s in schedules:
        for k, t in s.xsets.items():
            setter[k] = max(setter.get(k, (t, s.block)), (t, s.block))
    by_block = {s.block: s for s in schedules}
    mine = [s for s in schedules if block_core[s.block] == core]
    if not mine or not any(s.xheld for s in schedules):
        return core
    # a block's waits are recorded in time order: the last one resumed by t is found by bisection
    resumed_at = {s.block: [w[2] for w in s.xheld] for s in schedules}
    cur = max(mine, key=lambda s: s.cycles)
    t = cur.cycles
    shares: dict[int, float] = defaultdict(float)
    for _ in range(1_000_000):  # each step goes back in time; bounded for safety
        i = bisect_right(resumed_at[cur.block], t) - 1
        while i >= 0 and not (cur.xheld[i][0] in setter and setter[cur.xheld[i][0]][0] < t):
            i -= 1
        if i < 0:
            shares[block_core[cur.block]] += t
            break
        k, _, resumed = cur.xheld[i]
        shares[block_core[cur.block]] += t - resumed
        t, nxt = setter[k]
        cur = by_block[nxt]
    return max(shares, key=lambda c: (shares[c], c == core)) if shares else core


def core_name(trace: Trace, block: int) -> str:
    """A block's core as a person reads it: "AIC 0", "AIV 3"."""
    kind, idx = trace.cores.get(block, ("AIV", block))
    return f"{kind} {idx}"


def _sum_blocks(blocks: list[BlockSchedule], part: Literal["busy", "heads", "bank", "share"]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for s in blocks:
        for p, c in getattr(s, part).items():
            out[p] += c
    return out


def _sum_line_cycles(blocks: list[BlockSchedule]) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for s in blocks:
        for loc, c in s.line_cycles.items():
            out[loc] += c
    return out


def time_causes(crit: list[BlockSchedule], op_head: float, path: float, cycles: float) -> list[TimeShare]:
    """The critical core's time split by cause along its busiest pipe; the parts add up to `cycles`."""
    busy = _sum_blocks(crit, "busy")
    out = [TimeShare("op_head", "", op_head)] if op_head else []
    if busy:
        p = max(busy, key=lambda q: busy[q])
        heads, bank, share = (_sum_blocks(crit, part).get(p, 0.0) for part in ("heads", "bank", "share"))
        out += [TimeShare("pipe_work", p, busy[p] - heads - bank - share), TimeShare("pipe_heads", p, heads),
                TimeShare("bank_conflicts", p, bank), TimeShare("bandwidth_share", p, share),
                TimeShare("waits", "", max(0.0, path - op_head - busy[p]))]
    if cycles > path:
        out.append(TimeShare("roofline", "", cycles - path))
    return [c for c in out if c.cycles > 0]
