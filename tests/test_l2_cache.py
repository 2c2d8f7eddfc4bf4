"""The cost model's L2 cache (npu_eval/l2cache.py, docs/cost-model.md "L2 cache"; issues 18, 19).

Synthetic traces (what the emulator records per copy, with its GM span), so nothing compiles.
Assertions are ratios and orderings, never absolute times.
"""

from __future__ import annotations

import pytest

from sage_npu.cli import format_profile
from sage_npu.npu_eval.advisor import double_buffered, halved
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.cost_model import estimate
from sage_npu.npu_eval.costs import default_costs
from sage_npu.npu_eval.l2cache import LruL2, replay
from sage_npu.npu_eval.report import Report
from sage_npu.npu_eval.timing import timing_of
from sage_npu.npu_eval.trace import GmSpan, Rec, Trace

CHIP = chip_profile("910B2")
COSTS = default_costs(910)
TILE = 32768  # bytes per copy: the public large-load case (>= 25,000 bytes)
BASE = 1 << 32  # GM addresses: anywhere, 512-byte aligned


def _copy(pipe: str, addr: int, nbytes: int = TILE, span: bool = True) -> Rec:
    gm = GmSpan(addr, nbytes, 1) if span else None
    return Rec("I", pipe, "DataCopy", "float32", nbytes // 4, nbytes, 1, 0, 1, (0, nbytes), (0, 0), (0, 0), gm,
               0 if span else addr)


def _loads(addrs: list[int], span: bool = True) -> list[Rec]:
    return [_copy("MTE2", a, span=span) for a in addrs]


def _trace(blocks: dict[int, list[Rec]]) -> Trace:
    return Trace(blocks, {1: ("k.cpp", 1)})


def _us(blocks: dict[int, list[Rec]], chip=CHIP) -> float:
    return estimate(_trace(blocks), chip, COSTS, len(blocks)).estimated_us


def _mte2_busy(blocks: dict[int, list[Rec]]) -> float:
    e = estimate(_trace(blocks), CHIP, COSTS, len(blocks))
    return sum(s.busy["MTE2"] for s in e.schedules)


def test_re_reading_one_block_is_faster_than_reading_distinct_blocks():
    n = 64
    same = _loads([BASE] * n)
    distinct = _loads([BASE + i * TILE for i in range(n)])
    assert _us({0: same}) < 0.5 * _us({0: distinct})
    # the first read comes from HBM, the other n - 1 from L2 at l2_read_speedup times the rate
    ratio = _mte2_busy({0: same}) / _mte2_busy({0: distinct})
    assert 1 / COSTS.l2_read_speedup < ratio < 1.0


