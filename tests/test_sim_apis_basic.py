"""Basic APIs the official samples use that the emulator gained for them: Copy (UB -> UB, the
mask/repeat forms with CopyRepeatParams, including its own Counter-mode rule) and
GlobalTensor::SetL2CacheHint with CacheMode.

One C++ driver (DRIVER below) runs every API outside a launch and dumps its outputs; the
expectations here are recomputed with numpy from the API's documented semantics (its
asc-devkit doc page). Provoked faults are checked for code and line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
// The three scenarios of the copy_ub2ub sample's doc page, on other sizes, plus a bit mask,
// repeatTime 0 and a repeat stride past its range.
static void copies() {
    LocalMemAllocator<Hardware::UB> a;
    auto src = a.Alloc<int32_t, 18 * 64>();
    fill(src, 18 * 64, [](uint32_t i) { return int32_t(i * 3 + 1); });
    auto whole = a.Alloc<int32_t, 512>();
    fill(whole, 512, [](uint32_t) { return -1; });
    Copy(whole, src, 64, 8, {1, 1, 8, 8});  // 8 full repeats, contiguous
    dump("copy_contiguous", whole, 512);
    auto rows = a.Alloc<int32_t, 18 * 8>();
    fill(rows, 18 * 8, [](uint32_t) { return -1; });
    Copy(rows, src, 8, 18, {1, 1, 1, 8});  // the first 8 of each 64-element row
    dump("copy_rows", rows, 18 * 8);
    auto counter = a.Alloc<int32_t, 18 * 8>();
    fill(counter, 18 * 8, [](uint32_t) { return -1; });
    SetMaskCount();
    Copy(counter, src, 144, 1, {1, 8, 8, 8});  // Counter mode: 144 elements in one repeat, 18 blocks
    SetMaskNorm();
    dump("copy_counter", counter, 18 * 8);
    auto hs = a.Alloc<half, 512>();
    fill(hs, 512, [](uint32_t i) { return float(i) * 0.25f; });
    auto hd = a.Alloc<half, 256>();
    fill(hd, 256, [](uint32_t) { return -2.0f; });
    uint64_t mask[2] = {0x5555555555555555ull, 0xF0ull};
    Copy(hd, hs, mask, 2, {1, 2, 8, 16});  // even elements of 0..63 and 68..71; src blocks every other one
    dump("copy_bits", hd, 256);
    auto untouched = a.Alloc<float, 64>();
    fill(untouched, 64, [](uint32_t) { return 7.0f; });
    auto fsrc = a.Alloc<float, 64>();
    fill(fsrc, 64, [](uint32_t i) { return float(i); });
    Copy(untouched, fsrc, 64, 0, {1, 1, 8, 8});  // repeatTime 0: a no-op on 910B
    dump("copy_none", untouched, 64);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        Copy(untouched, fsrc, 64, 1, {1, 1, 5000, 8});
    } catch (const sage::sim::KernelAbort&) {
    }
}

static void cache_hints() {
    std::vector<float> host(64, 1.5f);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(host.data(), 64);
    int32_t modes[3];
    modes[0] = int32_t(g.cacheMode_);
    g.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
    modes[1] = int32_t(g.cacheMode_);
    g.SetL2CacheHint<CacheRwMode::READ>(CacheMode::CACHE_MODE_NORMAL);
    modes[2] = int32_t(g.cacheMode_);
    write_raw("cache_modes", modes, sizeof modes);
}

""" + main_calling("copies();", "cache_hints();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("apis_basic"), DRIVER)


def strided_copy(src, dst, size, reps, per, blk_d, blk_s, rep_d, rep_s, active=lambda r, k: True):
    """Copy's addressing (its doc page): element k of repeat r sits at block k // epb of the
    repeat; a repeat starts rep blocks after the last, a block blk blocks after the last."""
    out = dst.copy()
    epb = 32 // size
    for r in range(reps):
        for k in range(per):
            if active(r, k):
                d, s = (r * rep_d + k // epb * blk_d) * epb, (r * rep_s + k // epb * blk_s) * epb
                out[d + k % epb] = src[s + k % epb]
    return out


SRC = np.arange(18 * 64, dtype=np.int32) * 3 + 1


def test_copy_contiguous_repeats(run):
    assert np.array_equal(run("copy_contiguous", np.int32), SRC[:512])


def test_copy_rows_with_a_repeat_stride(run):
    assert np.array_equal(run("copy_rows", np.int32), SRC.reshape(18, 64)[:, :8].ravel())


def test_copy_counter_mode_counts_per_repeat_and_spans_more_than_8_blocks(run):
    want = strided_copy(SRC, np.full(144, -1, np.int32), 4, reps=1, per=144, blk_d=1, blk_s=8, rep_d=8, rep_s=8)
    assert np.array_equal(want, SRC.reshape(18, 64)[:, :8].ravel())  # what the doc page says it does
    assert np.array_equal(run("copy_counter", np.int32), want)


def test_copy_bit_mask_and_block_strides_in_half(run):
    src = (np.arange(512) * 0.25).astype(np.float16)
    lo, hi = 0x5555555555555555, 0xF0
    on = lambda r, k: bool((lo >> k) & 1) if k < 64 else bool((hi >> (k - 64)) & 1)  # noqa: E731
    want = strided_copy(src, np.full(256, -2.0, np.float16), 2, reps=2, per=128, blk_d=1, blk_s=2, rep_d=8,
                        rep_s=16, active=on)
    assert np.array_equal(run("copy_bits", np.float16), want)
    assert (run("copy_bits", np.float16) == -2.0).sum() == 256 - 2 * (32 + 4)


def test_copy_with_zero_repeats_writes_nothing(run):
    assert np.array_equal(run("copy_none", np.float32), np.full(64, 7.0, np.float32))


def test_copy_faults_at_the_call(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found = {(row[1], int(row[2])): row[3] for row in run.rows("FAULT")}
    assert expected and set(found) == expected, found
    assert any("dstRepeatSize 5000" in m and "[0, 4095]" in m for m in found.values()), found


def test_l2_cache_hint_is_kept_and_changes_no_value(run):
    # CacheMode's documented values: DISABLE 0, NORMAL 1; NORMAL is the default.
    assert list(run("cache_modes", np.int32)) == [1, 0, 1]
