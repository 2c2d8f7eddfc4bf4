"""The advanced API's pattern reductions and TopK on the emulator: ReduceSum, ReduceMean,
ReduceProd, ReduceMax, ReduceMin, ReduceAny, ReduceAll (AR and RA, isReuseSource), TopK, and their
host tiling functions (GetReduceXxxMaxMinTmpSize, GetSortTmpSize, GetTopKMaxMinTmpSize).

One C++ driver (DRIVER below, one compile) runs every API outside a launch, with full and tail
shapes, and dumps inputs and outputs; the expectations are recomputed here from the asc-devkit
pages (docs/zh/api/SIMD-API/高阶API/归约操作/<Api>接口/<Api>.md, 排序操作/TopK.md, TopK-Tiling.md,
GetSortTmpSize.md) and the host tiling implementations (the buffer sizes). The sums run as the
binary tree the host sizes describe (adv_api/reduce/reduce.h): the test recomputes that tree in
float32 and shows an input on which it differs from a float64 (torch-style) sum. Provoked faults
are checked for code and line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim_driver import ADV_HELPERS, PRELUDE, Run, build_and_run, main_calling

F16, F32 = np.float16, np.float32

DRIVER = PRELUDE + ADV_HELPERS + r"""
#include "tiling/tiling_api.h"

static uint32_t need(void (*fn)(const TensorShape&, TensorDataType, ReducePattern, bool, bool, uint32_t&, uint32_t&),
                     TensorDataType dt, uint32_t first, uint32_t last, ReducePattern p, bool reuse = false) {
    uint32_t mx = 0, mn = 0;
    fn(TensorShape({int64_t(first), int64_t(last)}), dt, p, true, reuse, mx, mn);
    return mn;
}

// Float sums, means and products: AR [4, 300] (rows padded to 304, the tree folds 44 onto 256),
// RA [37, 20] (rows padded to 24), AR [3, 40] (under one repeat: no tmp) in the framework form.
static void sums() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "s_x", 4 * 304, [](uint32_t i) { return float(int(i * 7919u % 2003u) - 1001) * 0.0137f; });
    auto y = al<float>(a, 4);
    auto tmp = al<uint8_t>(a, need(GetReduceSumMaxMinTmpSize, ge::DT_FLOAT, 4, 300, ReducePattern::AR));
    uint32_t ar[] = {4, 300};
    ReduceSum<float, Pattern::Reduce::AR>(y, x, tmp, ar, true);
    dump("s_y", y, 4);
    auto ym = al<float>(a, 4);
    ReduceMean<float, Pattern::Reduce::AR>(ym, x, tmp, ar, true);
    dump("s_mean", ym, 4);
    auto r = input<float>(a, "r_x", 37 * 24, [](uint32_t i) { return 1.0f + float(int(i * 31u % 97u) - 48) * 1e-3f; });
    auto ry = al<float>(a, 20), rm = al<float>(a, 20), rp = al<float>(a, 20);
    uint32_t ra[] = {37, 20};
    auto rt = al<uint8_t>(a, need(GetReduceProdMaxMinTmpSize, ge::DT_FLOAT, 37, 20, ReducePattern::RA));
    ReduceSum<float, Pattern::Reduce::RA>(ry, r, rt, ra, true);
    ReduceMean<float, Pattern::Reduce::RA>(rm, r, rt, ra, true);
    ReduceProd<float, Pattern::Reduce::RA>(rp, r, rt, ra, true);
    dump("r_sum", ry, 20), dump("r_mean", rm, 20), dump("r_prod", rp, 20);
    auto p = input<float>(a, "p_x", 3 * 40, [](uint32_t i) { return 0.9f + 0.01f * float(i % 23); });
    auto py = al<float>(a, 3), ps = al<float>(a, 3);
    uint32_t pr[] = {3, 40};
    ReduceProd<float, Pattern::Reduce::AR>(py, p, pr, true);
    ReduceSum<float, Pattern::Reduce::AR>(ps, p, pr, true);
    dump("p_prod", py, 3), dump("p_sum", ps, 3);
}

