"""The advanced API's normalization family beyond LayerNorm [B, S, H], RmsNorm and DeepNorm (those
are in test_adv_activation.py): LayerNormGrad, LayerNormGradBeta, LayerNorm's [A, R] form,
Normalize, WelfordUpdate, WelfordFinalize, BatchNorm and GroupNorm, with their host tiling functions.

One C++ driver (DRIVER below) runs every API outside a launch and dumps its inputs and outputs;
the expectations are recomputed here from each API's asc-devkit documentation
(docs/zh/api/SIMD-API/高阶API/归一化操作/<API>.md: the formula and the 实现原理 steps, in float)
and, for the order of the float operations and the buffer sizes, its Atlas A2 implementation and
host tiling. Where the device's computation differs from a float64 torch reference, a test shows
an input on which they differ beyond tolerance and asserts the documented result. Provoked
faults are checked for code and line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.sim_driver import PRELUDE, UB_HELPERS, Run, build_and_run, main_calling
from tests.test_adv_activation import half_ulps, row_sum

F16, F32 = np.float16, np.float32

DRIVER = PRELUDE + UB_HELPERS + r"""
// Rows of h with the columns from oh on set to zero (the padding the docs ask for) and `offset`
// added to the real ones.
template <typename T>
static void pad_rows(const LocalTensor<T>& t, const char* name, uint32_t rows, uint32_t h, uint32_t oh, float offset) {
    for (uint32_t i = 0; i < rows * h; ++i) t.SetValue(i, T(i % h < oh ? float(t.GetValue(i)) + offset : 0.0f));
    dump(name, t, rows * h);
}
static void try_call(void (*f)()) {
    try {
        f();
    } catch (const sage::sim::KernelAbort&) {
    }
}

// LayerNormGrad and LayerNormGradBeta over [2, 9, 16] float with originalH 13 (two passes of 16
// rows and a tail of 2), and [1, 4, 32] half.
static void grads() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "g_x", 18 * 16, 0.09f, 3);
    pad_rows(x, "g_x", 18, 16, 13, 1.5f);
    auto dy = input<float>(a, "g_dy", 18 * 16, 0.05f, 11);
    pad_rows(dy, "g_dy", 18, 16, 13, 0.0f);
    auto gm = input<float>(a, "g_gamma", 16, 0.04f, 7);
    // mean and variance: the true ones over the 13 real columns, as a LayerNorm forward gives them
    auto mean = al<float>(a, 24), var = al<float>(a, 24);
    for (uint32_t r = 0; r < 18; ++r) {
        double s = 0, q = 0;
        for (uint32_t j = 0; j < 13; ++j) s += double(x.GetValue(r * 16 + j));
        for (uint32_t j = 0; j < 13; ++j) {
            const double d = double(x.GetValue(r * 16 + j)) - s / 13;
            q += d * d;
        }
        mean.SetValue(r, float(s / 13)), var.SetValue(r, float(q / 13));
    }
    sage::sim::ub_mark(mean.range(18)), sage::sim::ub_mark(var.range(18));
    dump("g_mean", mean, 18), dump("g_var", var, 18);
    auto pdx = al<float>(a, 18 * 16), res = al<float>(a, 18 * 16);
    uint32_t mx = 0, mn = 0;
    GetLayerNormGradMaxMinTmpSize(TensorShape({2, 9, 16, 13}), 4, false, mx, mn);
    LayerNormGradTiling gt;
    GetLayerNormGradNDTilingInfo(TensorShape({2, 9, 16, 13}), mn, 4, false, gt);
    auto tmp = al<uint8_t>(a, mn);
    LayerNormGrad<float>(pdx, res, dy, x, var, mean, gm, tmp, 1e-5f, gt);
    dump("g_pdx", pdx, 18 * 16), dump("g_res", res, 18 * 16);
    uint32_t tl[3] = {gt.oneCalSize, gt.loopNum, gt.tailSize};
    write_raw("g_tiling", tl, sizeof(tl));

    auto pg = al<float>(a, 16), pb = al<float>(a, 16);
    fill(pg, 16, [](uint32_t) { return 7.0f; }), fill(pb, 16, [](uint32_t) { return 7.0f; });
    GetLayerNormGradBetaMaxMinTmpSize(TensorShape({2, 9, 16, 13}), 4, false, mx, mn);
    LayerNormGradBetaTiling bt;
    GetLayerNormGradBetaNDTilingInfo(TensorShape({2, 9, 16, 13}), mn, 4, false, bt);
    LayerNormGradBeta<float>(pg, pb, res, dy, tmp, bt);
    dump("gb_gamma", pg, 16), dump("gb_beta", pb, 16);

    auto hx = input<half>(a, "gh_x", 4 * 32, 0.08f, 1);
    auto hdy = input<half>(a, "gh_dy", 4 * 32, 0.06f, 2);
    auto hg = input<half>(a, "gh_gamma", 32, 0.03f, 5);
    auto hm = al<half>(a, 16), hv = al<half>(a, 16);
    fill(hm, 4, [](uint32_t i) { return 0.2f * float(i) - 0.3f; });
    fill(hv, 4, [](uint32_t i) { return 0.5f + 0.25f * float(i); });
    dump("gh_mean", hm, 4), dump("gh_var", hv, 4);
    auto hpdx = al<half>(a, 4 * 32), hres = al<half>(a, 4 * 32);
    GetLayerNormGradMaxMinTmpSize(TensorShape({1, 4, 32, 32}), 2, false, mx, mn);
    LayerNormGradTiling hgt;
    GetLayerNormGradNDTilingInfo(TensorShape({1, 4, 32, 32}), mx, 2, false, hgt);
    auto htmp = al<uint8_t>(a, mx);
    LayerNormGrad<half>(hpdx, hres, hdy, hx, hv, hm, hg, htmp, half(1e-5f), hgt);
    dump("gh_pdx", hpdx, 4 * 32), dump("gh_res", hres, 4 * 32);
    auto hpg = al<half>(a, 32), hpb = al<half>(a, 32);
    GetLayerNormGradBetaMaxMinTmpSize(TensorShape({1, 4, 32, 32}), 2, false, mx, mn);
    LayerNormGradBetaTiling hbt;
    GetLayerNormGradBetaNDTilingInfo(TensorShape({1, 4, 32, 32}), mn, 2, false, hbt);
    LayerNormGradBeta<half>(hpg, hpb, hres, hdy, htmp, hbt);
    dump("gbh_gamma", hpg, 32), dump("gbh_beta", hpb, 32);
}

