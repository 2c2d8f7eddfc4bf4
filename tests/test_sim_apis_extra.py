"""CANN 9 additions and the gather/sort/transpose families of the emulator (block_idx,
LocalMemAllocator, ascendc_assert, InitGlobalMemory, SyncAll with sage_sim/coop.h; the
basic_api gather, gather_mask, proposal and vec_transpose headers).

One C++ driver (DRIVER below) runs every API outside a launch and dumps its outputs; the
references here recompute them from the documented semantics with numpy. Cross-block SyncAll
runs through the cooperative block runner (coop_run). Faults the driver provokes are checked
for code and line; the dtype gates are checked as compile errors; one CANN 9 style kernel runs
end to end through the Evaluator (block_idx, LocalMemAllocator, ascendc_assert)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from sage_npu.npu_eval import compile_errors
from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile
from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

F16, F32 = np.float16, np.float32

DRIVER = PRELUDE + r"""
static uint32_t g_seed = 777;
static uint32_t rnd_u32() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed;
}
static float rnd() { return float(int32_t(rnd_u32() >> 8) - (1 << 23)) / float(1 << 23); }
static uint64_t g_count;
static void dump_count(const std::string& name, uint64_t n) { write_raw(name, &n, 8); }

static void gather_mask_builtin() {
    for (int mode = 1; mode <= 7; ++mode) {
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<float, 256>();
        auto dst = a.Alloc<float, 256>();
        fill(src, 256, [](uint32_t i) { return float(i + 1); });
        GatherMask(dst, src, uint8_t(mode), false, 0, {1, 4, 8, 0}, g_count);
        dump("gmb_f32_" + std::to_string(mode), dst, uint32_t(g_count));
        auto hs = a.Alloc<half, 256>();
        auto hd = a.Alloc<half, 256>();
        fill(hs, 256, [](uint32_t i) { return float(i) * 0.5f; });
        GatherMask(hd, hs, uint8_t(mode), false, 0, {1, 2, 8, 0}, g_count);
        dump("gmb_f16_" + std::to_string(mode), hd, uint32_t(g_count));
    }
    {   // block stride 2, repeat stride 16 blocks: repeat r reads blocks 16r, 16r+2, ..., 16r+14
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<int32_t, 512>();
        auto dst = a.Alloc<int32_t, 128>();
        fill(src, 512, [](uint32_t i) { return int32_t(i * 3 + 1); });
        GatherMask(dst, src, uint8_t(3), false, 0, {2, 2, 16, 0}, g_count);
        dump("gmb_strided", dst, uint32_t(g_count));
        dump_count("gmb_strided_n", g_count);
    }
    {   // the sample's in-place form: dst is src0
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<uint32_t, 256>();
        fill(src, 256, [](uint32_t i) { return i * 7u; });
        GatherMask(src, src, uint8_t(2), false, 0, {1, 4, 8, 0}, g_count);
        dump("gmb_inplace", src, 256);
        dump_count("gmb_inplace_n", g_count);
        dump_count("gmb_remain", uint64_t(GetGatherMaskRemainCount()));
    }
}

static void gather_mask_user() {
    {   // the GatherMask doc's Counter-mode example: mask 70 per repeat, 2 repeats, src0 stride 4 blocks
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<uint32_t, 256>();
        auto pat = a.Alloc<uint32_t, 32>();
        auto dst = a.Alloc<uint32_t, 256>();
        fill(src, 256, [](uint32_t i) { return i + 1; });
        fill(pat, 32, [](uint32_t) { return rnd_u32(); });
        Duplicate(dst, 0u, 256);
        GatherMask(dst, src, pat, true, 70, {1, 2, 4, 0}, g_count);
        dump("gmu_cnt_src", src, 256);
        dump("gmu_cnt_pat", pat, 32);
        dump("gmu_cnt_dst", dst, 256);
        dump_count("gmu_cnt_n", g_count);
    }
    {   // Normal mode, half data, a fresh 16-bit pattern per repeat (src1RepeatStride 1 block)
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<half, 384>();
        auto pat = a.Alloc<uint16_t, 48>();
        auto dst = a.Alloc<half, 384>();
        fill(src, 384, [](uint32_t) { return rnd() * 4; });
        fill(pat, 48, [](uint32_t) { return uint16_t(rnd_u32() >> 7); });
        GatherMask(dst, src, pat, false, 0, {1, 3, 8, 1}, g_count);
        dump("gmu_h_src", src, 384);
        dump("gmu_h_pat", pat, 48);
        dump("gmu_h_dst", dst, uint32_t(g_count));
    }
}