// Max and Min in half (AR [3, 50], rows padded to 64) and float (RA [5, 12]); Any and All in uint8
// (AR [2, 40]) and float (RA [3, 8]); isReuseSource leaves src unwritten (a later read is reported).
static void compares() {
    LocalMemAllocator<Hardware::UB> a;
    auto h = input<half>(a, "mh_x", 3 * 64, [](uint32_t i) { return float(int(i * 37u % 101u) - 50) * 0.25f; });
    auto hmax = al<half>(a, 3), hmin = al<half>(a, 3);
    uint32_t hs[] = {3, 50};
    auto t = al<uint8_t>(a, need(GetReduceMaxMaxMinTmpSize, ge::DT_FLOAT16, 3, 50, ReducePattern::AR));
    ReduceMax<half, Pattern::Reduce::AR>(hmax, h, t, hs, true);
    ReduceMin<half, Pattern::Reduce::AR>(hmin, h, t, hs, true);
    dump("mh_max", hmax, 3), dump("mh_min", hmin, 3);
    auto f = input<float>(a, "mf_x", 5 * 16, [](uint32_t i) { return float(int(i * 53u % 89u) - 44); });
    auto fmax = al<float>(a, 12), fmin = al<float>(a, 12);
    uint32_t fs[] = {5, 12};
    ReduceMax<float, Pattern::Reduce::RA>(fmax, f, fs, true);
    ReduceMin<float, Pattern::Reduce::RA, true>(fmin, f, fs, true);
    dump("mf_max", fmax, 12), dump("mf_min", fmin, 12);
    auto sink = al<float>(a, 80);
    expect("uninitialized-read", __LINE__ + 1);
    Adds(sink, f, 1.0f, 80);
    auto b = input<uint8_t>(a, "b_x", 2 * 64, [](uint32_t i) { return i < 40 || i == 70 ? 1 : 0; });
    auto bany = al<uint8_t>(a, 2), ball = al<uint8_t>(a, 2);
    uint32_t bs[] = {2, 40};
    auto bt = al<uint8_t>(a, need(GetReduceAnyMaxMinTmpSize, ge::DT_UINT8, 2, 40, ReducePattern::AR));
    ReduceAny<uint8_t, Pattern::Reduce::AR>(bany, b, bt, bs, true);
    ReduceAll<uint8_t, Pattern::Reduce::AR>(ball, b, bt, bs, true);
    dump("b_any", bany, 2), dump("b_all", ball, 2);
    auto g = input<float>(a, "g_x", 3 * 8, [](uint32_t i) { return i == 1 || i % 8 == 3 || i % 8 == 5; });
    auto gany = al<float>(a, 8), gall = al<float>(a, 8);
    uint32_t gs[] = {3, 8};
    ReduceAny<float, Pattern::Reduce::RA>(gany, g, t, gs, true);
    ReduceAll<float, Pattern::Reduce::RA>(gall, g, t, gs, true);
    dump("g_any", gany, 8), dump("g_all", gall, 8);
    auto small = t[0];
    small.SetSize(need(GetReduceMaxMaxMinTmpSize, ge::DT_FLOAT16, 3, 50, ReducePattern::AR) - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        ReduceMax<half, Pattern::Reduce::AR>(hmax, h, small, hs, true);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);
        ReduceMax<half, Pattern::Reduce::AR>(hmax, h, t, hs, false);
    } catch (const sage::sim::KernelAbort&) {
    }
}

static void host_sizes() {
    std::vector<uint32_t> v;
    uint32_t mx = 0, mn = 0;
    using F = void (*)(const TensorShape&, TensorDataType, ReducePattern, bool, bool, uint32_t&, uint32_t&);
    struct Case { F fn; TensorDataType dt; };
    const Case cases[] = {{GetReduceSumMaxMinTmpSize, ge::DT_FLOAT}, {GetReduceMeanMaxMinTmpSize, ge::DT_FLOAT},
                          {GetReduceMaxMaxMinTmpSize, ge::DT_FLOAT16}, {GetReduceMinMaxMinTmpSize, ge::DT_FLOAT},
                          {GetReduceProdMaxMinTmpSize, ge::DT_FLOAT}, {GetReduceAnyMaxMinTmpSize, ge::DT_UINT8},
                          {GetReduceAllMaxMinTmpSize, ge::DT_FLOAT}};
    const int64_t shapes[3][2] = {{8, 8}, {16, 100}, {7, 256}};
    for (const Case& c : cases) {
        for (const auto& s : shapes) {
            for (ReducePattern p : {ReducePattern::AR, ReducePattern::RA}) {
                mx = mn = 12345;
                c.fn(TensorShape({s[0], s[1]}), c.dt, p, true, false, mx, mn);
                v.push_back(mx), v.push_back(mn);
            }
        }
        c.fn(TensorShape({16, 100}), c.dt, ReducePattern::AR, true, true, mx, mn);  // isReuseSource
        v.push_back(mn);
    }
    mx = mn = 7;
    GetReduceSumMaxMinTmpSize(TensorShape({16, 100}), ge::DT_FLOAT16, ReducePattern::AR, true, false, mx, mn);
    v.push_back(mn);  // half is not a ReduceSum type on Atlas A2: left as it was
    auto plat = platform_ascendc::PlatformAscendC(nullptr);
    for (uint32_t n : {32u, 1024u, 4096u}) {
        v.push_back(GetSortTmpSize(plat, n, 4)), v.push_back(GetSortTmpSize(plat, n, 2));
    }
    sizes_out("host_sizes", v);
}

// TopK Normal mode: float [3, 64] with n = 60 (the padding holds -inf), k = 5 largest with ties and a
// NaN, row 1 finished; the same rows' 5 smallest with given indices (100 + i). Small mode: half
// [4, 32], k = 3, packed outputs, the framework form. A tmpLocal 32 bytes short; k > n.
static void topk() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "tk_x", 3 * 64, [](uint32_t i) {
        uint32_t c = i % 64;
        if (c >= 60) return -INFINITY;
        if (i == 64 + 7) return NAN;
        return float(int(i * 37u % 23u)) * 0.5f;  // many equal values
    });
    auto idx = input<int32_t>(a, "tk_idx", 64, [](uint32_t i) { return int32_t(100 + i); });
    auto fin = al<bool>(a, 32);
    fill(fin, 32, [](uint32_t i) { return i == 1; });
    auto v = al<float>(a, 3 * 8), w = al<float>(a, 3 * 8);
    auto vi = al<int32_t>(a, 3 * 8), wi = al<int32_t>(a, 3 * 8);
    uint32_t mx = 0, mn = 0;
    auto plat = platform_ascendc::PlatformAscendC(nullptr);
    GetTopKMaxMinTmpSize(plat, 64, 3, false, false, TopKMode::TOPK_NORMAL, true, 4, mx, mn);
    auto tmp = al<uint8_t>(a, mn);
    TopkTiling tiling;
    TopKTilingFunc(plat, 64, 3, 5, 4, false, TopKMode::TOPK_NORMAL, true, tiling);
    TopKInfo info{3, 64, 60};
    TopK<float, false, true>(v, vi, x, idx, fin, tmp, 5, tiling, info, true);
    dump("tk_v", v, 24), dump("tk_vi", vi, 24);
    TopK<float, true, false>(w, wi, x, idx, fin, 5, tiling, info, false);
    dump("tk_w", w, 24), dump("tk_wi", wi, 24);
    auto hx = input<half>(a, "tk_hx", 4 * 32, [](uint32_t i) { return float(int(i * 29u % 31u) - 15) * 0.25f; });
    auto hv = al<half>(a, 12);
    auto hi = al<int32_t>(a, 12);
    TopK<half, false, false, false, TopKMode::TOPK_NSMALL>(hv, hi, hx, idx, fin, 3, tiling, TopKInfo{4, 32, 32});
    dump("tk_hv", hv, 12), dump("tk_hi", hi, 12);
    auto small = tmp[0];
    small.SetSize(mn - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        TopK<float>(v, vi, x, idx, fin, small, 5, tiling, info, true);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);
        TopK<float>(v, vi, x, idx, fin, tmp, 61, tiling, info, true);
    } catch (const sage::sim::KernelAbort&) {
    }
}