// WelfordUpdate: float over 64 with abComputeLength 35, in place and not; half over 32; float
// reusing the source. WelfordFinalize: the plain form over 136 (three passes of 64 with the
// minimum buffer, one without a buffer), the tail form and the counts form over 16.
static void welfords() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "wu_x", 64, 0.1f, 2);
    auto im = input<float>(a, "wu_mean", 64, 0.03f, 4);
    auto iv = input<float>(a, "wu_var", 64, 0.02f, 6);
    for (uint32_t i = 0; i < 64; ++i) iv.SetValue(i, std::abs(iv.GetValue(i)));
    dump("wu_var", iv, 64);
    auto om = al<float>(a, 64), ov = al<float>(a, 64), om2 = al<float>(a, 64), ov2 = al<float>(a, 64);
    for (auto* t : {&om, &ov, &om2, &ov2}) fill(*t, 64, [](uint32_t) { return 9.0f; });
    uint32_t mx = 0, mn = 0;
    GetWelfordUpdateMaxMinTmpSize(TensorShape({1, 64}), 4, 4, false, true, mx, mn);
    auto tmp = al<uint8_t>(a, 2048);
    auto wtmp = tmp[0];
    wtmp.SetSize(mn);
    static constexpr WelfordUpdateConfig inplace = {true};
    WelfordUpdateParam p{1, 64, 35, 0.125f};
    WelfordUpdate<float, float, false, inplace>(om, ov, im, iv, x, wtmp, p);
    WelfordUpdate<float, float>(om2, ov2, im, iv, x, wtmp, p);
    dump("wu_om", om, 64), dump("wu_ov", ov, 64), dump("wu_om2", om2, 64), dump("wu_ov2", ov2, 64);
    auto hx = input<half>(a, "wuh_x", 32, 0.1f, 9);
    GetWelfordUpdateMaxMinTmpSize(TensorShape({1, 32}), 2, 4, false, false, mx, mn);
    wtmp.SetSize(mn);
    WelfordUpdate<half, float>(om2, ov2, im, iv, hx, wtmp, WelfordUpdateParam{1, 32, 32, 0.25f});
    dump("wuh_om", om2, 32), dump("wuh_ov", ov2, 32);
    auto rx = input<float>(a, "wur_x", 64, 0.1f, 2);
    GetWelfordUpdateMaxMinTmpSize(TensorShape({1, 64}), 4, 4, true, false, mx, mn);
    wtmp.SetSize(mn);
    WelfordUpdate<float, float, true>(om2, ov2, im, iv, rx, wtmp, WelfordUpdateParam{1, 64, 64, 0.5f});
    dump("wur_om", om2, 64), dump("wur_ov", ov2, 64), dump("wur_x_after", rx, 64);

    auto fm = input<float>(a, "wf_mean", 136, 0.05f, 3);
    auto fv = input<float>(a, "wf_var", 136, 0.04f, 8);
    for (uint32_t i = 0; i < 136; ++i) fv.SetValue(i, std::abs(fv.GetValue(i)));
    dump("wf_var", fv, 136);
    auto rm = al<float>(a, 8), rv = al<float>(a, 8);
    GetWelfordFinalizeMaxMinTmpSize(TensorShape({136}), 4, false, mx, mn);
    auto ftmp = tmp[0];
    ftmp.SetSize(mn);
    WelfordFinalizePara fp{4, 136, 0, 136, 0, 0, 1.0f / 136, 1.0f / 544};
    auto& tr = sage::sim::blk().trace;  // the instructions each call records for the cost model
    const size_t t0 = tr.size();
    WelfordFinalize<false>(rm, rv, fm, fv, ftmp, fp);
    const size_t t1 = tr.size();
    dump("wf_m", rm, 8), dump("wf_v", rv, 8);
    WelfordFinalize<false>(rm, rv, fm, fv, fp);
    const uint32_t counts[2] = {uint32_t(t1 - t0), uint32_t(tr.size() - t1)};
    write_raw("wf_trace", counts, sizeof(counts));
    dump("wf_m_free", rm, 8), dump("wf_v_free", rv, 8);
    WelfordFinalizePara tp{0, 16, 3, 10, 2, 6, 1.0f / 16, 1.0f / 42};
    WelfordFinalize<false>(rm, rv, fm, fv, ftmp, tp);
    dump("wft_m", rm, 8), dump("wft_v", rv, 8);
    auto cnt = al<int32_t>(a, 16);
    fill(cnt, 16, [](uint32_t i) { return int32_t(i % 3 + 1); });
    WelfordFinalizePara cp{0, 16, 0, 16, 0, 0, 1.0f / 16, 1.0f / 31};
    WelfordFinalize<false>(rm, rv, fm, fv, cnt, ftmp, cp);
    dump("wfc_m", rm, 8), dump("wfc_v", rv, 8);
}

// LayerNorm [A, R]: float [5, 37] (padded to 40, padding not zero on entry), half [3, 20] with
// half gamma/beta (padded to 32); Normalize float [4, 32] without beta, from given mean/variance.
static void layernorm_ar() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "ar_x", 5 * 40, 0.07f, 5);
    for (uint32_t i = 0; i < 200; ++i) x.SetValue(i, i % 40 < 37 ? x.GetValue(i) + 3.0f : 5.0f);
    dump("ar_x", x, 200);
    auto g = input<float>(a, "ar_g", 40, 0.02f, 7);
    auto b = input<float>(a, "ar_b", 40, 0.01f, 9);
    auto y = al<float>(a, 200), m = al<float>(a, 8), rs = al<float>(a, 8);
    uint32_t mx = 0, mn = 0;
    GetLayerNormMaxMinTmpSize(TensorShape({5, 37}), 4, false, true, false, mx, mn);
    LayerNormSeparateTiling t;
    GetLayerNormNDTilingInfo(TensorShape({5, 37}), mn, 4, false, true, t);
    auto tmp = al<uint8_t>(a, 4096);
    auto ltmp = tmp[0];
    ltmp.SetSize(mn);
    LayerNorm<float, float>(y, m, rs, x, g, b, 1e-5f, ltmp, LayerNormPara{5, 37, 40}, t);
    dump("ar_y", y, 200), dump("ar_mean", m, 5), dump("ar_rstd", rs, 5), dump("ar_x_after", x, 200);

    auto hx = input<half>(a, "arh_x", 3 * 32, 0.11f, 2);
    for (uint32_t i = 0; i < 96; ++i) hx.SetValue(i, i % 32 < 20 ? hx.GetValue(i) : half(0.0f));
    dump("arh_x", hx, 96);
    auto hg = input<half>(a, "arh_g", 32, 0.03f, 4);
    auto hb = input<half>(a, "arh_b", 32, 0.02f, 6);
    auto hy = al<half>(a, 96);
    GetLayerNormMaxMinTmpSize(TensorShape({3, 20}), 2, false, true, false, mx, mn);
    LayerNormSeparateTiling ht;
    GetLayerNormNDTilingInfo(TensorShape({3, 20}), mn, 2, false, true, ht);
    ltmp.SetSize(mn);
    LayerNorm<half, half>(hy, m, rs, hx, hg, hb, 1e-5f, ltmp, LayerNormPara{3, 20, 32}, ht);
    dump("arh_y", hy, 96), dump("arh_mean", m, 3), dump("arh_rstd", rs, 3);

    auto nx = input<float>(a, "nz_x", 4 * 32, 0.05f, 1);
    auto nm = al<float>(a, 8), nv = al<float>(a, 8);
    fill(nm, 4, [](uint32_t i) { return 0.1f * float(i); });
    fill(nv, 4, [](uint32_t i) { return 0.3f + 0.2f * float(i); });
    dump("nz_mean", nm, 4), dump("nz_var", nv, 4);
    GetNormalizeMaxMinTmpSize(TensorShape({4, 32}), 4, 4, false, true, false, mx, mn);
    ltmp.SetSize(mn);
    auto ny = al<float>(a, 128);
    Normalize<float, float, false, NLCFG_NOBETA>(ny, rs, nm, nv, nx, g, b, ltmp, 1e-5f, NormalizePara{4, 32, 32});
    dump("nz_y", ny, 128), dump("nz_rstd", rs, 4);
}