static void gathers() {
    {
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<half, 128>();
        auto off = a.Alloc<uint32_t, 256>();
        auto dst = a.Alloc<half, 256>();
        fill(src, 128, [](uint32_t) { return rnd() * 8; });
        fill(off, 256, [](uint32_t) { return (rnd_u32() >> 9) % 128 * 2; });
        Duplicate(dst, half(-1.0f), 256);
        Gather(dst, src, off, 0u, 200u);
        dump("ga_h_src", src, 128);
        dump("ga_h_off", off, 256);
        dump("ga_h_dst", dst, 256);
    }
    {   // mask form: 50 elements per repeat, 2 repeats, dst repeat stride 16 blocks, base offset 32 bytes
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<float, 72>();
        auto off = a.Alloc<uint32_t, 128>();
        auto dst = a.Alloc<float, 256>();
        fill(src, 72, [](uint32_t) { return rnd(); });
        fill(off, 128, [](uint32_t) { return (rnd_u32() >> 9) % 64 * 4; });
        Duplicate(dst, -1.0f, 256);
        Gather(dst, src, off, 32u, uint64_t(50), 2, 16);
        dump("ga_f_src", src, 72);
        dump("ga_f_off", off, 128);
        dump("ga_f_dst", dst, 256);
    }
    {
        LocalMemAllocator<Hardware::UB> a;
        auto src = a.Alloc<uint16_t, 128>();
        auto off = a.Alloc<uint32_t, 8>();
        auto dst = a.Alloc<uint16_t, 128>();
        fill(src, 128, [](uint32_t i) { return uint16_t(i * 3); });
        const uint32_t perm[8] = {5, 2, 7, 0, 0, 3, 6, 1};
        fill(off, 8, [&](uint32_t i) { return perm[i] * 32; });
        Gatherb(dst, src, off, 1, GatherRepeatParams{1, 8});
        dump("gb_dst", dst, 128);
        dump("gb_src", src, 128);
    }
}

template <typename T>
static void sorts(const std::string& tag) {
    constexpr uint32_t n = 128, w = 8 / sizeof(T);
    LocalMemAllocator<Hardware::UB> a;
    auto score = a.Alloc<T, n>();
    auto idx = a.Alloc<uint32_t, n>();
    auto s32 = a.Alloc<T, n * w>();
    auto merged = a.Alloc<T, n * w>();
    auto full = a.Alloc<T, n * w>();
    auto tmp = a.Alloc<T, n * w>();
    auto vals = a.Alloc<T, n>();
    auto ids = a.Alloc<uint32_t, n>();
    // Scores on a 1/8 grid so that ties happen.
    fill(score, n, [](uint32_t) { return float(int32_t(rnd() * 16)) / 8.0f; });
    fill(idx, n, [](uint32_t i) { return i * 10 + 3; });
    Sort32<T>(s32, score, idx, 4);
    MrgSortSrcList<T> list(s32[0], s32[32 * w], s32[64 * w], s32[96 * w]);
    MrgSort4Info info;
    for (int i = 0; i < 4; ++i) info.elementLengths[i] = 32;
    info.validBit = 15;
    info.repeatTimes = 1;
    MrgSort<T>(merged, list, info);
    Sort<T, true>(full, score, idx, tmp, 4);
    Extract(vals, ids, full, 4);
    dump(tag + "_score", score, n);
    dump(tag + "_s32", s32, n * w);
    dump(tag + "_merged", merged, n * w);
    dump(tag + "_full", full, n * w);
    dump(tag + "_vals", vals, n);
    dump(tag + "_ids", ids, n);
    // Exhausted suspension: two lists of 32, the merge stops when one runs out.
    uint16_t lens[4] = {32, 32, 0, 0};
    uint32_t taken[4] = {0, 0, 0, 0};
    MrgSort<T, true>(merged, MrgSortSrcList<T>(s32[0], s32[32 * w], s32[0], s32[0]), lens, taken, 3, 1);
    write_raw(tag + "_taken", taken, sizeof taken);
    uint16_t r[4];
    GetMrgSortResult(r[0], r[1], r[2], r[3]);
    write_raw(tag + "_taken16", r, sizeof r);
    dump(tag + "_susp", merged, (taken[0] + taken[1]) * w);
}

