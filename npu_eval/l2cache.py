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
finds them in L2. Waves follow one another (the blocks of wave w + 1 run after those of wave w on
the same cores).

Granularity: 128-byte cache lines (an assumption: CostTable.sources["l2_line_bytes"]), tracked in
chunks of 64 lines whose recency is the chunk's; eviction removes the least recently used chunk.
A copy whose GM span the trace does not record (an irregular ND -> NZ GM -> L1, sliced DataCopy,
Fixpipe) is tracked as a whole: a re-read of the same address and shape hits, a partial overlap with another
access is not seen (counted as a miss).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from sage_npu.npu_eval.trace import Rec, Trace

_CHUNK_LINES = 64  # lines per LRU entry: a 64-bit mask of the lines held


@dataclass
class L2Result:
    """What the replay found: for each block, record index -> share of that read's bytes in L2."""

    hits: dict[int, dict[int, float]] = field(default_factory=dict)
    hit_bytes: int = 0    # GM bytes read from L2
    read_bytes: int = 0   # GM bytes read in all (hits and HBM)
    # missed bytes another core of the same step had already asked for: each core waits for the one
    # fill (charged as a miss), but HBM moves them once (the roofline counts them at the L2 rate)
    shared_fill_bytes: int = 0


# What an access touches, as parts (key, mask, bytes per mask bit): a key is a chunk index (int, its
# mask the chunk's lines) or, for a copy without a recorded span, the copy's (address, bytes, bursts)
# with mask 1.
_Part = tuple[object, int, int]


class LruL2:
    """An LRU cache of `capacity` bytes over `line`-byte lines."""

    def __init__(self, capacity: int, line: int) -> None:
        self.capacity, self.line = capacity, line
        self.held: OrderedDict[object, tuple[int, int]] = OrderedDict()  # key -> (mask, bytes a bit)
        self.used = 0

    def probe(self, parts: list[_Part]) -> tuple[int, int]:
        """(bytes held, bytes asked) of an access, without touching the cache."""
        held = asked = 0
        for key, mask, unit in parts:
            asked += mask.bit_count() * unit
            got = self.held.get(key)
            if got is not None:
                held += (mask & got[0]).bit_count() * unit
        return held, asked

    def missed_in(self, parts: list[_Part], fetched: dict[object, int]) -> int:
        """Bytes of an access that this cache does not hold and `fetched` (key -> mask) does; then the
        access is added to `fetched`."""
        n = 0
        for key, mask, unit in parts:
            got = fetched.get(key, 0)
            if got & mask:
                mine = self.held.get(key)
                n += (mask & got & ~(mine[0] if mine else 0)).bit_count() * unit
            fetched[key] = got | mask
        return n

    def touch(self, parts: list[_Part]) -> None:
        """Bring an access's lines in (or refresh them) as the most recent; evict past capacity."""
        held = self.held
        for key, mask, unit in parts:
            got = held.get(key)
            if got is None:
                held[key] = (mask, unit)
                self.used += mask.bit_count() * unit
                continue
            new = got[0] | mask
            if new != got[0]:
                held[key] = (new, unit)
                self.used += (new.bit_count() - got[0].bit_count()) * unit
            held.move_to_end(key)
        while self.used > self.capacity and held:
            _, (mask, unit) = held.popitem(last=False)
            self.used -= mask.bit_count() * unit

    def parts(self, r: Rec) -> list[_Part] | None:
        """The lines (or the whole-copy key) a GM access touches; None when the record's GM span does
        not describe its bytes (a counterfactual that rescaled the copy: counted as a miss)."""
        gm = r.gm
        if gm is None:
            return [((r.gm_at, r.bytes, r.b), 1, r.bytes)] if r.gm_at and r.bytes else None
        if gm.count != max(r.b, 1) or abs(gm.burst * gm.count - r.bytes) >= 32 * gm.count:
            return None
        line, per = self.line, _CHUNK_LINES
        contiguous = gm.gap == 0 or gm.count <= 1
        if contiguous:
            first, last = gm.addr // line, (gm.addr + gm.burst * gm.count - 1) // line
            if first // per == last // per:  # the common small copy: one chunk
                return [(first // per, ((1 << (last - first + 1)) - 1) << (first % per), line)]
        masks: dict[int, int] = {}
        for lo, hi in ((gm.addr, gm.addr + gm.burst * gm.count),) if contiguous else gm.bursts():
            first, last = lo // line, (hi - 1) // line
            while first <= last:
                chunk = first // per
                top = min(last, chunk * per + per - 1)
                bits = ((1 << (top - first + 1)) - 1) << (first - chunk * per)
                masks[chunk] = masks.get(chunk, 0) | bits
                first = top + 1
        return [(k, m, line) for k, m in masks.items()]


def _accesses(cache: LruL2, recs: list[Rec]) -> list[tuple[int, bool, list[_Part] | None]]:
    """A block's GM accesses in program order: (record index, is a read, parts)."""
    return [(i, r.pipe == "MTE2", cache.parts(r)) for i, r in enumerate(recs)
            if (r.gm is not None or r.gm_at) and r.kind == "I" and r.pipe in _GM_PIPES]


_GM_PIPES = ("MTE2", "MTE3", "FIX")


def replay(trace: Trace, waves: list[list[int]], capacity: int, line: int) -> L2Result:
    """The launch's GM accesses over the L2 cache, wave after wave (`waves`: the blocks that run at
    once), each wave in lockstep steps (the module's docstring)."""
    cache = LruL2(capacity, line)
    out = L2Result()
    for wave in waves:
        streams = [(b, trace.blocks[b], _accesses(cache, trace.blocks[b])) for b in wave]
        for k in range(max((len(s) for _, _, s in streams), default=0)):
            step = [(b, recs, s[k]) for b, recs, s in streams if k < len(s)]
            fetched: dict[object, int] | None = {} if len(step) > 1 else None  # what this step's reads asked for
            for b, recs, (i, is_read, parts) in step:
                if is_read:
                    _look_up(cache, out, b, recs[i].bytes, i, parts, fetched)
            for _, _, (_, _, parts) in step:
                if parts:
                    cache.touch(parts)
    return out


def _look_up(cache: LruL2, out: L2Result, block: int, nbytes: int, i: int, parts: list[_Part] | None,
             fetched: dict[object, int] | None) -> None:
    out.read_bytes += nbytes
    if not parts:
        return
    held, asked = cache.probe(parts)
    if held:
        out.hits.setdefault(block, {})[i] = held / asked
        out.hit_bytes += round(nbytes * held / asked)
    if fetched is not None:
        shared = cache.missed_in(parts, fetched)
        if shared:
            out.shared_fill_bytes += round(nbytes * shared / asked)