// BatchNorm float [5, 2, 8] (two passes of 8 positions) and half [4, 1, 16]; GroupNorm float
// [2, 6, 4, 5] in 2 groups (H*W 20 padded to 24, 72 per group: the small-shape path's blocks of
// 24), float [1, 2, 10, 10] in 1 group (the ReduceSum path) and half [2, 4, 4, 4] in 2 groups.
static void batch_group() {
    LocalMemAllocator<Hardware::UB> a;
    uint32_t mx = 0, mn = 0;
    auto tmp = al<uint8_t>(a, 16384);
    auto x = input<float>(a, "bn_x", 80, 0.09f, 3);
    auto g = input<float>(a, "bn_g", 8, 0.3f, 5);
    auto b = input<float>(a, "bn_b", 8, 0.1f, 7);
    auto y = al<float>(a, 80), m = al<float>(a, 16), v = al<float>(a, 16);
    GetBatchNormMaxMinTmpSize(TensorShape({5, 2, 8}), TensorShape({5, 2, 8}), 4, false, mx, mn);
    BatchNormTiling bt;
    int32_t ok = GetBatchNormNDTilingInfo(TensorShape({5, 2, 8}), TensorShape({5, 2, 8}), mn, 4, false, bt);
    auto t0 = tmp[0];
    t0.SetSize(mn);
    BatchNorm<float>(y, m, v, x, g, b, t0, 1e-5f, bt);
    dump("bn_y", y, 80), dump("bn_mean", m, 16), dump("bn_var", v, 16);
    uint32_t info[3] = {uint32_t(ok), bt.shCurLength, bt.loopRound};
    write_raw("bn_tiling", info, sizeof(info));
    auto hx = input<half>(a, "bnh_x", 64, 0.07f, 1);
    auto hg = input<half>(a, "bnh_g", 16, 0.2f, 2);
    auto hb = input<half>(a, "bnh_b", 16, 0.1f, 4);
    auto hy = al<half>(a, 64), hm = al<half>(a, 16), hv = al<half>(a, 16);
    GetBatchNormMaxMinTmpSize(TensorShape({4, 1, 16}), TensorShape({4, 1, 16}), 2, false, mx, mn);
    BatchNormTiling hbt;
    GetBatchNormNDTilingInfo(TensorShape({4, 1, 16}), TensorShape({4, 1, 16}), mn, 2, false, hbt);
    t0.SetSize(mn);
    BatchNorm<half>(hy, hm, hv, hx, hg, hb, t0, half(1e-5f), hbt);
    dump("bnh_y", hy, 64), dump("bnh_mean", hm, 16), dump("bnh_var", hv, 16);

    auto gx = input<float>(a, "gn_x", 12 * 24, 0.05f, 4);
    for (uint32_t i = 0; i < 288; ++i) gx.SetValue(i, i % 24 < 20 ? gx.GetValue(i) + 0.5f : 0.0f);
    dump("gn_x", gx, 288);
    auto gg = input<float>(a, "gn_g", 8, 0.2f, 6);
    auto gb = input<float>(a, "gn_b", 8, 0.1f, 8);
    auto gy = al<float>(a, 288);
    GetGroupNormMaxMinTmpSize(TensorShape({2, 6, 4, 5}), 4, false, 2, mx, mn);
    GroupNormTiling gt;
    GetGroupNormNDTilingInfo(TensorShape({2, 6, 4, 5}), mn, 4, false, 2, gt);
    t0.SetSize(mn);
    GroupNorm<float>(gy, m, v, gx, gg, gb, t0, 1e-5f, gt);
    dump("gn_y", gy, 288), dump("gn_mean", m, 4), dump("gn_var", v, 4);
    auto lx = input<float>(a, "gnl_x", 2 * 104, 0.03f, 9);
    for (uint32_t i = 0; i < 208; ++i) lx.SetValue(i, i % 104 < 100 ? lx.GetValue(i) : 0.0f);
    dump("gnl_x", lx, 208);
    auto ly = al<float>(a, 208);
    GetGroupNormMaxMinTmpSize(TensorShape({1, 2, 10, 10}), 4, false, 1, mx, mn);
    GroupNormTiling lt;
    GetGroupNormNDTilingInfo(TensorShape({1, 2, 10, 10}), mn, 4, false, 1, lt);
    t0.SetSize(mn);
    GroupNorm<float>(ly, m, v, lx, gg, gb, t0, 1e-5f, lt);
    dump("gnl_y", ly, 208), dump("gnl_mean", m, 1), dump("gnl_var", v, 1);
    auto hgx = input<half>(a, "gnh_x", 128, 0.06f, 3);
    auto hgy = al<half>(a, 128);
    GetGroupNormMaxMinTmpSize(TensorShape({2, 4, 4, 4}), 2, false, 2, mx, mn);
    GroupNormTiling ht;
    GetGroupNormNDTilingInfo(TensorShape({2, 4, 4, 4}), mn, 2, false, 2, ht);
    t0.SetSize(mn);
    GroupNorm<half>(hgy, hm, hv, hgx, hg, hb, t0, half(1e-5f), ht);
    dump("gnh_y", hgy, 128), dump("gnh_mean", hm, 4), dump("gnh_var", hv, 4);
    uint32_t small[3] = {uint32_t(gt.smallShape), uint32_t(lt.smallShape), uint32_t(ht.smallShape)};
    write_raw("gn_small", small, sizeof(small));

    std::vector<uint32_t> out;
    const int64_t shapes[3][4] = {{2, 4, 3, 5}, {4, 8, 8, 8}, {1, 6, 20, 20}};
    for (auto& d : shapes) {
        for (uint32_t ts : {2u, 4u}) {
            TensorShape s3({d[0], d[1], d[2] * d[3]});
            bool r = GetBatchNormMaxMinTmpSize(s3, s3, ts, false, mx, mn);
            out.push_back(r), out.push_back(mx), out.push_back(mn);
            for (bool reuse : {false, true}) {
                GetGroupNormMaxMinTmpSize(TensorShape({d[0], d[1], d[2], d[3]}), ts, reuse, 2, mx, mn);
                out.push_back(mx), out.push_back(mn);
            }
        }
    }
    write_raw("host_sizes2", out.data(), out.size() * 4);
}

