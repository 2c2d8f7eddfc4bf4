"""The chip's L2 cache, for the cost model (docs/cost-model.md, "L2 cache").

Every GM access of an AI Core goes through the L2 cache the cores share (asc-devkit's
设置合理的L2-CacheMode.md: loads by MTE2, stores by MTE3 and Fixpipe): a read of bytes the cache
holds streams at the L2 rate, the first read of bytes at HBM's. This module replays a launch's GM
accesses over an LRU cache of the chip's L2 capacity and says, for every GM read, what share of its
bytes was found in L2; cost_model.load_cost charges that share at the L2 rate.

Order: the cores run at once, so no single program order exists. The replay takes the blocks that
run at the same time (one wave: one block per core) in steps, the k-th GM access of each block in one
step, as SPMD cores running one program over their parts issue their k-th copies at about the same
time. Within a step every read is looked up before any of the step's accesses is inserted: cores
reading the same bytes at once all wait for the one fill from HBM (asc-devkit's matmul
high-performance README, Case 3, on same-address reads being serialised), so only a later step
finds them in L2. In a mixed kernel a block that reaches a cross-core wait holds there until the
sets it takes have been passed, so the AIVs' reads of a workspace come after the AIC's writes of it.
Waves follow one another (the blocks of wave w + 1 run after those of wave w on the same cores).
Writes mark their lines dirty (write-back): a write over lines still dirty is counted apart
(L2Result.rewrite_bytes), as it reaches HBM once, when the line leaves.

Granularity: 128-byte cache lines (an assumption: CostTable.sources["l2_line_bytes"]), tracked in
chunks of 64 lines whose recency is the chunk's; eviction removes the least recently used chunk.
A copy whose GM span the trace does not record (an irregular ND -> NZ GM -> L1, sliced DataCopy, a
Fixpipe whose runs are not evenly spaced) is tracked as a whole: a re-read of the same address and
shape hits, a partial overlap with another access is not seen (counted as a miss).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from sage_npu.npu_eval.trace import GmSpan, Rec, Trace

_CHUNK_LINES = 64  # lines per LRU entry: a 64-bit mask of the lines held
_REGION_BITS = 12  # chunks share dense slots by regions of 4096 (32 MB of 128-byte lines)


@dataclass
class L2Result:
    """What the replay found: for each block, record index -> share of that read's bytes in L2."""

    hits: dict[int, dict[int, float]] = field(default_factory=dict)
    hit_bytes: int = 0    # GM bytes read from L2
    read_bytes: int = 0   # GM bytes read in all (hits and HBM)
    # missed bytes another core of the same step had already asked for: each core waits for the one
    # fill (charged as a miss), but HBM moves them once (the roofline counts them at the L2 rate)
    shared_fill_bytes: int = 0
    # bytes written over lines an earlier write left dirty in L2 (write-back): they reach HBM once, when
    # the line leaves, so a workspace written and rewritten in place costs HBM its size, not its traffic
    rewrite_bytes: int = 0


# What an access touches: parallel arrays (slots, masks), the bytes a mask bit stands for and the
# mask bits in all. A slot stands for a chunk (its mask the chunk's lines, a bit worth a line) or, for a
# copy without a recorded span, for the copy's (address, bytes, bursts) with mask 1 (a bit worth the
# copy's bytes). A slot appears once in an access.
_Parts = tuple[np.ndarray, np.ndarray, int, int]


def _bits(masks: np.ndarray) -> int:
    return int(np.bitwise_count(masks).sum())