static void transposes() {
    LocalMemAllocator<Hardware::UB> a;
    auto src = a.Alloc<half, 512>();
    auto dst = a.Alloc<half, 512>();
    auto t = a.Alloc<half, 256>();
    fill(src, 512, [](uint32_t i) { return float(i); });
    Transpose(t, src);
    dump("tr_one", t, 256);
    LocalTensor<half> dl[16], sl[16];
    for (int i = 0; i < 16; ++i) dl[i] = dst[i * 16], sl[i] = src[i * 16];
    TransDataTo5HD(dl, sl, TransDataTo5HDParams{false, false, 2, 16, 16});
    dump("tr_5hd", dst, 512);
}

static void globals() {
    std::vector<float> gm(100, -1.0f);
    sage::sim::rt().gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(gm.data()), 400, 0, "ws", nullptr});
    GlobalTensor<float> g;
    g.SetGlobalBuffer(gm.data() + 10);
    InitGlobalMemory(g, 80, 3.5f);
    write_raw("igm", gm.data(), 400);
    try {
        expect("gm-out-of-bounds", __LINE__ + 1);
        InitGlobalMemory(g, 91, 0.0f);
    } catch (const sage::sim::KernelAbort&) {
    }
    sage::sim::rt().gm.clear();
}

// A two-phase kernel: each block publishes a value, then (after the barrier) reads its
// neighbour's; its UB must survive the switch to the other blocks.
static __gm__ int32_t* g_ws;
static __gm__ int32_t* g_res;
__global__ __vector__ void two_phase(GM_ADDR ws, GM_ADDR res) {
    AscendC::InitSocState();
    GlobalTensor<int32_t> w, r;
    w.SetGlobalBuffer((__gm__ int32_t*)ws, 8);
    r.SetGlobalBuffer((__gm__ int32_t*)res, 8);
    LocalMemAllocator<Hardware::UB> a;
    auto t = a.Alloc<int32_t, 64>();
    Duplicate(t, int32_t(block_idx * 100), 64);
    w.SetValue(block_idx, int32_t(block_idx * 10 + 1));
    SyncAll();
    r.SetValue(block_idx, w.GetValue((block_idx + 1) % block_num));
    r.SetValue(block_num + block_idx, t.GetValue(5));
}
static int g_sync_line = 0;
__global__ __vector__ void lopsided(GM_ADDR ws) {
    if (block_idx != 0) {
        g_sync_line = __LINE__ + 1;
        SyncAll();
    }
}

