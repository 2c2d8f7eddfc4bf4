"""The pipeline cost model: a discrete-event schedule of each block's trace over the pipes,
and, from the same happens-before graph, the missing-sync check (docs/profile.md).

Within a block the scalar unit issues API calls in program order; each instruction runs on
its pipe (S, V, MTE2, MTE3, ...), in order within the pipe, in parallel across pipes, held
back by the synchronisation the program expresses: queue EnQue/DeQue and AllocTensor/
FreeTensor pairs, SetFlag/WaitFlag, PipeBarrier. Across blocks: blocks beyond the chip's
vector cores run in waves on the same cores; the cores moving data share HBM bandwidth; the
kernel takes as long as its slowest core, and never less than the roofline bound.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.costs import CostTable
from sage_npu.npu_eval.trace import Rec, Trace

PIPES = protocol.PIPES
_PIX = {p: i for i, p in enumerate(PIPES)}
_S = _PIX["S"]
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
    "MTE2": "copies in (global memory -> Unified Buffer) keep their pipe the busiest: fewer, longer, 32-byte "
            "aligned DataCopy calls, and double buffering to hide them behind the computation",
    "MTE3": "copies out (Unified Buffer -> global memory) keep their pipe the busiest: fewer, longer, 32-byte "
            "aligned DataCopy calls, and double buffering to hide them behind the computation",
    "V": "vector computation is the busiest: fewer vector instructions (fuse steps, full 256-byte repeats "
         "instead of short counts), a narrower dtype where the precision allows",
    "S": "the scalar unit is the busiest: per-element GetValue/SetValue or scalar loops; use vector APIs and "
         "move index arithmetic out of the loops",
    "MTE1": "L1 -> L0 loads (LoadData) keep their pipe the busiest: reuse what L0A/L0B hold across more Mmads "
            "(a bigger baseK, or keep A in L0A while B moves), and double-buffer L0A/L0B so loads overlap the cube",
    "M": "the cube (Mmad) is the busiest: the kernel is compute-bound, which is where a matmul should be; fewer "
         "padded fractals (shapes that are multiples of 16) and int8 or half inputs go faster",
    "FIX": "Fixpipe (L0C -> GM/L1) keeps its pipe the busiest: write bigger blocks (larger baseM/baseN) less "
           "often, accumulate more of K in L0C before each Fixpipe, and a narrower output dtype",
    "none": "nothing was traced, so nothing was busy",
}


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


def latency_cycles(r: Rec, costs: CostTable) -> float:
    """Cycles after an instruction leaves its pipe until a waiting pipe may use its result."""
    if r.pipe == "MTE2":
        return costs.mte2_latency_cycles
    if r.pipe == "MTE3":
        return costs.mte3_latency_cycles
    return 0.0


def instr_cycles(r: Rec, costs: CostTable, mte_bytes_per_cycle: float) -> float:
    """Cycles one traced instruction occupies its pipe."""
    if r.pipe == "V":
        if r.api == "DataCopy":
            return costs.vec_startup_cycles + r.bytes / costs.ub_copy_bytes_per_cycle
        repeats = max(1, -(-r.bytes // 256))
        return costs.vec_startup_cycles + costs.vec_per_repeat(r.api, r.dtype) * repeats
    if r.pipe in ("MTE2", "MTE3"):
        # a = the GM address's offset from a 512-byte boundary, b = bursts (set by the emulator)
        stream = r.bytes / mte_bytes_per_cycle * (costs.mte_unaligned_factor if r.a else 1.0)
        return costs.mte_setup_cycles + costs.mte_burst_cycles * max(r.b - 1, 0) + stream
    if r.pipe == "S":
        return costs.scalar_gm_cycles if _scalar_gm(r.api) else costs.scalar_ub_cycles
    if r.pipe in ("MTE1", "M", "FIX"):
        return costs.cube.cycles(r.pipe, r.elems, r.bytes)
    return costs.vec_startup_cycles + r.bytes / 256.0


# Scalar instructions that reach GM (a round trip each): GlobalTensor Get/SetValue, the dcache
# bypass reads and writes, the scalar atomics and the dcache clean/invalidate of a line.
_SCALAR_GM = ("GlobalTensor", "ReadGmByPassDCache", "WriteGmByPassDCache", "AtomicAdd", "AtomicMax", "AtomicMin",
              "AtomicExch", "AtomicCas", "DataCacheCleanAndInvalid")


def _scalar_gm(api: str) -> bool:
    return api.startswith(_SCALAR_GM)


def _gm_bytes(r: Rec) -> int:
    if r.pipe in ("MTE2", "MTE3") or (r.pipe == "S" and _scalar_gm(r.api)):
        return r.bytes
    if r.pipe == "FIX" and r.b:  # a Fixpipe to GM (the emulator records its bursts; one to L1 has none)
        return r.bytes
    return 0


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


def schedule_block(block: int, recs: list[Rec], costs: CostTable, mte_bytes_per_cycle: float,
                   keep_events: bool = False) -> tuple[BlockSchedule, list[SyncHazard]]:
    free = [0.0] * len(PIPES)           # when each pipe can start its next instruction
    done = [0.0] * len(PIPES)           # when everything issued to each pipe is complete and visible
    busy = [0.0] * len(PIPES)
    issue = 0.0                          # the scalar unit's issue time
    clock = _Clock()
    flags: dict[tuple[int, int], deque] = defaultdict(deque)   # (event, id) -> (time, snapshot)
    enq: dict[tuple[int, int], tuple[float, list[int]]] = {}
    freed: dict[tuple[int, int], tuple[float, list[int]]] = {}
    recent: list[deque] = [deque() for _ in PIPES]  # per pipe: (seq, start, end, loc, is_write, api)
    hazards: list[SyncHazard] = []
    reported: set[tuple[int, int]] = set()
    line_cycles: dict[int, float] = defaultdict(float)
    gm_bytes = 0
    vec_cycles = 0.0
    events: list[TimedEvent] = []

    def hazard_check(p: int, r: Rec, ranges: list[tuple[int, int]], is_write: bool) -> None:
        for q in range(len(PIPES)):
            if q == p or q == _S or not recent[q]:
                continue
            horizon = clock.known[p][q]
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
                            hazards.append(SyncHazard(block, r.loc, loc, PIPES[p], PIPES[q], kind, r.api, api))
                        break

    for r in recs:
        p = _PIX.get(r.pipe, _S)
        k = r.kind
        if k == "I":
            c = instr_cycles(r, costs, mte_bytes_per_cycle)
            start = max(issue, free[p])
            end = start + c
            free[p] = end
            done[p] = max(done[p], end + latency_cycles(r, costs))
            busy[p] += c
            line_cycles[r.loc] += c
            gm_bytes += _gm_bytes(r)
            if p == _PIX["V"]:
                vec_cycles += c
            if p == _S:
                issue = end  # scalar work blocks the issuing unit
            else:
                issue += costs.issue_cycles
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
                if len(recent[p]) > 4096:
                    _prune(recent, clock)
            if keep_events:
                events.append(TimedEvent(block, r.pipe, r.api, r.loc, start, end, r.bytes))
            continue
        issue += costs.issue_cycles
        if k in ("enque", "free"):
            t = max(issue, done[p])
            snap = (t, clock.snapshot(p))
            (enq if k == "enque" else freed)[(r.a, r.b)] = snap
        elif k in ("deque", "alloc"):
            got = (enq if k == "deque" else freed).get((r.a, r.b))
            if got:
                free[p] = max(free[p], got[0]) + costs.event_cycles
                clock.merge(p, got[1])
        elif k == "setflag":
            setter = _PIX[_EVENT_PIPES[r.a][0]] if r.a < len(_EVENT_PIPES) else p
            flags[(r.a, r.b)].append((max(issue, done[setter]), clock.snapshot(setter)))
        elif k == "waitflag":
            waiter = _PIX[_EVENT_PIPES[r.a][1]] if r.a < len(_EVENT_PIPES) else p
            if flags[(r.a, r.b)]:
                t, snap = flags[(r.a, r.b)].popleft()
                free[waiter] = max(free[waiter], t) + costs.event_cycles
                clock.merge(waiter, snap)
                if waiter == _S:
                    issue = max(issue, free[waiter])
        elif k == "barrier":
            if r.a == _PIPE_ALL:
                t = max(max(done), max(free), issue)
                snaps = [clock.snapshot(i) for i in range(len(PIPES))]
                for i in range(len(PIPES)):
                    free[i] = t
                    for s in snaps:
                        clock.merge(i, s)
                issue = t
    total = max(max(done), max(free), issue)
    sched = BlockSchedule(block, total, {PIPES[i]: busy[i] for i in range(len(PIPES)) if busy[i]},
                          dict(line_cycles), gm_bytes, vec_cycles, events)
    return sched, hazards


def _prune(recent: list[deque], clock: _Clock) -> None:
    """Drop accesses every other pipe is already ordered after."""
    n = len(PIPES)
    for q in range(n):
        floor = min(clock.known[p][q] for p in range(n) if p != q)
        while recent[q] and recent[q][0][0] <= floor:
            recent[q].popleft()
        while len(recent[q]) > 4096:  # an unsynchronised stream: keep the newest
            recent[q].popleft()


@dataclass
class Estimate:
    cycles: float
    estimated_us: float
    roofline_us: float
    launch_overhead_us: float
    bottleneck: str
    pipes: dict[str, float]
    hot_lines: list[tuple[int, float]]  # (loc id, us) on the critical core
    hazards: list[SyncHazard]
    schedules: list[BlockSchedule]
    block_core: dict[int, int]
    core_offsets: dict[int, float]  # block -> start cycle on its core


def estimate(trace: Trace, chip: ChipProfile, costs: CostTable, block_dim: int, keep_events: bool = False
             ) -> Estimate:
    cores = max(1, chip.vector_cores)
    active = max(1, min(block_dim, cores))
    hbm_bytes_per_cycle = chip.hbm_gbps / chip.clock_ghz  # GB/s over G cycles/s
    # The cores moving data at once share HBM; one core alone reaches its own MTE peak.
    mte_bw = min(costs.mte_core_bytes_per_cycle, hbm_bytes_per_cycle / active)
    schedules: list[BlockSchedule] = []
    hazards: list[SyncHazard] = []
    for b in sorted(trace.blocks):
        s, h = schedule_block(b, trace.blocks[b], costs, mte_bw, keep_events)
        schedules.append(s)
        hazards.extend(h)
    # Blocks go to cores in waves: block b runs on core b % cores after the earlier ones.
    core_time: dict[int, float] = defaultdict(float)
    block_core, offsets = {}, {}
    for s in schedules:
        core = s.block % cores
        block_core[s.block], offsets[s.block] = core, core_time[core]
        core_time[core] += s.cycles
    critical_core = max(core_time, key=lambda c: core_time[c]) if core_time else 0
    path = core_time.get(critical_core, 0.0)
    total_gm = sum(s.gm_bytes for s in schedules)
    total_vec = sum(s.vec_cycles for s in schedules)
    memory_bound = total_gm / hbm_bytes_per_cycle
    compute_bound = total_vec / active
    roofline = max(memory_bound, compute_bound)
    cycles = max(path, roofline)
    to_us = 1.0 / (chip.clock_ghz * 1e3)
    crit = [s for s in schedules if block_core[s.block] == critical_core]
    busy: dict[str, float] = defaultdict(float)
    lines: dict[int, float] = defaultdict(float)
    for s in crit:
        for p, c in s.busy.items():
            busy[p] += c
        for loc, c in s.line_cycles.items():
            lines[loc] += c
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
    return Estimate(cycles=cycles, estimated_us=cycles * to_us, roofline_us=roofline * to_us,
                    launch_overhead_us=costs.launch_overhead_us, bottleneck=bottleneck, pipes=pipes,
                    hot_lines=[(loc, c * to_us) for loc, c in hot], hazards=hazards, schedules=schedules,
                    block_core=block_core, core_offsets=offsets)