class LruL2:
    """An LRU cache of `capacity` bytes over `line`-byte lines.

    A strided ND -> NZ copy of a large matrix touches a chunk per row, and a large launch makes
    millions of such copies: the state is numpy arrays indexed by slot (a key's mask, bytes per mask
    bit, recency stamp), and the recency order is an append-only log of (slot, stamp) that eviction
    walks from its oldest end, skipping entries a later touch superseded, so an access costs a few
    array operations over its parts, not a dictionary operation per part."""

    def __init__(self, capacity: int, line: int) -> None:
        self.capacity, self.line = capacity, line
        self.used = 0
        self._regions: dict[int, int] = {}       # chunk >> _REGION_BITS -> its first slot
        self._whole: dict[tuple[int, int, int], int] = {}  # span-less copy's key -> its slot
        self._spans: dict[GmSpan, _Parts] = {}  # recent spans' parts
        self._n = 0                              # slots handed out
        self.mask = np.zeros(0, np.uint64)       # per slot: the lines held (0: not in the cache)
        self.unit = np.zeros(0, np.int64)        # per slot: bytes a mask bit stands for
        self.stamp = np.zeros(0, np.int64)       # per slot: its last touch (-1: not in the cache)
        self.dirty = np.zeros(0, np.uint64)      # per slot: the held lines a write changed since they came in
        self.fetched = np.zeros(0, np.uint64)    # per slot: what this step's reads asked for
        self._log_slot = np.zeros(1024, np.int64)
        self._log_stamp = np.zeros(1024, np.int64)
        self._head = self._tail = 0              # the log's live window
        self._clock = 0

    def _slots(self, count: int, unit: int) -> int:
        """`count` fresh slots of `unit` bytes a bit; the first one's index."""
        first, self._n = self._n, self._n + count
        if self._n > len(self.mask):
            grow = max(self._n, 2 * len(self.mask)) - len(self.mask)
            self.mask = np.concatenate([self.mask, np.zeros(grow, np.uint64)])
            self.unit = np.concatenate([self.unit, np.zeros(grow, np.int64)])
            self.stamp = np.concatenate([self.stamp, np.full(grow, -1, np.int64)])
            self.dirty = np.concatenate([self.dirty, np.zeros(grow, np.uint64)])
            self.fetched = np.concatenate([self.fetched, np.zeros(grow, np.uint64)])
        self.unit[first:self._n] = unit
        return first

    def _chunk_slots(self, chunks: np.ndarray) -> np.ndarray:
        """The slots of ascending chunk indices."""
        regions = chunks >> _REGION_BITS
        lo, hi = int(regions[0]), int(regions[-1])
        for r in (lo,) if lo == hi else np.unique(regions).tolist():
            if r not in self._regions:
                self._regions[r] = self._slots(1 << _REGION_BITS, self.line)
        if lo == hi:
            base = self._regions[lo]
        else:
            base = np.array([self._regions[r] for r in regions.tolist()], np.int64)
        return base + (chunks & ((1 << _REGION_BITS) - 1))

    def probe(self, parts: _Parts) -> tuple[int, int]:
        """(bytes held, bytes asked) of an access, without touching the cache."""
        slots, masks, unit, bits = parts
        return _bits(masks & self.mask[slots]) * unit, bits * unit

    def missed_in(self, parts: _Parts) -> int:
        """Bytes of an access that this cache does not hold and this step's earlier reads asked for
        (`fetched`); then the access is added to `fetched` (`end_step` clears it)."""
        slots, masks, unit, _ = parts
        got = self.fetched[slots]
        n = _bits(masks & got & ~self.mask[slots]) * unit
        self.fetched[slots] = got | masks
        return n

    def end_step(self, slots: list[np.ndarray]) -> None:
        for s in slots:
            self.fetched[s] = 0

    def touch(self, parts: _Parts, write: bool = False) -> int:
        """Bring an access's lines in (or refresh them) as the most recent; evict past capacity. A write
        marks its lines dirty; returns how many of its mask bits were already dirty (0 for a read)."""
        slots, masks, unit, _ = parts
        old = self.mask[slots]
        new = old | masks
        rewritten = 0
        if write:
            was = self.dirty[slots]
            rewritten = _bits(masks & was & old)
            self.dirty[slots] = (was & old) | masks
        self.used += (_bits(new) - _bits(old)) * unit
        self.mask[slots] = new
        stamps = np.arange(self._clock, self._clock + len(slots), dtype=np.int64)
        self._clock += len(slots)
        self.stamp[slots] = stamps
        self._log(slots, stamps)
        if self.used > self.capacity:
            self._evict()
        return rewritten

    def _log(self, slots: np.ndarray, stamps: np.ndarray) -> None:
        n = len(slots)
        if self._tail + n > len(self._log_slot):
            self._compact(n)
        self._log_slot[self._tail:self._tail + n] = slots
        self._log_stamp[self._tail:self._tail + n] = stamps
        self._tail += n

    def _compact(self, room: int) -> None:
        """Drop the log's evicted and superseded entries (order kept); grow it if still short of `room`."""
        s, t = self._log_slot[self._head:self._tail], self._log_stamp[self._head:self._tail]
        live = self.stamp[s] == t
        s, t = s[live], t[live]
        size = len(self._log_slot)
        while len(s) + room > size // 2:
            size *= 2
        self._log_slot, self._log_stamp = np.zeros(size, np.int64), np.zeros(size, np.int64)
        self._log_slot[:len(s)], self._log_stamp[:len(s)] = s, t
        self._head, self._tail = 0, len(s)

    def _evict(self) -> None:
        """Remove the least recently touched slots until the cache fits its capacity."""
        window = 4096
        while self.used > self.capacity and self._head < self._tail:
            end = min(self._head + window, self._tail)
            s, t = self._log_slot[self._head:end], self._log_stamp[self._head:end]
            live = self.stamp[s] == t
            freed = np.where(live, np.bitwise_count(self.mask[s]).astype(np.int64) * self.unit[s], 0)
            cum = np.cumsum(freed)
            enough = np.flatnonzero(self.used - cum <= self.capacity)
            stop = int(enough[0]) + 1 if len(enough) else end - self._head
            gone = s[:stop][live[:stop]]
            self.mask[gone] = 0
            self.dirty[gone] = 0
            self.stamp[gone] = -1
            self.used -= int(cum[stop - 1])
            self._head += stop
            window *= 2

    def parts(self, r: Rec) -> _Parts | None:
        """The lines (or the whole-copy key) a GM access touches; None when the record's GM span does
        not describe its bytes (a counterfactual that rescaled the copy: counted as a miss)."""
        gm = r.gm
        if gm is None:
            if not (r.gm_at and r.bytes):
                return None
            key = (r.gm_at, r.bytes, r.b)
            slot = self._whole.get(key)
            if slot is None:
                slot = self._whole[key] = self._slots(1, r.bytes)
            return np.array([slot], np.int64), np.ones(1, np.uint64), r.bytes, 1
        if gm.count != max(r.b, 1) or abs(gm.burst * gm.count - r.bytes) >= 32 * gm.count:
            return None
        # the cores of a wave read the same tiles: a span's parts are made once (slots never move)
        got = self._spans.get(gm)
        if got is None:
            if len(self._spans) >= 8192:
                self._spans.clear()
            got = self._spans[gm] = self._span_parts(gm)
        return got

    def _span_parts(self, gm: GmSpan) -> _Parts:
        line, per = self.line, _CHUNK_LINES
        if gm.gap == 0 or gm.count <= 1:
            first, last = gm.addr // line, (gm.addr + gm.burst * gm.count - 1) // line
            if first // per == last // per:  # the common small copy: one chunk
                bits = ((1 << (last - first + 1)) - 1) << (first % per)
                return (self._chunk_slots(np.array([first // per], np.int64)), np.array([bits], np.uint64), line,
                        last - first + 1)
            lines = np.arange(first, last + 1, dtype=np.int64)
        else:
            starts = gm.addr + np.arange(gm.count, dtype=np.int64) * (gm.burst + gm.gap)
            firsts, lasts = starts // line, (starts + gm.burst - 1) // line
            counts = lasts - firsts + 1
            if (counts == 1).all():
                lines = firsts
            else:  # each burst's lines in turn
                offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
                lines = np.repeat(firsts, counts) + offsets
        chunks = lines // per
        bits = np.left_shift(np.uint64(1), (lines % per).astype(np.uint64))
        if len(lines) > 1 and gm.burst + gm.gap >= line * per and gm.burst <= line:
            heads = None  # bursts a chunk or more apart, each in one line: one chunk each
        else:
            heads = np.concatenate([[0], np.flatnonzero(np.diff(chunks)) + 1])
            chunks, bits = chunks[heads], np.bitwise_or.reduceat(bits, heads)
        return self._chunk_slots(chunks), bits, line, len(lines)


def _events(recs: list[Rec]) -> list[int]:
    """A block's GM accesses and cross-core flag sets and waits in program order (record indices)."""
    return [i for i, r in enumerate(recs) if r.kind in ("xset", "xwait")
            or ((r.gm is not None or r.gm_at) and r.kind == "I" and r.pipe in _GM_PIPES)]


_GM_PIPES = ("MTE2", "MTE3", "FIX")
_Step = list[tuple[int, Rec, int]]  # (block, access record, its index) of one lockstep step


def _steps(trace: Trace, wave: list[int]) -> Iterator[_Step]:
    """The wave's accesses in lockstep steps, the k-th access of every block in step k, except that a
    block reaching a cross-core wait stalls until every set of that synchronisation (the wait's id)
    has been passed by its block: a mixed kernel's AIVs read a workspace only after the AIC wrote it.
    A wait whose sets never come (a truncated trace) is passed when nothing else can move."""
    streams = {b: (trace.blocks[b], _events(trace.blocks[b])) for b in wave}
    owed: dict[int, int] = defaultdict(int)  # synchronisation id -> its sets not yet passed
    for recs, ev in streams.values():
        for i in ev:
            if recs[i].kind == "xset":
                owed[recs[i].b] += 1
    at = dict.fromkeys(streams, 0)
    while any(at[b] < len(ev) for b, (_, ev) in streams.items()):
        step: _Step = []
        moved = True
        while moved:  # pass sets and released waits until each block stands at an access or a held wait
            moved = False
            for b, (recs, ev) in streams.items():
                while at[b] < len(ev) and recs[ev[at[b]]].kind != "I":
                    r = recs[ev[at[b]]]
                    if r.kind == "xwait" and owed[r.b] > 0:
                        break
                    if r.kind == "xset":
                        owed[r.b] -= 1
                    at[b] += 1
                    moved = True
        for b, (recs, ev) in streams.items():
            if at[b] < len(ev) and recs[ev[at[b]]].kind == "I":
                step.append((b, recs[ev[at[b]]], ev[at[b]]))
                at[b] += 1
        if not step:  # every block is done or holds at a wait: let the first one held pass
            held = [b for b, (_, ev) in streams.items() if at[b] < len(ev)]
            if held:
                recs, ev = streams[held[0]]
                owed[recs[ev[at[held[0]]]].b] = 0
            continue
        yield step


def replay(trace: Trace, waves: list[list[int]], capacity: int, line: int) -> L2Result:
    """The launch's GM accesses over the L2 cache, wave after wave (`waves`: the blocks that run at
    once), each wave in lockstep steps (the module's docstring), held at cross-core waits in a mixed
    kernel (_steps). An access's parts are made when its step comes (a large launch's would not
    fit in memory at once)."""
    cache = LruL2(capacity, line)
    out = L2Result()
    for wave in waves:
        for accesses in _steps(trace, wave):
            step = [(b, r, i, cache.parts(r)) for b, r, i in accesses]
            shared = len(step) > 1  # several cores: count what this step's reads asked for at once
            for b, r, i, parts in step:
                if r.pipe == "MTE2":
                    _look_up(cache, out, b, r.bytes, i, parts, shared)
            if shared:
                cache.end_step([parts[0] for _, _, _, parts in step if parts is not None])
            for _, r, _, parts in step:
                if parts is not None:
                    again = cache.touch(parts, write=r.pipe != "MTE2")
                    out.rewrite_bytes += round(r.bytes * again / parts[3]) if again else 0
    return out


def _look_up(cache: LruL2, out: L2Result, block: int, nbytes: int, i: int, parts: _Parts | None,
             shared: bool) -> None:
    out.read_bytes += nbytes
    if parts is None:
        return
    held, asked = cache.probe(parts)
    if held:
        out.hits.setdefault(block, {})[i] = held / asked
        out.hit_bytes += round(nbytes * held / asked)
    if shared:
        missed = cache.missed_in(parts)
        if missed:
            out.shared_fill_bytes += round(nbytes * missed / asked)