static void barriers() {
    std::vector<int32_t> ws(8, 0), res(8, -1);
    auto& gm = sage::sim::rt().gm;
    gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(ws.data()), 32, 0, "ws", nullptr});
    gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(res.data()), 32, 1, "res", nullptr});
    g_ws = ws.data();
    g_res = res.data();
    int traced = 0;
    int status = sage::sim::coop_run(
        4, 0x5A, [&](int) { two_phase((GM_ADDR)ws.data(), (GM_ADDR)res.data()); },
        [&](sage::sim::BlockState& b) { traced += b.idx; });
    int32_t st[2] = {status, traced};
    write_raw("sync_status", st, sizeof st);
    write_raw("sync_res", res.data(), 32);
    status = sage::sim::coop_run(
        3, 0x5A, [&](int) { lopsided((GM_ADDR)ws.data()); }, [&](sage::sim::BlockState&) {});
    expect("flag-deadlock", g_sync_line);
    write_raw("deadlock_status", &status, sizeof status);
    // The sequential runner cannot honour a barrier across blocks.
    sage::sim::blk().num = 4;
    try {
        expect("crash", __LINE__ + 1);
        SyncAll();
    } catch (const sage::sim::KernelAbort&) {
    }
    sage::sim::blk().num = 1;
    SyncAll();  // one block: nothing to wait for
    gm.clear();
}

// The device compiler's convert_from_bytes makes a compile-time struct of constexpr bytes (the AOT
// compilation guide's tilings): a static_assert fails the build if it is not constant or not exact.
struct AotProbe {
    uint32_t a;
    uint16_t b, c;
};
static constexpr uint8_t kAotBytes[] = {0x78, 0x56, 0x34, 0x12, 2, 0, 3, 1};
static_assert(convert_from_bytes<AotProbe>(kAotBytes).a == 0x12345678u &&
              convert_from_bytes<AotProbe>(kAotBytes).b == 2 && convert_from_bytes<AotProbe>(kAotBytes).c == 0x103,
              "convert_from_bytes");

// A source may include <cassert> after the kernel headers (asc-devkit's log sample does, and the
// build's precompiled kernel_operator.h always comes first): assert must stay the device's.
#include <cassert>
static void asserts() {
    int x = 5;
    ascendc_assert(x == 5);
    assert(x > 0);
    try {
        expect("assert-failed", __LINE__ + 1);
        ascendc_assert(x < 3, "x is %d, limit %f\n", x, half(2.5f));
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("assert-failed", __LINE__ + 1);
        assert(x == 4);
    } catch (const sage::sim::KernelAbort&) {
    }
}

static void allocator() {
    LocalMemAllocator<Hardware::UB> a;
    auto h = a.Alloc<half, 10>();
    uint32_t after = a.GetCurAddr();
    auto f = a.Alloc<TPosition::VECIN, float>(16);
    auto g = a.Alloc<TPosition::VECOUT, float, 8>();
    uint32_t addrs[4] = {h.addr_, after, f.addr_, g.addr_};
    write_raw("alloc_addrs", addrs, sizeof addrs);
    expect("unaligned-copy", __LINE__ + 1);
    Duplicate(f, 1.0f, 16);
    try {
        expect("ub-overflow", __LINE__ + 1);
        a.Alloc<float>(60000);
    } catch (const sage::sim::KernelAbort&) {
    }
    int64_t ids[3] = {int64_t(block_idx), int64_t(block_num), int64_t(g_coreType)};
    write_raw("builtins", ids, sizeof ids);
}