static void topk_host() {
    std::vector<uint32_t> v;
    uint32_t mx = 0, mn = 0;
    auto plat = platform_ascendc::PlatformAscendC(nullptr);
    for (int32_t inner : {32, 256, 4096}) {
        for (bool init : {false, true}) {
            for (TopKMode m : {TopKMode::TOPK_NORMAL, TopKMode::TOPK_NSMALL}) {
                for (bool largest : {true, false}) {
                    GetTopKMaxMinTmpSize(plat, inner, 3, false, init, m, largest, 2, mx, mn);
                    v.push_back(mx), v.push_back(mn);
                }
            }
        }
    }
    TopkTiling t;
    TopKTilingFunc(plat, 256, 4, 10, 2, false, TopKMode::TOPK_NORMAL, true, t);
    for (int64_t f : {int64_t(t.tmpLocalSize), int64_t(t.allDataSize), int64_t(t.innerDataSize),
                      int64_t(t.sortRepeat), int64_t(t.kAlignFourBytes), int64_t(t.kAlignTwoBytes),
                      int64_t(t.maskOffset), int64_t(t.srcIndexOffset)}) {
        v.push_back(uint32_t(f));
    }
    TopKTilingFunc(plat, 32, 4, 3, 4, false, TopKMode::TOPK_NSMALL, false, t);
    v.push_back(t.tmpLocalSize), v.push_back(t.innerDataSize), v.push_back(t.maskOffset);
    v.push_back(t.topkMrgSrc1MaskSizeOffset), v.push_back(t.topkNSmallSrcIndexOffset);
    sizes_out("topk_host", v);
}

// SoftmaxFlashV3 (SoftmaxFlashV3.md): [8, 512] without update in a sharedTmpBuffer of one row;
// [8, 1024] with update in the framework form, its outputs in its inputs' tensors as asc-devkit's
// sample passes them; then a buffer 32 bytes short and a last axis of 448.
static void flash_v3() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<half>(a, "v3_x", 8 * 512, [](uint32_t i) {
        return float((i % 512) / 64) * 0.75f + float(int(i * 37u % 61u) - 30) * 0.05f;
    });
    auto y = al<half>(a, 8 * 512), em = al<half>(a, 8 * 16);
    auto mean = al<float>(a, 64), sum = al<float>(a, 64), mx = al<float>(a, 64);
    uint32_t tmax = 0, tmin = 0;
    GetSoftMaxFlashV3MaxMinTmpSize(TensorShape({8, 512}), 2, 4, tmax, tmin, false);
    auto tmp = al<uint8_t>(a, tmin);
    SoftMaxTiling t;
    SoftMaxFlashV3TilingFunc(TensorShape({8, 512}), 2, 4, tmin, t, false);
    SoftMaxParams p{8, 512, 8, 512, 1, 8, 0.9375f};
    SoftmaxFlashV3<half, float>(y, mean, sum, mx, x, em, mean, sum, mx, tmp, t, p);
    dump("v3_y", y, 8 * 512), dump("v3_mean", mean, 64), dump("v3_sum", sum, 64), dump("v3_max", mx, 64);
    auto x2 = input<half>(a, "v3u_x", 8 * 1024, [](uint32_t i) {
        return float((i % 1024) % 64 / 8) * 0.5f + float(int(i * 53u % 97u) - 48) * 0.03f;
    });
    auto y2 = al<half>(a, 8 * 1024), em2 = al<half>(a, 8 * 16);
    auto m2 = input<float>(a, "v3u_inmean", 64, [](uint32_t i) { return 1.0f + 0.1f * float(i / 8); });
    auto s2 = input<float>(a, "v3u_insum", 64, [](uint32_t i) { return 300.0f + float(i / 8); });
    auto x2max = input<float>(a, "v3u_inmax", 64, [](uint32_t i) { return 3.5f - 0.25f * float(i / 8); });
    SoftMaxTiling t2;
    SoftMaxFlashV3TilingFunc(TensorShape({8, 1024}), 2, 4, 64 * 1024, t2, true);
    SoftMaxParams p2{8, 1024, 8, 1024, 3, 8, 0.96889f};
    SoftmaxFlashV3<half, float, true>(y2, m2, s2, x2max, x2, em2, m2, s2, x2max, t2, p2);
    dump("v3u_y", y2, 8 * 1024), dump("v3u_mean", m2, 64), dump("v3u_sum", s2, 64), dump("v3u_max", x2max, 64);
    dump("v3u_em", em2, 8 * 16);
    auto small = tmp[0];
    small.SetSize(tmin - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        SoftmaxFlashV3<half, float>(y, mean, sum, mx, x, em, mean, sum, mx, small, t, p);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);
        SoftmaxFlashV3<half, float>(y, mean, sum, mx, x, em, mean, sum, mx, tmp, t, {8, 448, 8, 448, 1, 8, 0.9f});
    } catch (const sage::sim::KernelAbort&) {
    }
    std::vector<uint32_t> v;
    for (int64_t k : {512, 1024, 2048}) {
        GetSoftMaxFlashV3MaxMinTmpSize(TensorShape({16, k}), 2, 4, tmax, tmin, true);
        SoftMaxFlashV3TilingFunc(TensorShape({16, k}), 2, 4, 40000, t, true);
        v.push_back(tmax), v.push_back(tmin), v.push_back(t.splitM), v.push_back(t.tailM);
    }
    sizes_out("v3_host", v);
}