def test_a_working_set_past_the_l2_capacity_loses_the_benefit():
    """Two passes over a working set: the second hits when the set fits in L2 and, with LRU over a
    streaming pass, misses everything when it is larger (the 192 MB of the 910B)."""
    def two_passes(working_set: int) -> list[Rec]:
        one = [BASE + i * TILE for i in range(working_set // TILE)]
        return _loads(one + one)

    def one_pass(working_set: int) -> list[Rec]:
        return _loads([BASE + i * TILE for i in range(working_set // TILE)])

    fits, past = CHIP.l2_bytes // 2, CHIP.l2_bytes * 5 // 4
    fits_ratio = _mte2_busy({0: two_passes(fits)}) / _mte2_busy({0: one_pass(fits)})
    past_ratio = _mte2_busy({0: two_passes(past)}) / _mte2_busy({0: one_pass(past)})
    assert fits_ratio < 1.5
    assert abs(past_ratio - 2.0) < 0.01


def test_a_smaller_l2_loses_the_benefit_at_a_smaller_working_set():
    working_set = [BASE + i * TILE for i in range(64)]
    blocks = {0: _loads(working_set + working_set)}
    small = CHIP.model_copy(update={"l2_bytes": 32 * TILE})
    assert _us(blocks) < _us(blocks, small)
    assert _us(blocks, small) == _us({0: _loads([BASE + i * TILE for i in range(128)])}, small)


def test_a_read_of_bytes_written_before_hits():
    addr = BASE
    written = [_copy("MTE3", addr), _copy("MTE2", addr)]
    elsewhere = [_copy("MTE3", addr + TILE), _copy("MTE2", addr)]
    r_written = replay(_trace({0: written}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    r_elsewhere = replay(_trace({0: elsewhere}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert r_written.hits == {0: {1: 1.0}} and r_written.hit_bytes == TILE
    assert r_elsewhere.hits == {} and r_elsewhere.hit_bytes == 0


def test_cores_reading_the_same_bytes_at_once_all_wait_for_hbm_then_hit():
    """Step k of every core is looked up before any of it is brought in: the first read of shared
    bytes misses on every core; a later read of them hits on every core."""
    shared = _loads([BASE, BASE])
    r = replay(_trace({0: shared, 1: list(shared)}), [[0, 1]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert r.hits == {0: {1: 1.0}, 1: {1: 1.0}}
    # blocks in a later wave (the same cores, afterwards) find what the first wave read
    r = replay(_trace({0: shared[:1], 1: shared[:1]}), [[0], [1]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert r.hits == {1: {0: 1.0}}


def test_partial_overlap_hits_only_the_lines_read_before():
    line = COSTS.l2_line_bytes
    first = _copy("MTE2", BASE, 4 * line)
    half_new = _copy("MTE2", BASE + 2 * line, 4 * line)
    r = replay(_trace({0: [first, half_new]}), [[0]], CHIP.l2_bytes, line)
    assert r.hits == {0: {1: 0.5}}


def test_strided_bursts_hit_only_their_own_lines():
    """A column tile of a row-major matrix (bursts with a gap) then the next column tile: no byte in
    common, so no hit, though the spans interleave."""
    row, col = 2048, 128
    left = Rec("I", "MTE2", "DataCopy", "float16", 64 * 64, 64 * col, 1, 0, 64, (0, 0), (0, 0), (0, 0),
               GmSpan(BASE, col, 64, row - col))
    right = Rec("I", "MTE2", "DataCopy", "float16", 64 * 64, 64 * col, 1, 0, 64, (0, 0), (0, 0), (0, 0),
                GmSpan(BASE + col, col, 64, row - col))
    r = replay(_trace({0: [left, right, left]}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert r.hits == {0: {2: 1.0}}


def test_a_copy_without_a_recorded_span_hits_when_re_read_whole():
    """ND -> NZ GM -> L1 copies record their GM address but not their span: the same address and shape
    again hits; another shape at that address does not."""
    again = _loads([BASE, BASE], span=False)
    other = [_copy("MTE2", BASE, span=False), _copy("MTE2", BASE, TILE // 2, span=False)]
    assert replay(_trace({0: again}), [[0]], CHIP.l2_bytes, 128).hits == {0: {1: 1.0}}
    assert replay(_trace({0: other}), [[0]], CHIP.l2_bytes, 128).hits == {}


def test_a_copy_whose_span_no_longer_fits_its_bytes_is_a_miss():
    """A span that does not describe the record's bytes (a record rescaled and the span kept): the
    model does not guess a hit."""
    cache = LruL2(CHIP.l2_bytes, 128)
    r = _copy("MTE2", BASE)
    halved = Rec(r.kind, r.pipe, r.api, r.dtype, r.elems // 2, r.bytes // 2, r.loc, r.a, r.b, r.w, r.r0, r.r1, r.gm)
    assert cache.parts(r) and cache.parts(halved) is None


def test_the_roofline_counts_hits_at_the_l2_rate():
    n = 64
    same = estimate(_trace({0: _loads([BASE] * n)}), CHIP, COSTS, 1)
    distinct = estimate(_trace({0: _loads([BASE + i * TILE for i in range(n)])}), CHIP, COSTS, 1)
    assert same.l2_hit_bytes == (n - 1) * TILE and distinct.l2_hit_bytes == 0
    assert same.gm_read_bytes == distinct.gm_read_bytes == n * TILE
    assert same.roofline_us < distinct.roofline_us


def test_bytes_several_cores_read_at_once_cost_each_core_a_miss_but_hbm_moves_them_once():
    cores, n = 8, 16
    same = {b: _loads([BASE + i * TILE for i in range(n)]) for b in range(cores)}
    apart = {b: _loads([BASE + (b * n + i) * TILE for i in range(n)]) for b in range(cores)}
    e_same, e_apart = (estimate(_trace(t), CHIP, COSTS, cores) for t in (same, apart))
    assert e_same.l2_hit_bytes == e_apart.l2_hit_bytes == 0
    assert e_same.cycles == e_apart.cycles  # every core waits for the fill: no core is faster
    r = replay(_trace(same), [list(range(cores))], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert r.shared_fill_bytes == (cores - 1) * n * TILE
    assert e_same.roofline_us < e_apart.roofline_us


def _round_trips(slots: int, n: int) -> list[Rec]:
    """A workspace written and read straight back n times, through `slots` tiles used in turn."""
    out: list[Rec] = []
    for i in range(n):
        at = BASE + i % slots * TILE
        out += [_copy("MTE3", at), _copy("MTE2", at)]
    return out


def test_a_workspace_rewritten_in_place_reaches_hbm_once_a_line():
    """L2 is write-back: a write over lines an earlier write left dirty reaches HBM once, when the line
    leaves, so two tiles rewritten 32 times cost the roofline what the distinct tiles would not."""
    n = 64
    reused = replay(_trace({0: _round_trips(2, n)}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    fresh = replay(_trace({0: _round_trips(n, n)}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert reused.rewrite_bytes == (n - 2) * TILE and fresh.rewrite_bytes == 0
    assert reused.hit_bytes == fresh.hit_bytes == n * TILE  # every read-back hits either way
    e_reused, e_fresh = (estimate(_trace({0: _round_trips(k, n)}), CHIP, COSTS, 1) for k in (2, n))
    assert e_reused.roofline_us < e_fresh.roofline_us


def test_a_write_over_lines_a_read_brought_in_is_not_a_rewrite():
    """A line read and then written is dirtied by that write (one write-back); a dirty line evicted
    and written again is dirtied afresh."""
    r = replay(_trace({0: [_copy("MTE2", BASE), _copy("MTE3", BASE)]}), [[0]], CHIP.l2_bytes,
               COSTS.l2_line_bytes)
    assert r.rewrite_bytes == 0
    small = 4 * TILE
    past = [_copy("MTE3", BASE)] + _loads([BASE + (i + 1) * TILE for i in range(8)]) + [_copy("MTE3", BASE)]
    assert replay(_trace({0: past}), [[0]], small, COSTS.l2_line_bytes).rewrite_bytes == 0
    near = [_copy("MTE3", BASE)] + _loads([BASE + TILE]) + [_copy("MTE3", BASE)]
    assert replay(_trace({0: near}), [[0]], small, COSTS.l2_line_bytes).rewrite_bytes == TILE


def _flag(kind: str, sync: int) -> Rec:
    return Rec(kind, "FIX", "CrossCoreSetFlag" if kind == "xset" else "CrossCoreWaitFlag", "", 0, 0, 1, 5, sync,
               (0, 0), (0, 0), (0, 0))


def test_a_read_behind_a_cross_core_wait_comes_after_the_set_and_finds_the_bytes_written():
    """A mixed kernel's hand-over: the AIC loads A, writes C to the workspace and sets the flag; the
    AIV waits, then reads C back. In plain lockstep the AIV's read (its first access) would be looked
    up beside the AIC's first load, before C was written; held at the wait it comes after, and hits."""
    aic = [_copy("MTE2", BASE), _copy("MTE3", BASE + 4 * TILE), _flag("xset", 7)]
    aiv = [_flag("xwait", 7), _copy("MTE2", BASE + 4 * TILE)]
    r = replay(_trace({0: aic, 1: aiv}), [[0, 1]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert r.hits == {1: {1: 1.0}} and r.hit_bytes == TILE
    # a wait whose set the trace never recorded (truncated) is passed, not a hang
    lost = replay(_trace({0: aic[:2], 1: aiv}), [[0, 1]], CHIP.l2_bytes, COSTS.l2_line_bytes)
    assert lost.read_bytes == 2 * TILE


def test_every_l2_figure_names_its_source():
    for key in ("l2_read_speedup", "l2_line_bytes"):
        assert "asc-devkit@82b89a15f263" in COSTS.sources[key]
        assert "assumption" in COSTS.sources[key]
    assert "3 to 4 times" in COSTS.sources["l2_read_speedup"]
    assert "assumption for 310P3" in default_costs(310).sources["l2_read_speedup"]
    assert "L2-Cache切分.md:5" in CHIP.sources["memory"]


def test_the_cube_core_rate_is_the_mdl_page_lower_bound():
    """One cube core's GM -> L1 rate from HBM: asc-devkit's MDL guide page (Matmul高阶API使能MDL模板.md at
    82b89a15f263) runs M = 128, K = 1024, N = 30720 half on 24 cores, singleCoreN 1280, base [128, 256, 64],
    depthA1 8 (lines 55-60): each core reads its own 1280 columns of B once, from HBM, and A (its depth holds
    half of K) once per 256-wide block of N, five times, from L2 after the one fill; MTE2 took 46.24 us on
    average (line 121). With A at the core's share of the 5 TB/s L2, the rate that alone accounts for the
    rest is the figure; any per-copy time would make the stream faster still, so it is a lower bound."""
    cores, clock_ghz = 24, 1.8
    b_bytes = 1024 * 1280 * 2
    a_bytes = 5 * 128 * 1024 * 2
    l2_share = COSTS.cube_load_l2_gbps / (cores * clock_ghz)
    cycles = 46.24 * clock_ghz * 1e3
    rate = b_bytes / (cycles - a_bytes / l2_share)
    assert COSTS.cube_load_core_bytes_per_cycle == pytest.approx(rate, rel=0.01)
    assert COSTS.l2_read_speedup * rate > l2_share  # A's reads do stream at the share, as assumed
    assert rate < COSTS.cube_load_hbm_gbps / (cores * clock_ghz)  # and B's at this rate, under the HBM share
    assert "MDL模板.md:55-60, 121" in COSTS.sources["cube_load_core_bytes_per_cycle"]
    assert default_costs(310).cube_load_core_bytes_per_cycle is None


def test_a_transfer_without_a_span_keeps_its_gm_address(tmp_path):
    """A copy recording gm_addr with no burst (trace_gm_shape(addr, bursts): an ND -> NZ copy whose rows
    are no one regular pattern, a Fixpipe): read as `gm_at`; a copy with a span has gm_at 0, a vector
    instruction neither."""
    from sage_npu.npu_eval import protocol
    from sage_npu.npu_eval.trace import read_trace

    nd2nz = ["I", "MTE2", "DataCopy", "float16", "8192", "16384", "1", "0", "128", "0", "16384", "0", "0", "0",
             "0", "8192", "0", "0"]
    copy = ["I", "MTE2", "DataCopy", "float16", "64", "128", "1", "0", "1", "0", "128", "0", "0", "0", "0",
            "4096", "128", "0"]
    add = ["I", "V", "Add", "float16", "64", "128", "1", "0", "0", "0", "128", "0", "128", "0", "0", "0", "0", "0"]
    assert len(nd2nz) == len(copy) == len(add) == len(protocol.TRACE_COLUMNS)
    (tmp_path / protocol.TRACE).write_text(f"{protocol.TRACE_BLOCK}\t0\tAIV\t0\n" + "\n".join(
        "\t".join(r) for r in (nd2nz, copy, add)) + "\n")
    (tmp_path / protocol.LOCS).write_text("1\t7\tk.cpp\n")
    a, b, c = read_trace(tmp_path / protocol.TRACE, tmp_path / protocol.LOCS).blocks[0]
    assert (a.gm, a.gm_at) == (None, 8192)
    assert b.gm == GmSpan(4096, 128, 1) and b.gm_at == 0
    assert (c.gm, c.gm_at) == (None, 0)


def _distinct_tiles(span: bool) -> list[Rec]:
    """A tile loop reading distinct GM tiles (every read a first touch), one copy an iteration."""
    return [_copy("MTE2", BASE + i * TILE, span=span) for i in range(8)]


def test_the_single_buffer_split_halves_read_distinct_bytes():
    """The advisor's what-if splitting each iteration into two halves (double_buffered with split):
    each half reads its own part of the tile, so reading distinct tiles stays all misses, with or
    without a recorded span (a shared address and shape would make the second half a false hit)."""
    for span in (True, False):
        recs = double_buffered(_distinct_tiles(span), set(), split=True)
        assert len(recs) == 16
        r = replay(_trace({0: recs}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
        assert r.hits == {} and r.read_bytes == 8 * TILE


def test_the_split_halves_of_a_re_read_tile_hit_when_re_read():
    """The halves keep spans that describe their bytes: a tile read twice is, split, two halves read
    twice, and the second reading of each half hits."""
    for span in (True, False):
        recs = double_buffered([_copy("MTE2", BASE, span=span)] * 2, set(), split=True)
        r = replay(_trace({0: recs}), [[0]], CHIP.l2_bytes, COSTS.l2_line_bytes)
        assert r.hits == {0: {2: 1.0, 3: 1.0}}


def test_a_halved_multi_burst_copy_splits_its_bursts():
    r = _copy("MTE2", BASE)
    many = Rec(r.kind, r.pipe, r.api, r.dtype, r.elems, 5 * 256, r.loc, r.a, 5, r.w, r.r0, r.r1,
               GmSpan(BASE, 256, 5, 768))
    first, second = halved(many, 0), halved(many, 1)
    assert (first.gm, second.gm) == (GmSpan(BASE, 256, 2, 768), GmSpan(BASE + 2 * 1024, 256, 3, 768))
    assert (first.b, second.b, first.bytes + second.bytes) == (2, 3, 5 * 256)


def test_the_profile_shows_the_gm_reads_the_l2_served_and_what_they_saved():
    """`--profile` on a kernel re-reading one block: every read but the first comes from L2, and the
    MTE2 time saved is what the hits would have cost more at the HBM rate (here, one core with
    nothing else on MTE2, the whole difference from reading distinct blocks)."""
    n = 64
    same = _trace({0: _loads([BASE] * n)})
    est = estimate(same, CHIP, COSTS, 1)
    assert (est.gm_read_bytes, est.l2_hit_bytes) == (n * TILE, (n - 1) * TILE)
    saved_cycles = _mte2_busy({0: _loads([BASE + i * TILE for i in range(n)])}) - _mte2_busy({0: same.blocks[0]})
    assert est.l2_saved_us == pytest.approx(saved_cycles / (CHIP.clock_ghz * 1e3))
    timing = timing_of(est, same, CHIP)
    assert (timing.gm_read_bytes, timing.l2_hit_bytes, timing.l2_saved_us) == (
        n * TILE, (n - 1) * TILE, round(est.l2_saved_us, 4))
    out = format_profile(Report(task="t", kernel="k", status="correct", timing=timing))
    assert (f"GM reads {n * TILE:,} bytes, {(n - 1) * TILE:,} (98.4%) from the L2 cache, saving est. "
            f"{timing.l2_saved_us:.3f} us (CPU model) of MTE2 time (slowest core)") in out

