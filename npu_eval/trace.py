"""The emulator's per-block instruction trace (written by sim/include/sage_sim/harness.h;
file names and columns in npu_eval/protocol.py).

One line per API call, tab-separated, blocks introduced by `B <fiber> <core> <idx>` (core AIC or
AIV; a mixed launch numbers its AICs and AIVs apart by fiber, `idx` is GetBlockIdx on the core):
`kind pipe api dtype elems bytes loc a b w_addr w_bytes r0_addr r0_bytes r1_addr r1_bytes gm_addr gm_burst
gm_gap`
kinds: I (an instruction on a pipe; for GM transfers a = the GM address modulo 512 and
b = the number of bursts; a GM<->UB DataCopy's GM span in the gm_ columns, `GmSpan`; other GM transfers
give gm_addr alone, `Rec.gm_at`), alloc,
free, enque, deque (a = queue id, b = slot),
setflag, waitflag (a = HardEvent, b = event id), barrier (a = pipe_t), xset and xwait (a cross-core
flag's set and the wait it released: a = flag id, b = the synchronisation's id, shared by the sets
that made an increment and the wait that took it), unitflag (just before a Mmad's or Fixpipe's I record
with unitFlag 2 or 3: a = the unitFlag, w = the L0C bytes it writes or reads).
`loc` is an id into locs.tsv (id, line, file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.build import PathMap


@dataclass(frozen=True, slots=True)
class GmSpan:
    """The GM bytes a DataCopy moved: `count` bursts of `burst` bytes, the first at the absolute
    address `addr`, each `gap` bytes after the end of the one before."""

    addr: int
    burst: int
    count: int
    gap: int = 0

    @property
    def end(self) -> int:
        """One past the last byte moved."""
        return self.addr + self.count * (self.burst + self.gap) - self.gap

    def bursts(self) -> list[tuple[int, int]]:
        """Each burst as (start, end), consecutive bursts merged when no gap parts them."""
        if self.gap == 0 or self.count <= 1:
            return [(self.addr, self.end)]
        step = self.burst + self.gap
        return [(self.addr + i * step, self.addr + i * step + self.burst) for i in range(self.count)]

    def _hits(self, lo: int, hi: int) -> bool:
        """Whether [lo, hi) holds a byte of these (one step of arithmetic, whatever the count)."""
        lo, hi = max(lo, self.addr), min(hi, self.end)
        if lo >= hi or self.gap == 0:
            return lo < hi
        step = self.burst + self.gap
        first = self.addr + (lo - self.addr) // step * step
        return lo < first + self.burst or hi > first + step

    def covers(self, other: GmSpan) -> bool:
        """Whether every byte of `other` is one of these."""
        if other.addr < self.addr or other.end > self.end:
            return False
        if self == other or self.gap == 0 or self.count <= 1:
            return True
        step = self.burst + self.gap
        return all(hi <= self.addr + (lo - self.addr) // step * step + self.burst for lo, hi in other.bursts())

    def overlaps(self, other: GmSpan) -> bool:
        """Whether a byte of `other` is one of these."""
        if other.addr >= self.end or self.addr >= other.end:
            return False
        return any(self._hits(lo, hi) for lo, hi in other.bursts())


@dataclass(slots=True)
class Rec:
    kind: str
    pipe: str
    api: str
    dtype: str
    elems: int
    bytes: int
    loc: int
    a: int
    b: int
    w: tuple[int, int]
    r0: tuple[int, int]
    r1: tuple[int, int]
    gm: GmSpan | None = None  # a GM<->UB DataCopy's GM span
    gm_at: int = 0  # a GM transfer's GM address when its span is not recorded (Fixpipe, ...)


@dataclass
class Trace:
    blocks: dict[int, list[Rec]]
    locs: dict[int, tuple[str, int]]  # id -> (file, line)
    truncated: bool = False           # the harness stopped recording (record cap per block)
    cores: dict[int, tuple[str, int]] = field(default_factory=dict)  # block -> (AIC/AIV, GetBlockIdx)

    def where(self, loc: int) -> tuple[str, int]:
        return self.locs.get(loc, ("", 0))


def read_trace(trace_path: Path, locs_path: Path, paths: PathMap | None = None) -> Trace:
    """The trace and its locations, their files back in the user's folder (`paths`: the
    neutral names the binary was built under)."""
    paths = paths or PathMap()
    locs: dict[int, tuple[str, int]] = {}
    for ln in locs_path.read_text(errors="replace").splitlines():
        parts = ln.split("\t")
        if len(parts) >= 3:
            locs[int(parts[0])] = (paths.to_real(parts[2]), int(parts[1]))
    blocks: dict[int, list[Rec]] = {}
    cores: dict[int, tuple[str, int]] = {}
    cur: list[Rec] | None = None
    truncated = False
    # A loop's records repeat line for line (its flags, its L1 -> L0 loads): one Rec serves each
    # distinct line among the recent ones (records are never changed in place), which keeps a
    # large kernel's millions of records in memory and skips re-parsing them.
    seen: dict[str, Rec] = {}
    with open(trace_path, errors="replace") as f:
        for ln in f:
            rec = seen.get(ln)
            if rec is not None and cur is not None:
                cur.append(rec)
                continue
            p = ln.rstrip("\n").split("\t")
            if p[0] == protocol.TRACE_TRUNCATED:
                truncated = True
                continue
            if p[0] == protocol.TRACE_BLOCK:
                cur = blocks.setdefault(int(p[1]), [])
                cores[int(p[1])] = (p[2], int(p[3])) if len(p) >= 4 else ("AIV", int(p[1]))
                continue
            if cur is None or len(p) < len(protocol.TRACE_COLUMNS):
                continue
            # only the copies carry a GM span (and one of no bursts moved nothing): the other records
            # skip its three int()s
            gm = GmSpan(int(p[15]), int(p[16]), int(p[8]), int(p[17])) if p[16] != "0" and p[8] != "0" else None
            # a transfer without a span still names its GM address (the L2 model keys it on that)
            at = int(p[15]) if gm is None and p[15] != "0" else 0
            rec = Rec(p[0], p[1], p[2], p[3], int(p[4]), int(p[5]), int(p[6]), int(p[7]), int(p[8]),
                      (int(p[9]), int(p[10])), (int(p[11]), int(p[12])), (int(p[13]), int(p[14])), gm, at)
            if len(seen) >= 1 << 16:
                seen.clear()
            seen[ln] = rec
            cur.append(rec)
    return Trace(blocks, locs, truncated, cores)