// Mean: half [3, 300] (rows of 304) summed in half, the same in float (accType), float [2, 50]
// in the framework form; Sum on the same half rows (the same tree); ReduceXorSum over 1000 int16
// (a sum past 32767: saturated) and over 100 with src1 reused. Buffers 32 bytes short.
static void means() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<half>(a, "mn_x", 3 * 304, [](uint32_t i) { return 1.0f + float(int(i * 29u % 83u)) * 0.37f; });
    auto y = al<half>(a, 3), ya = al<half>(a, 3), ys = al<half>(a, 3);
    uint32_t mx = 0, mn = 0;
    GetMeanMaxMinTmpSize(300, 2, 2, false, mx, mn);
    auto t = al<uint8_t>(a, mn);
    Mean<half>(y, x, t, MeanParams{3, 304, 300});
    GetMeanMaxMinTmpSize(300, 2, 4, false, mx, mn);
    auto ta = al<uint8_t>(a, mn);
    Mean<half, float>(ya, x, ta, MeanParams{3, 304, 300});
    uint32_t smx = 0, smn = 0;
    GetSumMaxMinTmpSize(300, 2, false, smx, smn);
    auto ts = al<uint8_t>(a, smn);
    Sum(ys, x, ts, SumParams{3, 304, 300});
    dump("mn_y", y, 3), dump("mn_ya", ya, 3), dump("mn_sum", ys, 3);
    auto f = input<float>(a, "mnf_x", 2 * 56, [](uint32_t i) { return float(int(i * 13u % 29u) - 14) * 0.1f; });
    auto yf = al<float>(a, 2);
    Mean<float>(yf, f, MeanParams{2, 56, 50});
    dump("mnf_y", yf, 2);
    auto p0 = input<int16_t>(a, "xs_a", 1000, [](uint32_t i) { return int16_t(i * 7919u); });
    auto p1 = input<int16_t>(a, "xs_b", 1000, [](uint32_t i) { return int16_t(i * 104729u + 3u); });
    auto xd = al<int16_t>(a, 16), xd2 = al<int16_t>(a, 16);
    uint32_t xmx = 0, xmn = 0;
    GetReduceXorSumMaxMinTmpSize(TensorShape({1000}), 2, false, xmx, xmn);
    auto xt = al<uint8_t>(a, xmn);
    ReduceXorSum<int16_t>(xd, p0, p1, xt, 1000);
    dump("xs_y", xd, 1);
    auto q0 = input<int16_t>(a, "xs_c", 100, [](uint32_t i) { return int16_t(i % 7); });
    auto q1 = input<int16_t>(a, "xs_d", 100, [](uint32_t i) { return int16_t(i % 5); });
    ReduceXorSum<int16_t, true>(xd2, q0, q1, 100);
    dump("xs_y2", xd2, 1);
    auto sink = al<int16_t>(a, 100);
    expect("uninitialized-read", __LINE__ + 1);
    Adds(sink, q1, int16_t(1), 100);
    auto small = xt[0];
    small.SetSize(xmn - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        ReduceXorSum<int16_t>(xd, p0, p1, small, 1000);
    } catch (const sage::sim::KernelAbort&) {
    }
    auto tshort = t[0];
    tshort.SetSize(32);
    GetMeanMaxMinTmpSize(300, 2, 2, false, mx, mn);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        Mean<half, float>(ya, x, tshort, MeanParams{3, 304, 300});
    } catch (const sage::sim::KernelAbort&) {
    }
    std::vector<uint32_t> v;
    for (uint32_t n : {16u, 300u, 5000u}) {
        for (uint32_t acc : {2u, 4u}) GetMeanMaxMinTmpSize(n, 2, acc, false, mx, mn), v.push_back(mx), v.push_back(mn);
        GetMeanMaxMinTmpSize(n, 4, 4, false, mx, mn), v.push_back(mn);
        for (bool reuse : {false, true}) {
            GetReduceXorSumMaxMinTmpSize(TensorShape({int64_t(n)}), 2, reuse, xmx, xmn), v.push_back(xmn);
        }
    }
    sizes_out("mean_host", v);
}