// The contracts, each call provoking one fault at its line.
static LocalMemAllocator<Hardware::UB>* g_alloc;
static void faults() {
    LocalMemAllocator<Hardware::UB> a;
    g_alloc = &a;
    try_call([] {  // the documented minimum, but 6 rows round up to 8
        auto& a = *g_alloc;
        auto x = al<float>(a, 240), dy = al<float>(a, 240), o = al<float>(a, 240), r = al<float>(a, 240);
        auto g = al<float>(a, 40), m = al<float>(a, 8), v = al<float>(a, 8);
        for (auto* t : {&x, &dy}) fill(*t, 240, [](uint32_t) { return 1.0f; });
        fill(g, 40, [](uint32_t) { return 1.0f; }), fill(m, 6, [](uint32_t) { return 0.0f; });
        fill(v, 6, [](uint32_t) { return 1.0f; });
        uint32_t mx = 0, mn = 0;
        GetLayerNormGradMaxMinTmpSize(TensorShape({2, 3, 40, 37}), 4, false, mx, mn);
        LayerNormGradTiling t;
        GetLayerNormGradNDTilingInfo(TensorShape({2, 3, 40, 37}), mn, 4, false, t);
        auto tmp = al<uint8_t>(a, mn);
        expect("ub-out-of-bounds", __LINE__ + 1);
        LayerNormGrad<float>(o, r, dy, x, v, m, g, tmp, 1e-5f, t);
    });
    try_call([] {  // abComputeLength past abLength
        auto& a = *g_alloc;
        auto x = al<float>(a, 64), m = al<float>(a, 64), v = al<float>(a, 64);
        auto tmp = al<uint8_t>(a, 512);
        expect("api-misuse", __LINE__ + 1);
        WelfordUpdate<float, float>(m, v, m, v, x, tmp, WelfordUpdateParam{1, 64, 70, 0.5f});
    });
    try_call([] {  // below GetWelfordFinalizeMaxMinTmpSize's 1024
        auto& a = *g_alloc;
        auto m = al<float>(a, 16), v = al<float>(a, 16);
        fill(m, 16, [](uint32_t) { return 1.0f; }), fill(v, 16, [](uint32_t) { return 1.0f; });
        auto tmp = al<uint8_t>(a, 512);
        WelfordFinalizePara p{2, 16, 0, 16, 0, 0, 1.0f / 16, 1.0f / 32};
        expect("ub-out-of-bounds", __LINE__ + 1);
        WelfordFinalize<false>(m, v, m, v, tmp, p);
    });
    try_call([] {  // Normalize [4, 32] needs 256 bytes
        auto& a = *g_alloc;
        auto x = al<float>(a, 128), y = al<float>(a, 128), m = al<float>(a, 8), v = al<float>(a, 8);
        fill(x, 128, [](uint32_t) { return 1.0f; }), fill(m, 4, [](uint32_t) { return 0.0f; });
        fill(v, 4, [](uint32_t) { return 1.0f; });
        auto tmp = al<uint8_t>(a, 224);
        expect("ub-out-of-bounds", __LINE__ + 1);
        Normalize<float, float>(y, m, m, v, x, x, x, tmp, 1e-5f, NormalizePara{4, 32, 32});
    });
    try_call([] {  // half LayerNormGradBeta needs 4 * H floats
        auto& a = *g_alloc;
        auto d = al<half>(a, 64), r = al<half>(a, 64), g = al<half>(a, 32), b = al<half>(a, 32);
        fill(d, 64, [](uint32_t) { return 1.0f; }), fill(r, 64, [](uint32_t) { return 1.0f; });
        LayerNormGradBetaTiling t;
        GetLayerNormGradBetaNDTilingInfo(TensorShape({1, 2, 32, 32}), 512, 2, false, t);
        auto tmp = al<uint8_t>(a, 256);
        expect("ub-out-of-bounds", __LINE__ + 1);
        LayerNormGradBeta<half>(g, b, r, d, tmp, t);
    });
    try_call([] {  // vector work in saturation mode
        auto& a = *g_alloc;
        auto x = al<float>(a, 8);
        fill(x, 8, [](uint32_t) { return 1.0f; });
        AscendCUtils::SetOverflow(0);
        expect("not-emulated", __LINE__ + 1);
        Adds(x, x, 1.0f, 8);
    });
    AscendCUtils::SetOverflow(1);
}