""" + main_calling("gather_mask_builtin();", "gather_mask_user();", "gathers();", 'sorts<float>("sort_f32");',
                    'sorts<half>("sort_f16");', "transposes();", "globals();", "barriers();", "asserts();",
                    "allocator();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("apis_extra"), DRIVER)


def same(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    bad = got != want
    if got.dtype.kind == "f":
        bad &= ~(np.isnan(got) & np.isnan(want))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ, first at {i}: got {got[i]!r}, "
                             f"want {want[i]!r}")


def gather_mask_ref(src, size, blk, rep, reps, per, keep):
    """Elements GatherMask keeps: element k of repeat r sits at (r*rep + k//epb*blk) blocks + k%epb."""
    epb = 32 // size
    out = [src[(r * rep + k // epb * blk) * epb + k % epb] for r in range(reps) for k in range(per) if keep(r, k)]
    return np.array(out, dtype=src.dtype)


BUILTIN = {1: lambda k: k % 2 == 0, 2: lambda k: k % 2 == 1, 3: lambda k: k % 4 == 0, 4: lambda k: k % 4 == 1,
           5: lambda k: k % 4 == 2, 6: lambda k: k % 4 == 3, 7: lambda k: True}


def bit(pattern_bytes: np.ndarray, start: int, k: int) -> bool:
    return bool((int(pattern_bytes[start + k // 8]) >> (k % 8)) & 1)


# ---------------------------------------------------------------- GatherMask


@pytest.mark.parametrize("mode", range(1, 8))
def test_gather_mask_builtin_patterns(run, mode):
    src32 = np.arange(1, 257, dtype=F32)
    same(run(f"gmb_f32_{mode}", F32), gather_mask_ref(src32, 4, 1, 8, 4, 64, lambda r, k: BUILTIN[mode](k)),
         f"float pattern {mode}")
    src16 = (np.arange(256, dtype=F32) * 0.5).astype(F16)
    same(run(f"gmb_f16_{mode}", F16), gather_mask_ref(src16, 2, 1, 8, 2, 128, lambda r, k: BUILTIN[mode](k)),
         f"half pattern {mode}")


def test_gather_mask_strides_in_place_and_count(run):
    src = (np.arange(512) * 3 + 1).astype(np.int32)
    want = gather_mask_ref(src, 4, 2, 16, 2, 64, lambda r, k: k % 4 == 0)
    same(run("gmb_strided", np.int32), want, "block stride 2, repeat stride 16")
    assert run("gmb_strided_n", np.uint64)[0] == want.size == 32
    # dst == src0 (the official sample): the kept odd elements land packed at the front.
    src = np.arange(256, dtype=np.uint32) * 7
    got = run("gmb_inplace", np.uint32)
    same(got[:128], src[1::2], "in place, odd elements")
    same(got[128:], src[128:], "in place, the rest untouched")
    assert run("gmb_inplace_n", np.uint64)[0] == 128 and run("gmb_remain", np.uint64)[0] == 128


def test_gather_mask_user_pattern_counter_mode(run):
    """The doc's example: mask 70 elements per repeat, 2 repeats, src0 repeat stride 4 blocks,
    the same 70 pattern bits in both repeats (src1RepeatStride 0)."""
    src, pat = run("gmu_cnt_src", np.uint32), run("gmu_cnt_pat", np.uint32).view(np.uint8)
    want = [src[r * 32 + k] for r in range(2) for k in range(70) if bit(pat, 0, k)]
    got = run("gmu_cnt_dst", np.uint32)
    assert run("gmu_cnt_n", np.uint64)[0] == len(want)
    same(got[:len(want)], np.array(want, np.uint32), "counter mode kept elements")
    same(got[len(want):], np.zeros(256 - len(want), np.uint32), "past rsvdCnt untouched")


def test_gather_mask_user_pattern_per_repeat(run):
    src, pat = run("gmu_h_src", F16), run("gmu_h_pat", np.uint16).view(np.uint8)
    want = [src[r * 128 + k] for r in range(3) for k in range(128) if bit(pat, r * 32, k)]
    same(run("gmu_h_dst", F16), np.array(want, F16), "half, src1RepeatStride 1 block")


# ---------------------------------------------------------------- Gather, Gatherb


def test_gather_count_form(run):
    src, off, dst = run("ga_h_src", F16), run("ga_h_off", np.uint32), run("ga_h_dst", F16)
    same(dst[:200], src[off[:200] // 2], "dst[i] = src at byte offset off[i]")
    same(dst[200:], np.full(56, -1, F16), "past count untouched")


def test_gather_mask_form_with_base_offset_and_dst_stride(run):
    src, off, dst = run("ga_f_src", F32), run("ga_f_off", np.uint32), run("ga_f_dst", F32)
    want = np.full(256, -1, F32)
    for r in range(2):
        for k in range(50):
            want[r * 128 + k] = src[(32 + off[r * 64 + k]) // 4]
    same(dst, want, "mask 50, 2 repeats, dstRepStride 16, srcBaseOffset 32")


def test_gatherb_blocks(run):
    src, dst = run("gb_src", np.uint16), run("gb_dst", np.uint16)
    perm = [5, 2, 7, 0, 0, 3, 6, 1]
    same(dst, np.concatenate([src[p * 16:(p + 1) * 16] for p in perm]), "Gatherb block permutation")


# ---------------------------------------------------------------- sorting


def decode(raw: np.ndarray, dtype):
    """Sorted elements (8 bytes each) as (scores, indices); half also returns the pad halves."""
    if dtype == F32:
        return raw[0::2], raw.view(np.uint32)[1::2], None
    u = raw.view(np.uint16)
    return u[0::4].view(F16), u[2::4].astype(np.uint32) | (u[3::4].astype(np.uint32) << 16), u[1::4]


def desc_stable(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-scores.astype(np.float64), kind="stable")


@pytest.mark.parametrize("tag,dtype", [("sort_f32", F32), ("sort_f16", F16)])
def test_sort32_mrgsort_sort_extract(run, tag, dtype):
    score = run(f"{tag}_score", dtype)
    idx = np.arange(128, dtype=np.uint32) * 10 + 3
    assert len(np.unique(score)) < 100, "the inputs must contain ties"
    order = np.concatenate([g * 32 + desc_stable(score[g * 32:(g + 1) * 32]) for g in range(4)])
    s, i, pad = decode(run(f"{tag}_s32", dtype), dtype)
    same(s, score[order], "Sort32 scores")
    same(i, idx[order], "Sort32 indices, ties in input order")
    if pad is not None:
        same(pad, np.zeros(128, np.uint16), "half pad bytes")
    full = desc_stable(score)
    for name in ("merged", "full"):
        s, i, _ = decode(run(f"{tag}_{name}", dtype), dtype)
        same(s, score[full], f"{name} scores")
        same(i, idx[full], f"{name} indices")
    same(run(f"{tag}_vals", dtype), score[full], "Extract values")
    same(run(f"{tag}_ids", np.uint32), idx[full], "Extract indices")


@pytest.mark.parametrize("tag,dtype", [("sort_f32", F32), ("sort_f16", F16)])
def test_mrgsort_exhausted_suspension(run, tag, dtype):
    s, i, _ = decode(run(f"{tag}_s32", dtype), dtype)
    lists = [list(zip(s[:32], i[:32], strict=True)), list(zip(s[32:64], i[32:64], strict=True))]
    pos, out = [0, 0], []
    while pos[0] < 32 and pos[1] < 32:
        a, b = lists[0][pos[0]], lists[1][pos[1]]
        pick = 0 if a[0] >= b[0] else 1
        out.append(lists[pick][pos[pick]])
        pos[pick] += 1
    taken = run(f"{tag}_taken", np.uint32)
    same(taken, np.array(pos + [0, 0], np.uint32), "sortedNum")
    same(run(f"{tag}_taken16", np.uint16), np.array(pos + [0, 0], np.uint16), "GetMrgSortResult")
    gs, gi, _ = decode(run(f"{tag}_susp", dtype), dtype)
    same(gs, np.array([o[0] for o in out], dtype), "merged until a list ran out")
    same(gi, np.array([o[1] for o in out], np.uint32), "their indices")


# ---------------------------------------------------------------- transpose


def test_transpose_and_trans_data_to_5hd(run):
    src = np.arange(512, dtype=F32).astype(F16)
    same(run("tr_one", F16), src[:256].reshape(16, 16).T.ravel(), "Transpose 16x16")
    want = np.concatenate([src[r * 256:(r + 1) * 256].reshape(16, 16).T.ravel() for r in range(2)])
    same(run("tr_5hd", F16), want, "TransDataTo5HD b16, 2 repeats")


# ---------------------------------------------------------------- CANN 9: GM init, SyncAll, assert, allocator


def test_init_global_memory(run):
    gm = run("igm", F32)
    same(gm[:10], np.full(10, -1, F32), "before the tensor")
    same(gm[10:90], np.full(80, 3.5, F32), "filled")
    same(gm[90:], np.full(10, -1, F32), "after")


def test_sync_all_orders_blocks_and_keeps_each_blocks_ub(run):
    status, traced = run("sync_status", np.int32)
    assert status == 0 and traced == 0 + 1 + 2 + 3
    res = run("sync_res", np.int32)
    same(res[:4], np.array([(b + 1) % 4 * 10 + 1 for b in range(4)], np.int32), "read the neighbour's value")
    same(res[4:], np.array([b * 100 for b in range(4)], np.int32), "UB survives the barrier")
    assert run("deadlock_status", np.int32)[0] == 3


def test_provoked_faults_are_reported_at_their_lines(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found = {(row[1], int(row[2])): row[3] for row in run.rows("FAULT")}
    assert len(expected) == 7
    for key in expected:
        assert key in found, (key, found)
    assert set(found) == expected, found
    lines = run.source.read_text().splitlines()
    msg = {code: [m for (c, _), m in found.items() if c == code] for code in ("crash", "flag-deadlock",
                                                                               "assert-failed")}
    assert any("x is 5, limit 2.500000" in m for m in msg["assert-failed"]), msg
    assert any("cooperative block runner" in m for m in msg["crash"]), msg
    assert "SyncAll waits for 3 blocks, but only 2 reach it" in msg["flag-deadlock"][0]
    assert all("assert" in lines[line - 1] for code, line in expected if code == "assert-failed")


def test_allocator_addresses_and_builtins(run):
    same(run("alloc_addrs", np.uint32), np.array([0, 20, 20, 84], np.uint32), "bump allocation, no rounding")
    same(run("builtins", np.int64), np.array([0, 1, 2], np.int64), "block_idx, block_num, g_coreType (AIV)")


# ---------------------------------------------------------------- dtype gates

BAD = """\
#include "kernel_operator.h"
using namespace AscendC;
__global__ __vector__ void bad(GM_ADDR x)
{
    LocalTensor<int8_t> c;
    LocalTensor<int32_t> i;
    LocalTensor<uint32_t> u;
    uint64_t n;
    GatherMask(c, c, uint8_t(1), false, 0, {1, 1, 8, 0}, n);
    Sort32(i, i, u, 1);
    Gather(c, c, u, 0u, 32u);
}
"""


def test_unsupported_dtypes_are_compile_errors_at_the_users_line(tmp_path):
    path = tmp_path / "bad.cpp"
    path.write_text(BAD)
    flags = compile_flags(chip_profile("910B2"), "-O0", {})
    out = subprocess.run(["g++", *flags, "-fsyntax-only", str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    diags = compile_errors.parse(out.stderr, {str(path.resolve())}, (str(path), 1))
    by_line = {d.line: d for d in diags}
    lines = BAD.splitlines()
    for needle, message in {"GatherMask(c": "GatherMask has no int8_t overload on 910B",
                            "Sort32(i": "Sort32 has no int32_t overload on 910B (it takes half, float)",
                            "Gather(c": "Gather has no int8_t overload on 910B"}.items():
        line = next(n for n, s in enumerate(lines, 1) if needle in s)
        d = by_line.get(line)
        assert d is not None, (needle, diags)
        assert d.code == "dtype-unsupported" and message in d.message, d


# ---------------------------------------------------------------- end to end

CANN9_KERNEL = """\
// A CANN 9 style kernel, shaped like the official add.asc sample: a templated __vector__
// entry, block_idx, static tensors, InitSocState, and an ascendc_assert on the scalar argument.
#include "kernel_operator.h"

template <uint32_t blockLength>
__global__ __vector__ void add_cann9(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength)
{
    AscendC::InitSocState();
    ascendc_assert(totalLength == blockLength * block_num, "totalLength %u for %ld blocks", totalLength, block_num);
    AscendC::GlobalTensor<float> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + block_idx * blockLength, blockLength);
    yGm.SetGlobalBuffer((__gm__ float*)y + block_idx * blockLength, blockLength);
    zGm.SetGlobalBuffer((__gm__ float*)z + block_idx * blockLength, blockLength);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<float> xl = ub.Alloc<float, blockLength>();
    AscendC::LocalTensor<float> yl = ub.Alloc<float, blockLength>();
    AscendC::LocalTensor<float> zl = ub.Alloc<float, blockLength>();
    AscendC::DataCopy(xl, xGm, blockLength);
    AscendC::DataCopy(yl, yGm, blockLength);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(zl, xl, yl, blockLength);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, zl, blockLength);
}
"""

CANN9_REFERENCE = """\
import torch

class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y

def get_inputs():
    return [torch.randn(4 * 256), torch.randn(4 * 256)]

def get_init_inputs():
    return []
"""

CANN9_HOST = """\
import torch
from sage_npu.npu_eval import Launch

def launch(x, y):
    z = torch.empty_like(x)
    return Launch(kernel="add_cann9<256>", block_dim=4, args=[x, y, z, x.numel()], outputs=[z])
"""


def test_cann9_kernel_end_to_end_and_failed_assert(evaluator, tmp_path):
    task = tmp_path / "add_cann9"
    task.mkdir()
    (task / "add_cann9.cpp").write_text(CANN9_KERNEL)
    (task / "reference.py").write_text(CANN9_REFERENCE)
    (task / "host.py").write_text(CANN9_HOST)
    report = evaluator.evaluate(task).report
    assert report.status == "correct", [(d.code, d.line, d.message) for d in report.diagnostics]
    assert not [d for d in report.diagnostics if d.severity == "error"]

    (task / "add_cann9.cpp").write_text(CANN9_KERNEL.replace("blockLength * block_num", "blockLength * 2"))
    report = evaluator.evaluate(task).report
    assert report.status != "correct"
    d = next(d for d in report.diagnostics if d.code == "assert-failed")
    line = next(n for n, s in enumerate(CANN9_KERNEL.splitlines(), 1) if "ascendc_assert" in s and "(" in s)
    assert d.line == line and "totalLength 1024 for 4 blocks" in d.message, d


def test_syncall_across_blocks_in_a_task(evaluator):
    # Each block reads, after the barrier, what its mirror block wrote before it: only a real
    # barrier between the blocks makes this correct.
    r = evaluator.evaluate(Path(__file__).parent / "tasks" / "swap_blocks").report
    assert r.status == "correct", r.diagnostics
    assert r.correctness.passed == r.correctness.trials and r.timing is not None


def test_high_level_sum_and_broadcast_in_a_task(evaluator):
    # Rows minus their mean with Sum over padded rows and BroadCast along axis 1, on full and
    # tail shapes (13 columns pad to 16).
    r = evaluator.evaluate(Path(__file__).parent / "tasks" / "row_sum_bcast").report
    assert r.status == "correct", [(d.code, d.line, d.message) for d in r.diagnostics]
    assert r.correctness.trials >= 3


def test_broadcast_along_axis_0_and_in_one_dimension(evaluator):
    r = evaluator.evaluate(Path(__file__).parent / "tasks" / "bias_bcast").report   # x + b[None, :] + s
    assert r.status == "correct", [(d.code, d.line, d.message) for d in r.diagnostics]


def test_sum_with_a_bad_row_pitch_is_reported_at_the_call(evaluator, tmp_path):
    import shutil

    task = tmp_path / "row_sum_bcast"
    shutil.copytree(Path(__file__).parent / "tasks" / "row_sum_bcast", task)
    kernel = task / "row_sum_bcast.cpp"
    kernel.write_text(kernel.read_text().replace("SumParams p{t.rows, t.pitch, t.cols}",
                                                 "SumParams p{t.rows, t.cols, t.cols}"))   # 13 columns: unpadded
    r = evaluator.evaluate(task).report
    bad = next(d for d in r.diagnostics if d.code == "ub-out-of-bounds")
    assert "inner must be n rounded up" in bad.message
    assert "AscendC::Sum(" in kernel.read_text().splitlines()[bad.line - 1]