// SoftmaxFlash (SoftmaxFlash.md): float [4, 64] with update in a sharedTmpBuffer of the update
// minimum; half [2, 64] with float sums, without update (SoftMax's result), in the framework form;
// a buffer 32 bytes short.
static void flash_v1() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "f1_x", 4 * 64, [](uint32_t i) { return float(int(i * 37u % 41u) - 20) * 0.2f; });
    auto inSum = input<float>(a, "f1_insum", 32, [](uint32_t i) { return 10.0f + float(i / 8); });
    auto inMax = input<float>(a, "f1_inmax", 32, [](uint32_t i) { return i < 16 ? 5.0f : 1.0f; });
    auto y = al<float>(a, 4 * 64), sm = al<float>(a, 32), mx = al<float>(a, 32), em = al<float>(a, 32);
    const uint32_t need = GetSoftMaxFlashMinTmpSize(TensorShape({4, 64}), 4, true, false);
    auto tmp = al<uint8_t>(a, need);
    SoftMaxTiling t;
    SoftMaxFlashTilingFunc(TensorShape({4, 64}), 4, need, t, true);
    SoftmaxFlash<float>(y, sm, mx, x, em, inSum, inMax, tmp, t, true);
    dump("f1_y", y, 256), dump("f1_sum", sm, 32), dump("f1_max", mx, 32), dump("f1_em", em, 32);
    auto hx = input<half>(a, "f1h_x", 2 * 64, [](uint32_t i) { return float(int(i * 13u % 29u) - 14) * 0.3f; });
    auto hy = al<half>(a, 128), hem = al<half>(a, 32);
    auto hs = al<float>(a, 16), hm = al<float>(a, 16);
    SoftMaxTiling th;
    SoftMaxFlashTilingFunc(TensorShape({2, 64}), 4, 64 * 1024, th, false);
    SoftmaxFlash<half>(hy, hs, hm, hx, hem, hs, hm, th, false);
    dump("f1h_y", hy, 128), dump("f1h_sum", hs, 16);
    auto small = tmp[0];
    small.SetSize(need - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        SoftmaxFlash<float>(y, sm, mx, x, em, inSum, inMax, small, t, true);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// AscendC::Std (asc-devkit include/utils/std/): the device's definitions where they differ from
// std (half is a floating-point type, bfloat16_t is not; an integral_constant is integral), the
// Ascend C additions, tuple and min/max. A wrong trait fails the build.
static void std_utils() {
    namespace S = AscendC::Std;
    static_assert(S::is_floating_point_v<half> && S::is_floating_point_v<const float>);
    static_assert(!S::is_floating_point_v<bfloat16_t> && !S::is_floating_point_v<int>);
    static_assert(S::is_integral_v<S::integral_constant<int, 3>> && !std::is_integral_v<S::integral_constant<int, 3>>);
    static_assert(S::is_constant<4, const S::integral_constant<uint32_t, 4>&>::value);
    static_assert(!S::is_constant<5, S::integral_constant<uint32_t, 4>>::value && !S::is_constant<4, int>::value);
    static_assert(S::is_one_of_v<half, float, half> && !S::is_one_of_v<int8_t, float, half>);
    static_assert(S::is_one_of_value_v<int, 3, 1, 2, 3> && !S::is_one_of_value_v<int, 4, 1, 2, 3>);
    static_assert(S::is_same_v<S::remove_cvref_t<const half&>, half> && S::is_same_v<S::add_pointer_t<int>, int*>);
    using T3 = S::tuple<int64_t, half, uint8_t>;
    static_assert(S::is_tuple_v<T3> && !S::is_tuple_v<int> && S::tuple_size<T3>::value == 3);
    static_assert(S::is_same_v<S::tuple_element<1, T3>::type, half>);
    auto t = S::make_tuple(int64_t(7), half(1.5f), uint8_t(2));
    std::vector<float> v{float(S::get<0>(t)),     float(S::get<1>(t)),           float(S::get<2>(t)),
                         float(S::min(3u, 2.5f)), float(S::max(int8_t(-3), 2)), float(min(7u, 5)),
                         float(max(-1.5f, 2))};
    write_raw("std_utils", v.data(), v.size() * 4);
}
""" + main_calling("sums();", "compares();", "host_sizes();", "topk();", "topk_host();", "flash_v3();",
                   "means();", "std_utils();", "flash_v1();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("adv_reduce"), DRIVER)


def test_every_provoked_fault_is_reported_at_its_line(run):
    expected = sorted((code, int(line)) for _, code, line in run.rows("EXPECT"))
    got = sorted((code, int(line)) for _, code, line, _msg in run.rows("FAULT"))
    assert expected == got
    assert len(expected) == 11


# ---- the pattern reductions ----

def whole_reduce_sum(v):
    """WholeReduceSum's order on up to 64 floats: neighbour pairs, level by level."""
    lanes = np.zeros(64, F32)
    lanes[:len(v)] = v
    w = 32
    while w >= 1:
        lanes[:w] = lanes[0:2 * w:2] + lanes[1:2 * w:2]
        w //= 2
    return lanes[0]


def tree(v, op, stop):
    """reduce.h's binary tree in float32: fold the part past the largest power of two k <= n onto
    the first k, halve level by level down to `stop`, then WholeReduceSum (sums) or the rest."""
    w = np.array(v, F32)
    n = len(w)
    width = n
    if n > stop:
        k = 1 << (n.bit_length() - 1)
        if k == n:
            k //= 2
        w[:n - k] = op(w[:n - k], w[k:n])
        width = k
        while width > stop:
            width //= 2
            w[:width] = op(w[:width], w[width:2 * width])
    if op is np.add and stop == 64:
        return whole_reduce_sum(w[:width])
    r = w[0]
    for j in range(1, width):
        r = op(r, w[j])
    return F32(r)


def test_reduce_sum_mean_prod_run_the_binary_tree(run):
    x = run("s_x", F32).reshape(4, 304)[:, :300]
    want = np.array([tree(row, np.add, 64) for row in x], F32)
    assert np.array_equal(run("s_y", F32), want)
    assert np.array_equal(run("s_mean", F32), (want * F32(1.0 / 300)).astype(F32))
    # The tree in float32 is not the float64 sum torch would give in double: at least one row differs.
    assert np.any(want != x.astype(np.float64).sum(axis=1).astype(F32))
    r = run("r_x", F32).reshape(37, 24)[:, :20]
    rs = np.array([tree(r[:, j], np.add, 1) for j in range(20)], F32)
    assert np.array_equal(run("r_sum", F32), rs)
    assert np.array_equal(run("r_mean", F32), (rs * F32(1.0 / 37)).astype(F32))
    assert np.array_equal(run("r_prod", F32), np.array([tree(r[:, j], np.multiply, 1) for j in range(20)], F32))
    p = run("p_x", F32).reshape(3, 40)
    assert np.array_equal(run("p_prod", F32), np.array([tree(row, np.multiply, 1) for row in p], F32))
    assert np.array_equal(run("p_sum", F32), np.array([whole_reduce_sum(row) for row in p], F32))


def test_reduce_max_min_any_all_on_padded_rows(run):
    h = run("mh_x", F16).reshape(3, 64)[:, :50]
    assert np.array_equal(run("mh_max", F16), h.max(axis=1))
    assert np.array_equal(run("mh_min", F16), h.min(axis=1))
    f = run("mf_x", F32).reshape(5, 16)[:, :12]
    assert np.array_equal(run("mf_max", F32), f.max(axis=0))
    assert np.array_equal(run("mf_min", F32), f.min(axis=0))
    b = run("b_x", np.uint8).reshape(2, 64)[:, :40]
    assert list(run("b_any", np.uint8)) == list(b.max(axis=1)) == [1, 1]
    assert list(run("b_all", np.uint8)) == list(b.min(axis=1)) == [1, 0]
    g = run("g_x", F32).reshape(3, 8)
    assert np.array_equal(run("g_any", F32), g.max(axis=0))
    assert np.array_equal(run("g_all", F32), g.min(axis=0))
    assert g.max(axis=0).sum() == 3 and g.min(axis=0).sum() == 2


def k_level(n, halve):
    k = 1 << (n.bit_length() - 1)
    return k // 2 if k == n and halve > 1 else k


def reduce_size(rule, first, last, ts, ra):
    """CANN's reduce_tiling.cpp, isReuseSource false."""
    up = lambda v, a: (v + a - 1) // a * a  # noqa: E731
    if rule == "byte" and not ra:
        return up(last, 32) * 2 + first * 32
    if ra:
        k = k_level(first, first)
        return k * (up(last, 8) * 4 if rule == "sum" else up(last * ts, 32))
    if rule == "sum":
        return 0 if last <= 64 else first * k_level(last, first) * 4
    if rule == "prod":
        return (max(k_level(last, first), 8) + first * 8) * 4 + 256
    blk, rep = 32 // ts, 256 // ts
    return 0 if last <= blk else first * (blk if last < rep else rep) * ts


def test_host_tiling_sizes_follow_canns_formulas(run):
    v = list(run("host_sizes", np.uint32))
    rules = [("sum", 4), ("sum", 4), ("cmp", 2), ("cmp", 4), ("prod", 4), ("byte", 1), ("cmp", 4)]
    reuse_sizes = [0, 0, 0, 0, 256, reduce_size("byte", 16, 100, 1, False), 0]
    at = 0
    for (rule, ts), reuse in zip(rules, reuse_sizes, strict=True):
        for first, last in ((8, 8), (16, 100), (7, 256)):
            for ra in (False, True):
                s = reduce_size(rule, first, last, ts, ra)
                assert v[at:at + 2] == [s, s], (rule, first, last, ra)
                at += 2
        assert v[at] == reuse
        at += 1
    assert v[at] == 7
    at += 1
    assert v[at:at + 6] == [n * 2 * 4 if i % 2 == 0 else n * 4 * 2
                            for n in (32, 1024, 4096) for i in (0, 1)]


# ---- TopK ----

def topk_model(x, k, largest, idx):
    """TopK.md: negate for the smallest, sort descending keeping equal values in position order,
    NaN first; take the first k."""
    key = np.where(np.isnan(x), np.inf, x if largest else -x)
    nan_first = np.isnan(x)
    order = sorted(range(len(x)), key=lambda i: (not nan_first[i], -key[i], i))[:k]
    return x[order], idx[order]


def test_topk_normal_and_small_modes(run):
    x = run("tk_x", F32).reshape(3, 64)
    pos = np.arange(64, dtype=np.int32)
    v, vi = run("tk_v", F32).reshape(3, 8), run("tk_vi", np.int32).reshape(3, 8)
    w, wi = run("tk_w", F32).reshape(3, 8), run("tk_wi", np.int32).reshape(3, 8)
    for r in range(3):
        mv, mi = topk_model(x[r], 5, True, pos)
        assert np.array_equal(v[r, :5], mv, equal_nan=True)
        assert list(vi[r, :5]) == ([60] * 5 if r == 1 else list(mi))  # row 1 finished: index n
        sv, si = topk_model(x[r], 5, False, pos + 100)
        assert np.array_equal(w[r, :5], sv, equal_nan=True)
        assert list(wi[r, :5]) == list(si)
    # NaN first in both orders; equal values: the lower position first.
    assert np.isnan(v[1, 0]) and np.isnan(w[1, 0])
    assert len(set(x[0, :60])) < 60 and list(vi[0, :5]) == sorted(vi[0, :5], key=lambda i: (-x[0, i], i))
    # The smallest 5 of row 0 take the -inf padding: the padding takes part in the sort.
    assert np.all(np.isneginf(w[0, :4])) and list(wi[0, :4]) == [160, 161, 162, 163]
    hx = run("tk_hx", F16).reshape(4, 32)
    hv, hi = run("tk_hv", F16).reshape(4, 3), run("tk_hi", np.int32).reshape(4, 3)
    for r in range(4):
        mv, mi = topk_model(hx[r], 3, True, pos[:32])
        assert np.array_equal(hv[r], mv) and list(hi[r]) == list(mi)


def test_topk_host_sizes_and_tiling(run):
    v = list(run("topk_host", np.uint32))
    want = []
    for inner in (32, 256, 4096):
        for init in (False, True):
            for small in (False, True):
                for largest in (True, False):
                    if not small:
                        s = (16 if init else 20) * inner
                    else:
                        a = inner * 3
                        s = a * 8 + 64 + (0 if largest else a * 4) + (0 if init else a * 4)
                    want += [s, s]
    assert v[:len(want)] == want
    # Normal, half, inner 256, outter 4, k 10, indices generated.
    assert v[len(want):len(want) + 8] == [8 * 256 + 2 * 256, 1024, 256 * 4, 8, 16, 16, 4 * 16, 8 * 256]
    # Small, float, inner 32, outter 4, k 3, smallest: sort pairs + negated copy + mask + indices.
    data = 32 * 4 * 2
    off = data + 32 * 4
    assert v[len(want) + 8:] == [off + 16 + 32 * 4, data, 12, off, off + 16]


# ---- SoftmaxFlashV3 ----

def tree8(v):
    v = np.array(v, F32)
    while len(v) > 1:
        v = (v[0::2] + v[1::2]).astype(F32)
    return v[0]


def flash_v3_model(x, alpha, loop_cnt=1, in_mean=None, in_sum=None, in_max=None, interleaved=True):
    """SoftmaxFlashV3.md's pseudo code as the v220 implementation runs it, in float32, per row.
    interleaved=False: the local means over contiguous eighths (what the doc's prose suggests)."""
    k = x.shape[1]
    base = k // 8
    scalar = F32(F32(alpha) / (F32(1) - F32(alpha)))
    out = []
    for r, row in enumerate(x.astype(F32)):
        if interleaved:
            lanes = np.array([tree8(row[8 * j:8 * j + 8]) for j in range(64)], F32)
            for g in range(512, k, 64):
                lanes = (row[g:g + 64] + lanes).astype(F32)
            local = np.array([tree8(lanes[8 * j:8 * j + 8]) for j in range(8)], F32) * F32(1.0 / base)
        else:
            local = np.array([row[j * base:(j + 1) * base].sum(dtype=np.float64) / base for j in range(8)], F32)
        row_mean = F32(tree8(local) * F32(0.125))
        xs = row - np.repeat(((row_mean - local) * scalar).astype(F32), base)
        mean = row_mean
        if in_mean is not None:
            mean = F32((in_mean[r] * (F32(loop_cnt) - F32(1)) + row_mean) * F32(F32(1) / F32(loop_cnt)))
        shift = F32((row_mean - mean) * scalar)
        mx = F32(xs.max() + shift)
        em = None
        if in_mean is not None:
            prev_shift = F32((in_mean[r] - mean) * scalar)
            mx = max(mx, F32(in_max[r] + prev_shift))
            em = F32(np.exp(F32(in_max[r] - mx + prev_shift)))
        e = np.exp((xs - F32(mx - shift)).astype(F32)).astype(F32)
        out.append((e, mean, mx, em))
    return out


def test_softmax_flash_v3_as_the_device_computes_it(run):
    x = run("v3_x", F16).reshape(8, 512)
    y = run("v3_y", F16).reshape(8, 512).astype(F32)
    for r, (e, mean, mx, _em) in enumerate(flash_v3_model(x, 0.9375)):
        assert np.abs(y[r] - e.astype(F16).astype(F32)).max() <= 2 ** -10 * np.abs(e).max()
        assert np.allclose(run("v3_mean", F32)[8 * r:8 * r + 8], mean, rtol=1e-6)
        assert np.allclose(run("v3_max", F32)[8 * r:8 * r + 8], mx, rtol=1e-6)
        assert np.allclose(run("v3_sum", F32)[8 * r:8 * r + 8], e.sum(), rtol=1e-5)
    # The PASA shifts make dst differ from a plain exp(x - rowmax) (float64, torch-style).
    plain = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=1, keepdims=True))
    assert np.abs(y - plain).max() > 0.05