// The host tiling functions on three shapes each.
static void host_sizes() {
    std::vector<uint32_t> out;
    const int64_t shapes[3][3] = {{1, 1, 64}, {2, 5, 48}, {3, 7, 256}};
    for (auto& d : shapes) {
        TensorShape s4({d[0], d[1], d[2], d[2]}), s2({d[0] * d[1], d[2]}), s1({d[2]}), w({1, d[0] * d[1] * d[2]});
        uint32_t mx = 0, mn = 0;
        for (uint32_t ts : {2u, 4u}) {
            for (bool reuse : {false, true}) {
                GetLayerNormGradMaxMinTmpSize(s4, ts, reuse, mx, mn), out.push_back(mx), out.push_back(mn);
                GetWelfordUpdateMaxMinTmpSize(w, ts, 4, reuse, false, mx, mn), out.push_back(mx), out.push_back(mn);
            }
            GetLayerNormGradBetaMaxMinTmpSize(s4, ts, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetNormalizeMaxMinTmpSize(s2, ts, ts, false, true, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetLayerNormMaxMinTmpSize(s2, ts, false, true, false, mx, mn), out.push_back(mx), out.push_back(mn);
        }
        GetWelfordFinalizeMaxMinTmpSize(s1, 4, false, mx, mn), out.push_back(mx), out.push_back(mn);
        LayerNormGradTiling g{};  // left untouched when 4096 bytes hold not one row per buffer
        GetLayerNormGradNDTilingInfo(s4, 4096, 2, false, g);
        out.push_back(g.oneCalSize), out.push_back(g.nohCalSize), out.push_back(g.loopNum), out.push_back(g.tailSize);
        LayerNormSeparateTiling t{};
        GetLayerNormNDTilingInfo(s2, 4096, 4, false, true, t);
        out.push_back(t.oneTmpSize), out.push_back(t.loopRound), out.push_back(t.inputTailSize);
    }
    write_raw("host_sizes", out.data(), out.size() * 4);
}
""" + main_calling("grads();", "welfords();", "layernorm_ar();", "batch_group();", "faults();",
                             "host_sizes();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("adv_norm"), DRIVER)


# ---------------------------------------------------------------- shared models


def rrs(v: np.ndarray) -> np.float32:
    """Repeated WholeReduceSum (LayerNormGrad's ReduceSumImpl): 64-float groups summed as one
    repeat each, then the same over the partial sums until one is left."""
    v = np.asarray(v, F32)
    while len(v) > 1:
        v = np.array([row_sum(v[i:i + 64]) for i in range(0, len(v), 64)], F32)
    return F32(v[0])


def lngrad_doc(dy, x, g, mean, var, eps, h, oh):
    """LayerNormGrad.md 实现原理 in float, row by row over all H columns: x1 = dy * gamma,
    x2 = x - mean, (var + eps)^-1.5 as 1 / sqrt(v * v * v), ^-0.5 as 1 / sqrt(v); pd_var, pd_mean
    and pd_x in the steps' order; 1/H and 2/H from originalH."""
    dy, x = dy.astype(F32).reshape(-1, h), x.astype(F32).reshape(-1, h)
    g, inv, inv2 = g.astype(F32), F32(1.0) / F32(oh), F32(2.0) / F32(oh)
    pdx, res = np.zeros_like(x), np.zeros_like(x)
    for r in range(x.shape[0]):
        v = F32(F32(var[r]) + F32(eps))
        r15, r05 = F32(1) / np.sqrt(F32(v * v) * v), F32(1) / np.sqrt(v)
        x1, x2 = dy[r] * g, x[r] - F32(mean[r])
        pd_var = rrs((x1 * (x2 * r15)) * F32(-0.5))
        res[r], x3 = x2 * r05, x1 * r05
        pd_mean = rrs(x3 * F32(-1)) + pd_var * (rrs(x2 * F32(-2)) * inv)
        pdx[r] = ((pd_var * inv2) * x2 + pd_mean * inv) + x3
    return pdx, res


# ---------------------------------------------------------------- LayerNormGrad / LayerNormGradBeta


def test_layernormgrad_float_two_passes_and_a_tail(run):
    assert list(run("g_tiling", np.uint32)) == [256, 1, 32]  # 16 rows a pass: 288 = 256 + 32
    dy, x, g = run("g_dy", F32), run("g_x", F32), run("g_gamma", F32)
    mean, var = run("g_mean", F32), run("g_var", F32)
    pdx, res = lngrad_doc(dy, x, g, mean, var, 1e-5, 16, 13)
    np.testing.assert_allclose(run("g_pdx", F32).reshape(18, 16), pdx, rtol=2e-6, atol=1e-6)
    np.testing.assert_array_equal(run("g_res", F32).reshape(18, 16), res)


def test_layernormgrad_padding_columns_enter_pd_mean(run):
    # LayerNormGrad.md: the sums run over the stored H = 16 columns; in the 3 zero padding
    # columns x - mean is -mean, so sum(-2 (x - mean)) gains 6 mean and pd_x moves by
    # pd_var * 6 mean / 13, unlike torch's LayerNorm backward over the 13 real columns.
    dy, x, g = (run(n, F32).astype(np.float64) for n in ("g_dy", "g_x", "g_gamma"))
    dy, x = dy.reshape(18, 16), x.reshape(18, 16)
    xt = torch.tensor(x[:, :13], requires_grad=True)
    y = torch.nn.functional.layer_norm(xt, (13,), torch.tensor(g[:13]), None, 1e-5)
    y.backward(torch.tensor(dy[:, :13]))
    got = run("g_pdx", F32).reshape(18, 16)[:, :13]
    assert np.abs(got - xt.grad.numpy()).max() > 1e-3
    mean, var = run("g_mean", F32).astype(np.float64), run("g_var", F32).astype(np.float64)
    x1, x2, s = dy * g, x - mean[:, None], 1 / np.sqrt(var + 1e-5)
    pd_var = (-0.5 * x1 * x2 * s[:, None] ** 3).sum(axis=1)
    pd_mean = (-x1 * s[:, None]).sum(axis=1) + pd_var / 13 * (-2 * x2).sum(axis=1)
    want = x1 * s[:, None] + pd_var[:, None] * 2 / 13 * x2 + pd_mean[:, None] / 13
    np.testing.assert_allclose(got, want[:, :13], rtol=1e-4, atol=1e-5)


def test_layernormgrad_half_in_float(run):
    dy, x, g = run("gh_dy", F16), run("gh_x", F16), run("gh_gamma", F16)
    mean, var = run("gh_mean", F16), run("gh_var", F16)
    pdx, res = lngrad_doc(dy, x, g, mean.astype(F32), var.astype(F32), float(F16(1e-5)), 32, 32)
    assert half_ulps(run("gh_pdx", F16), pdx.astype(F16).ravel()) <= 1
    assert half_ulps(run("gh_res", F16), res.astype(F16).ravel()) <= 1


def gradbeta_doc(res, dy, h, oh):
    """LayerNormGradBeta.md: pd_gamma = sum over rows of dy * res, pd_beta = sum of dy, in float,
    row after row, over the first originalH columns."""
    res, dy = res.astype(F32).reshape(-1, h)[:, :oh], dy.astype(F32).reshape(-1, h)[:, :oh]
    pg, pb = res[0] * dy[0], dy[0].copy()
    for r in range(1, res.shape[0]):
        pg, pb = dy[r] * res[r] + pg, dy[r] + pb
    return pg, pb


def test_layernormgradbeta_sums_rows_in_order_and_leaves_the_padding(run):
    pg, pb = gradbeta_doc(run("g_res", F32), run("g_dy", F32), 16, 13)
    got_g, got_b = run("gb_gamma", F32), run("gb_beta", F32)
    np.testing.assert_array_equal(got_g[:13], pg)
    np.testing.assert_array_equal(got_b[:13], pb)
    assert (got_g[13:] == 7).all() and (got_b[13:] == 7).all()
    hg, hb = gradbeta_doc(run("gh_res", F16), run("gh_dy", F16), 32, 32)
    assert np.array_equal(run("gbh_gamma", F16), hg.astype(F16))
    assert np.array_equal(run("gbh_beta", F16), hb.astype(F16))


# ---------------------------------------------------------------- WelfordUpdate / WelfordFinalize


def welford_update_doc(x, m, v, n_rec):
    """WelfordUpdate.md, in float: delta = x - mean; mean' = delta * nRec + mean;
    var' = delta * (x - mean') + var."""
    x, m, v = x.astype(F32), m.astype(F32), v.astype(F32)
    d = x - m
    mo = d * F32(n_rec) + m
    return mo, d * (x - mo) + v


def test_welfordupdate_in_place_and_not(run):
    x, m, v = run("wu_x", F32), run("wu_mean", F32), run("wu_var", F32)
    mo, vo = welford_update_doc(x[:35], m[:35], v[:35], 0.125)
    om, ov, om2, ov2 = (run(n, F32) for n in ("wu_om", "wu_ov", "wu_om2", "wu_ov2"))
    for a, b in ((om, ov), (om2, ov2)):
        np.testing.assert_array_equal(a[:35], mo)
        np.testing.assert_array_equal(b[:35], vo)
    # in place: the last align8(64 - 35) = 32 positions come from the inputs, the computed ones win
    np.testing.assert_array_equal(om[35:], m[35:])
    np.testing.assert_array_equal(ov[35:], v[35:])
    assert (om2[35:] == 9).all() and (ov2[35:] == 9).all()
    # the float64 Welford step agrees
    d = x[:35].astype(np.float64) - m[:35]
    np.testing.assert_allclose(om[:35], m[:35] + d / 8, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ov[:35], v[:35] + d * (x[:35] - (m[:35] + d / 8)), rtol=1e-5, atol=1e-6)


def test_welfordupdate_half_and_reused_source(run):
    m, v = run("wu_mean", F32), run("wu_var", F32)
    mo, vo = welford_update_doc(run("wuh_x", F16).astype(F32), m[:32], v[:32], 0.25)
    np.testing.assert_array_equal(run("wuh_om", F32), mo)
    np.testing.assert_array_equal(run("wuh_ov", F32), vo)
    x = run("wur_x", F32)
    mo, vo = welford_update_doc(x, m, v, 0.5)
    np.testing.assert_array_equal(run("wur_om", F32), mo)
    np.testing.assert_array_equal(run("wur_ov", F32), vo)
    np.testing.assert_array_equal(run("wur_x_after", F32), x - m)  # isReuseSource leaves x - mean


def welford_finalize_doc(m, v, chunk, p, counts=None):
    """WelfordFinalize.md and its A2 implementation, in float: the weighted terms summed per pass of
    `chunk` as a row, the pass sums folded; the variance from the mean so found."""
    rn, ab, hc, hcl, tc, tcl, ab_rec, r_rec = p
    m, v = m[:ab].astype(F32), v[:ab].astype(F32)

    def term(t, mean):
        if counts is not None:
            w = t * counts.astype(F32)
            return w * F32(r_rec) if mean else w
        if tcl == 0 or tc == 0:
            return t * F32(ab_rec) if mean else t * F32(rn)
        w = t * F32(tc)
        if mean:
            w = w * F32(r_rec)
        w[:hcl] = w[:hcl] * (F32(hc) / F32(tc))
        return w

    def fold(t):
        parts = [row_sum(t[i:i + chunk]) for i in range(0, ab, chunk)]
        return row_sum(np.array(parts, F32))

    mean = fold(term(m, True))
    w = term((m - mean) * (m - mean), False)
    t = ((w + v) if counts is not None else (v + w)) * F32(r_rec)
    return mean, fold(t)


def test_welfordfinalize_plain_in_passes_of_the_buffer(run):
    m, v = run("wf_mean", F32), run("wf_var", F32)
    p = (4, 136, 0, 136, 0, 0, F32(1 / 136), F32(1 / 544))
    mean, var = welford_finalize_doc(m, v, 64, p)  # 1024 bytes: (256 - 128) / 128 * 64 floats a pass
    assert list(run("wf_m", F32)) == [mean] + [0] * 7 and list(run("wf_v", F32)) == [var] + [0] * 7
    mean1, var1 = welford_finalize_doc(m, v, 1 << 20, p)  # the framework's buffer: one pass
    assert run("wf_m_free", F32)[0] == mean1 and run("wf_v_free", F32)[0] == var1
    # the cost: three passes of 3 + 7 instructions and the final 4, against one pass
    assert list(run("wf_trace", np.uint32)) == [3 * 10 + 4, 10 + 4]
    md, vd = m.astype(np.float64), v.astype(np.float64)
    np.testing.assert_allclose(mean, md.mean(), rtol=1e-5)
    np.testing.assert_allclose(var, (vd + 4 * (md - md.mean()) ** 2).sum() / 544, rtol=1e-5)


def test_welfordfinalize_tail_and_counts(run):
    m, v = run("wf_mean", F32), run("wf_var", F32)
    mean, var = welford_finalize_doc(m, v, 64, (0, 16, 3, 10, 2, 6, F32(1 / 16), F32(1 / 42)))
    assert run("wft_m", F32)[0] == mean and run("wft_v", F32)[0] == var
    w = np.array([3] * 10 + [2] * 6, np.float64)
    md, vd = m[:16].astype(np.float64), v[:16].astype(np.float64)
    np.testing.assert_allclose(mean, (md * w).sum() / 42, rtol=1e-5)
    c = np.arange(16) % 3 + 1
    mean, var = welford_finalize_doc(m, v, 64, (0, 16, 0, 16, 0, 0, F32(1 / 16), F32(1 / 31)), counts=c)
    assert run("wfc_m", F32)[0] == mean and run("wfc_v", F32)[0] == var
    mc = (md * c).sum() / 31
    np.testing.assert_allclose(var, (vd + c * (md - mc) ** 2).sum() / 31, rtol=1e-5)


# ---------------------------------------------------------------- LayerNorm [A, R] / Normalize


def layernorm_ar_doc(x, g, b, r, rp, eps, no_beta=False):
    """LayerNorm.md (the rstd form), A2: padding zeroed; mean = row sum of x * (1/R) over the
    padded row; var = row sum of (x - mean)^2 * (1/R) (padding adds 0); then Normalize:
    rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd, * gamma, + beta over the first R."""
    x = x.astype(F32).reshape(-1, rp).copy()
    x[:, r:] = 0
    inv = F32(1) / F32(r)
    mean = np.array([row_sum(row * inv) for row in x], F32)
    d = x - mean[:, None]
    d[:, r:] = 0
    var = np.array([row_sum((q * q) * inv) for q in d], F32)
    return x, mean, normalize_doc(x, mean, var, g, b, r, eps, no_beta)


def normalize_doc(x, mean, var, g, b, r, eps, no_beta=False):
    """Normalize.md: rstd by Sqrt and Div; y in float; gamma and beta on the first rLength."""
    rstd = F32(1) / np.sqrt(var.astype(F32) + F32(eps))
    y = (x.astype(F32) - mean.astype(F32)[:, None]) * rstd[:, None]
    y[:, :r] = y[:, :r] * g[:r].astype(F32)
    if not no_beta:
        y[:, :r] = y[:, :r] + b[:r].astype(F32)
    return y, rstd


def test_layernorm_ar_float_zeroes_the_padding_and_matches_torch(run):
    x, g, b = run("ar_x", F32), run("ar_g", F32), run("ar_b", F32)
    xz, mean, (y, rstd) = layernorm_ar_doc(x, g, b, 37, 40, 1e-5)
    np.testing.assert_array_equal(run("ar_x_after", F32).reshape(5, 40), xz)
    np.testing.assert_array_equal(run("ar_mean", F32), mean)
    np.testing.assert_allclose(run("ar_rstd", F32), rstd, rtol=1e-6)
    np.testing.assert_allclose(run("ar_y", F32).reshape(5, 40), y, rtol=1e-5, atol=1e-6)
    # unlike the [B, S, H] form, the padding does not enter the variance: torch over the 37 agrees
    xr = torch.tensor(x.reshape(5, 40)[:, :37], dtype=torch.float64)
    ref = torch.nn.functional.layer_norm(xr, (37,), torch.tensor(g[:37], dtype=torch.float64),
                                         torch.tensor(b[:37], dtype=torch.float64), 1e-5).numpy()
    np.testing.assert_allclose(run("ar_y", F32).reshape(5, 40)[:, :37], ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run("ar_rstd", F32), 1 / np.sqrt(xr.var(dim=-1, unbiased=False).numpy() + 1e-5),
                               rtol=1e-5)


def test_layernorm_ar_half(run):
    x, g, b = run("arh_x", F16), run("arh_g", F16), run("arh_b", F16)
    _, mean, (y, rstd) = layernorm_ar_doc(x, g, b, 20, 32, 1e-5)
    np.testing.assert_array_equal(run("arh_mean", F32), mean)
    np.testing.assert_allclose(run("arh_rstd", F32), rstd, rtol=1e-6)
    assert half_ulps(run("arh_y", F16), y.astype(F16).ravel()) <= 1


def test_normalize_without_beta(run):
    x, g = run("nz_x", F32).reshape(4, 32), run("ar_g", F32)
    y, rstd = normalize_doc(x, run("nz_mean", F32), run("nz_var", F32), g, None, 32, 1e-5, no_beta=True)
    np.testing.assert_array_equal(run("nz_rstd", F32), rstd)
    np.testing.assert_array_equal(run("nz_y", F32).reshape(4, 32), y)


# ---------------------------------------------------------------- BatchNorm / GroupNorm


def batchnorm_doc(x, g, b, bl, sh, eps):
    """BatchNorm.md, A2 steps in float: per position the batch rows of x * (1/B) added in order,
    the same over (x - mean)^2 * (1/B); rstd = exp(ln(var + eps) * -0.5); y = beta[b] + gamma[b] *
    ((x - mean) * rstd)."""
    x, inv = x.astype(F32).reshape(bl, sh), F32(1) / F32(bl)
    mean = x[0] * inv
    for i in range(1, bl):
        mean = mean + x[i] * inv
    d = x - mean
    var = (d[0] * d[0]) * inv
    for i in range(1, bl):
        var = var + (d[i] * d[i]) * inv
    rstd = np.exp(np.log(var + F32(eps)) * F32(-0.5))
    return b[:bl, None].astype(F32) + g[:bl, None].astype(F32) * (d * rstd), mean, var


def test_batchnorm(run):
    assert list(run("bn_tiling", np.uint32)) == [1, 8, 2]
    x, g, b = run("bn_x", F32), run("bn_g", F32), run("bn_b", F32)
    y, mean, var = batchnorm_doc(x, g, b, 5, 16, 1e-5)
    np.testing.assert_array_equal(run("bn_mean", F32)[:16], mean)
    np.testing.assert_array_equal(run("bn_var", F32)[:16], var)
    np.testing.assert_allclose(run("bn_y", F32).reshape(5, 16), y, rtol=1e-6, atol=1e-6)
    xd = x.astype(np.float64).reshape(5, 16)
    ref = (xd - xd.mean(0)) / np.sqrt(xd.var(0) + 1e-5) * g[:5, None] + b[:5, None]
    np.testing.assert_allclose(run("bn_y", F32).reshape(5, 16), ref, rtol=1e-4, atol=1e-5)
    hy, hmean, hvar = batchnorm_doc(run("bnh_x", F16), run("bnh_g", F16), run("bnh_b", F16), 4, 16,
                                    float(F16(1e-5)))
    assert half_ulps(run("bnh_y", F16), hy.astype(F16).ravel()) <= 1
    assert np.array_equal(run("bnh_mean", F16), hmean.astype(F16))
    assert np.array_equal(run("bnh_var", F16), hvar.astype(F16))


def small_mask(n: int) -> int:
    if n <= 64:
        return n
    m = 64
    while m and n % m:
        m -= 8
    return m


def groupnorm_doc(x, g, b, n, c, hw, groups, eps, small, half_in=False):
    """GroupNorm.md, A2 steps in float: group sums over the stored (32-byte padded) values, by
    ReduceSum or, on the small-shape path, WholeReduceSum blocks then their sum; factor 1/(d*H*W);
    x - mean on the real values (float padding 0, half keeps x); rstd by Sqrt and Div;
    y = (x - mean) * rstd, then * gamma[c] + beta[c] on the real values."""
    unit = 16 if half_in else 8
    hwa, d = (hw + unit - 1) // unit * unit, c // groups
    x = x.astype(F32).reshape(n * groups, d * hwa)
    factor = F32(1) / F32(d * hw)

    def gsum(v):
        if not small:
            return rrs(v)
        m = small_mask(len(v))
        return row_sum(np.array([row_sum(v[i:i + m]) for i in range(0, len(v), m)], F32))

    real = (np.arange(d * hwa) % hwa) < hw
    ys, means, vs = [], [], []
    for gi, row in enumerate(x):
        m = gsum(row) * factor
        cen = np.where(real, row + -m, row if half_in else F32(0)).astype(F32)
        var = gsum(cen * cen) * factor
        rstd = F32(1) / np.sqrt(var + F32(eps))
        ch = (gi * d + np.arange(d * hwa) // hwa) % c
        y = cen * rstd
        y = np.where(real, y * g[ch].astype(F32) + b[ch].astype(F32), y).astype(F32)
        ys.append(y), means.append(m), vs.append(var)
    return np.array(ys, F32), np.array(means, F32), np.array(vs, F32)


def test_groupnorm_small_shape_and_reducesum_paths(run):
    assert list(run("gn_small", np.uint32)) == [1, 0, 1]
    g, b = run("gn_g", F32), run("gn_b", F32)
    y, mean, var = groupnorm_doc(run("gn_x", F32), g, b, 2, 6, 20, 2, 1e-5, True)
    np.testing.assert_array_equal(run("gn_mean", F32)[:4], mean)
    np.testing.assert_array_equal(run("gn_var", F32)[:4], var)
    np.testing.assert_array_equal(run("gn_y", F32).reshape(4, 72), y)
    ly, lmean, lvar = groupnorm_doc(run("gnl_x", F32), g, b, 1, 2, 100, 1, 1e-5, False)
    assert run("gnl_mean", F32)[0] == lmean[0] and run("gnl_var", F32)[0] == lvar[0]
    np.testing.assert_array_equal(run("gnl_y", F32).reshape(1, 208), ly)
    # zero padding: torch's group_norm over the real values agrees
    xr = run("gn_x", F32).reshape(2, 6, 24)[:, :, :20].reshape(2, 6, 4, 5).astype(np.float64)
    ref = torch.nn.functional.group_norm(torch.tensor(xr), 2, torch.tensor(g[:6], dtype=torch.float64),
                                         torch.tensor(b[:6], dtype=torch.float64), 1e-5).numpy()
    np.testing.assert_allclose(run("gn_y", F32).reshape(2, 6, 24)[:, :, :20].reshape(2, 6, 4, 5), ref,
                               rtol=1e-4, atol=1e-5)
    hy, hmean, hvar = groupnorm_doc(run("gnh_x", F16), run("bnh_g", F16), run("bnh_b", F16), 2, 4, 16, 2,
                                    float(F16(1e-5)), True, half_in=True)
    assert half_ulps(run("gnh_y", F16), hy.astype(F16).ravel()) <= 1
    assert np.array_equal(run("gnh_mean", F16), hmean.astype(F16))
    assert np.array_equal(run("gnh_var", F16), hvar.astype(F16))


def test_batchnorm_groupnorm_host_sizes(run):
    want: list[int] = []
    for n, c, h, w in [(2, 4, 3, 5), (4, 8, 8, 8), (1, 6, 20, 20)]:
        for ts in (2, 4):
            sh = c * h * w
            want += [1, 3 * align32(n * sh * 4) + 2 * align32(sh * 4),
                     3 * n * (64 if ts == 2 else 32) + 2 * align32(sh * 4)]
            hwa = (h * w * ts + 31) // 32 * 32 // ts
            for reuse in (False, True):
                k = 2 if reuse and ts == 4 else 3
                mv = 2 * align32(n * 2 * 4)
                want += [k * n * c * hwa * 4 + mv, k * (c // 2) * hwa * 4 + mv]
    assert list(run("host_sizes2", np.uint32)) == want


# ---------------------------------------------------------------- contracts and host sizes


def test_contract_faults_at_the_call(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found = {(row[1], int(row[2])): row[3] for row in run.rows("FAULT")}
    assert len(expected) == 6 and set(found) == expected, found
    msgs = list(found.values())
    assert any("LayerNormGrad's sharedTmpBuffer holds 5760 bytes, but the API needs at least 7360" in m
               for m in msgs), msgs
    assert any("WelfordFinalize's sharedTmpBuffer holds 512 bytes, but the API needs at least 1024" in m
               for m in msgs), msgs
    assert any("switched the float overflow mode to saturation" in m for m in msgs), msgs


def align32(n: int) -> int:
    return (n + 31) // 32 * 32


def host_sizes_doc(b: int, s: int, h: int) -> list[int]:
    """The A2 host tiling formulas (layernorm_grad_tiling_impl.cpp, layernorm_grad_beta_tiling_impl.cpp,
    layernorm_tiling_impl.cpp, normalize_tiling_impl.cpp, welfordfinalize_tiling_impl.cpp)."""
    out: list[int] = []
    n, a = b * s * h, b * s
    for ts in (2, 4):
        for reuse in (False, True):
            k = 9 if ts == 2 else (4 if reuse else 6)
            out += [k * max(n, h * h) * ts, k * min(n, h * h) * ts]
            wk = 3 if ts == 2 else (1 if reuse else 2)
            out += [(n + 63) // 64 * wk * 256, wk * 256]
        c = 4 if ts == 2 else 2
        out += [c * n * 4, c * h * 4]
        rp = (h + 32 // ts - 1) // (32 // ts) * (32 // ts)
        nmax = 2 * align32(rp * 4) + 2 * align32((a + 7) // 8 * 8 * rp * 4)
        nmin = max(align32(a * 4), (2 if ts == 4 else 4) * align32(rp * 4))
        out += [nmax, nmin]
        mv = align32(a * 4)
        out += [mv + max(2 * align32(a * rp * 4), nmax), mv + max(2 * align32(rp * 4), nmin)]
    out += [1024 if h <= 64 else (128 + 2 * h) * 4, 1024]
    one = 4096 // 4 // 9 // h * h
    noh = (one // h + 15) // 16 * 16
    out += [noh * h, noh, n // (noh * h), n % (noh * h)] if one else [0, 0, 0, 0]
    rows = (1024 - (a + 7) // 8 * 8) // 2 // h
    one = min(rows * h, a * h)
    out += [one, a * h // one, a * h % one]
    return out


def test_host_tmp_sizes_match_the_documented_formulas(run):
    want: list[int] = []
    for b, s, h in [(1, 1, 64), (2, 5, 48), (3, 7, 256)]:
        want += host_sizes_doc(b, s, h)
    assert list(run("host_sizes", np.uint32)) == want