def test_softmax_flash_v3_update_with_aliased_outputs(run):
    x = run("v3u_x", F16).reshape(8, 1024)
    in_mean, in_sum, in_max = (run(f"v3u_{n}", F32)[::8] for n in ("inmean", "insum", "inmax"))
    y = run("v3u_y", F16).reshape(8, 1024).astype(F32)
    rows = flash_v3_model(x, 0.96889, 3, in_mean, in_sum, in_max)
    for r, (e, mean, mx, em) in enumerate(rows):
        assert np.abs(y[r] - e.astype(F16).astype(F32)).max() <= 2 ** -10 * np.abs(e).max()
        assert np.allclose(run("v3u_mean", F32)[8 * r], mean, rtol=1e-6)
        assert np.allclose(run("v3u_max", F32)[8 * r], mx, rtol=1e-6)
        assert np.allclose(run("v3u_sum", F32)[8 * r], em * in_sum[r] + e.sum(), rtol=1e-5)
        assert np.all(run("v3u_em", F16)[16 * r:16 * r + 16] == F16(em))
    # Past 512 columns the local means come from 64-lane column sums, not contiguous eighths: the
    # input's lanes differ by column, so the two groupings give different results.
    contiguous = flash_v3_model(x, 0.96889, 3, in_mean, in_sum, in_max, interleaved=False)
    assert max(np.abs(c[0] - r[0]).max() for c, r in zip(contiguous, rows, strict=True)) > 1e-3


def test_softmax_flash_v3_host_sizes(run):
    v = list(run("v3_host", np.uint32))
    for i, k in enumerate((512, 1024, 2048)):
        row = (8 * 5 + 2 * k + 64) * 4
        split = min(40000 // row, 16)
        if 8 < split < 16:
            split = split // 8 * 8
        assert v[4 * i:4 * i + 4] == [16 * row, row, split, 16 % split]


# ---- Mean, Sum, ReduceXorSum ----

def repeat_tree_sum(x, epr, dtype):
    """ReduceSum's order (Sum.md, Mean.md: a binary tree, neighbours pairwise): per repeat of
    epr, every partial rounded to dtype, then the repeats' sums the same way."""
    def tree(v):
        v = np.concatenate([np.asarray(v, np.float64), np.zeros(epr - len(v))]).astype(dtype)
        while len(v) > 1:
            v = (v[0::2].astype(np.float64) + v[1::2].astype(np.float64)).astype(dtype)
        return v[0]
    parts = [tree(x[i:i + epr]) for i in range(0, len(x), epr)]
    while len(parts) > 1:
        parts = [tree(parts[i:i + epr]) for i in range(0, len(parts), epr)]
    return parts[0]


def test_mean_and_sum_sum_pairwise_then_divide(run):
    x = run("mn_x", F16).reshape(3, 304)[:, :300]
    sums16 = np.array([repeat_tree_sum(r, 128, F16) for r in x], F16)
    assert np.array_equal(run("mn_sum", F16), sums16)
    # Mean in half: the sum in half, times 1/300 rounded to half, the product rounded to half.
    want = (sums16.astype(F32) * np.float32(F16(1.0 / 300))).astype(F16)
    assert np.array_equal(run("mn_y", F16), want)
    sums32 = np.array([repeat_tree_sum(r.astype(F32), 64, F32) for r in x], F32)
    assert np.array_equal(run("mn_ya", F16), (sums32 * F32(1.0 / 300)).astype(F16))
    # Summing in half loses what float keeps: the two forms differ on these rows.
    assert np.any(run("mn_y", F16) != run("mn_ya", F16))
    f = run("mnf_x", F32).reshape(2, 56)[:, :50]
    assert np.array_equal(run("mnf_y", F32),
                          np.array([repeat_tree_sum(r, 64, F32) for r in f], F32) * F32(1.0 / 50))


def test_reduce_xor_sum_saturates_to_int16(run):
    a, b = run("xs_a", np.int16), run("xs_b", np.int16)
    exact = int((a ^ b).astype(np.int64).sum())
    assert abs(exact) > 32767
    assert run("xs_y", np.int16)[0] == np.clip(exact, -32768, 32767)
    c, d = run("xs_c", np.int16), run("xs_d", np.int16)
    assert run("xs_y2", np.int16)[0] == int((c ^ d).sum())


def test_mean_and_xor_sum_host_sizes(run):
    v = list(run("mean_host", np.uint32))
    up = lambda x, a: (x + a - 1) // a * a  # noqa: E731
    want = []
    for n in (16, 300, 5000):
        m16 = up((n + 127) // 128, 32)
        m32 = up((n + 63) // 64, 32) + up(n * 2, 32) // 2 * 4
        want += [m16, m16, m32, m32, up((n + 63) // 64, 32), 3 * max(2 * n, 256), 2 * max(2 * n, 256)]
    assert v == want


# ---- AscendC::Std and the scalar built-ins ----

def test_std_utils_and_scalar_min_max(run):
    # tuple get; Std::min/max in the common type (2.5f, 2); the device compiler's unqualified
    # min/max (asc-devkit's samples call them) on mixed operand types.
    assert list(run("std_utils", F32)) == [7.0, 1.5, 2.0, 2.5, 2.0, 5.0, 2.0]


def test_softmax_flash_v1_update_and_plain(run):
    """SoftmaxFlash.md's softmax_flash in float: rows of 64, sums in WholeReduceSum's order."""
    x = run("f1_x", F32).reshape(4, 64)
    in_sum, in_max = run("f1_insum", F32)[::8], run("f1_inmax", F32)[::8]
    y = run("f1_y", F32).reshape(4, 64)
    for r in range(4):
        mx = max(in_max[r], x[r].max())
        e = np.exp((x[r] - mx).astype(F32)).astype(F32)
        em = np.exp(F32(in_max[r] - mx))
        s = F32(em * in_sum[r] + whole_reduce_sum(e))
        assert run("f1_max", F32)[8 * r] == mx
        assert np.isclose(run("f1_sum", F32)[8 * r], s, rtol=1e-6)
        assert np.isclose(run("f1_em", F32)[8 * r], em * in_sum[r] / s, rtol=1e-6)
        assert np.allclose(y[r], e / s, rtol=1e-6)
    # Rows 0 and 1 have inMax 5 above their own max: the running max wins and rescales.
    assert run("f1_max", F32)[0] == 5.0 and run("f1_max", F32)[16] < 5.0
    hx = run("f1h_x", F16).reshape(2, 64).astype(F32)
    e = np.exp(hx - hx.max(axis=1, keepdims=True))
    assert np.allclose(run("f1h_y", F16).reshape(2, 64), e / e.sum(axis=1, keepdims=True), rtol=2e-3, atol=1e-4)
