"""The advanced API's activation and normalization families on the emulator: SoftMax,
SimpleSoftMax, AdjustSoftMaxRes, Gelu/FasterGelu/FasterGeluV2, Silu, Swish, Sigmoid, SwiGLU,
GeGLU, ReGlu, LayerNorm ([B, S, H]) and RmsNorm, with their host tiling functions.

One C++ driver (DRIVER below) runs every API outside a launch and dumps its inputs and outputs;
the expectations are recomputed here from each API's asc-devkit documentation
(docs/zh/api/SIMD-API/高阶API/激活函数/<API>接口/<API>.md, 归一化操作/<API>.md: the formula, the
实现原理 steps and the intermediate precision; the host tiling implementations for the buffer
sizes). Where the device's computation differs from a float64 torch reference, a test shows an
input on which they differ beyond tolerance and asserts the documented result. Provoked faults
are checked for code and line."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.sim_driver import PRELUDE, UB_HELPERS, Run, build_and_run, main_calling

F16, F32 = np.float16, np.float32

DRIVER = PRELUDE + UB_HELPERS + r"""
static LocalTensor<uint8_t> scratch(LocalMemAllocator<Hardware::UB>& a, uint32_t bytes) {
    return al<uint8_t>(a, bytes);
}

// SoftMax over [5, 48] float, the reductions over oriSrcK = 45 (padded columns), a tiling for a
// 2-row work area; [4, 32] half with float and with half sum/max; SimpleSoftMax from SoftMax's
// own max and sum; AdjustSoftMaxRes on a row whose max is -FLT_MAX.
static void softmaxes() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "sm_x", 5 * 48, 0.11f);
    auto y = al<float>(a, 5 * 48), sum = al<float>(a, 5 * 8), mx = al<float>(a, 5 * 8);
    SoftMaxTiling t;
    SoftMaxTilingFunc(TensorShape({5, 48}), 4, 2 * GetSoftMaxMinTmpSize(TensorShape({5, 48}), 4, false), t);
    auto tmp = scratch(a, 2 * GetSoftMaxMinTmpSize(TensorShape({5, 48}), 4, false));
    SoftMax<float>(y, sum, mx, x, tmp, t, {5, 48, 5, 45});
    dump("sm_y", y, 5 * 48), dump("sm_sum", sum, 5 * 8), dump("sm_max", mx, 5 * 8);
    auto y2 = al<float>(a, 5 * 48);
    SimpleSoftMax<float>(y2, sum, mx, x, tmp, t, {5, 48, 5, 45});
    dump("ssm_y", y2, 5 * 48);
    mx.SetValue(8, -3.4028234663852886e38f);  // row 1's max: the bit pattern 0xFF7FFFFF
    bool hit = AdjustSoftMaxRes<float, float>(y2, mx, 0xFF7FFFFFu, 0.5f, {5, 48, 5, 48});
    dump("adj_y", y2, 5 * 48);
    int32_t h = hit;
    write_raw("adj_hit", &h, 4);
    write_raw("sm_tiling", &t, sizeof t);

    auto hx = input<half>(a, "smh_x", 4 * 32, 0.37f, 5);
    auto hy = al<half>(a, 4 * 32);
    auto fsum = al<float>(a, 4 * 8), fmax = al<float>(a, 4 * 8);
    auto htmp = scratch(a, GetSoftMaxMinTmpSize(TensorShape({4, 32}), 4, false));
    SoftMax<half>(hy, fsum, fmax, hx, htmp, t, {4, 32, 4, 32});  // a tiling for another shape: recomputed
    dump("smh_y", hy, 4 * 32), dump("smh_sum", fsum, 4 * 8);
    auto hsum = al<half>(a, 4 * 16), hmax = al<half>(a, 4 * 16);
    auto htmp2 = scratch(a, GetSoftMaxMinTmpSize(TensorShape({4, 32}), 2, false));
    SoftMax<half>(hy, hsum, hmax, hx, htmp2, t, {4, 32, 4, 32});
    dump("smhh_y", hy, 4 * 32), dump("smhh_sum", hsum, 4 * 16), dump("smhh_max", hmax, 4 * 16);

    auto small = tmp[0];
    small.SetSize(GetSoftMaxMinTmpSize(TensorShape({5, 48}), 4, false) - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);  // 4 rows: not the tiling's shape, so the minimum applies
        SoftMax<float>(y, sum, mx, x, small, t, {4, 48, 4, 45});
    } catch (const sage::sim::KernelAbort&) {
    }
    auto one_row = tmp[0];
    one_row.SetSize(GetSoftMaxMinTmpSize(TensorShape({5, 48}), 4, false));  // the tiling planned 2 rows
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        SoftMax<float>(y, x, one_row, t, {5, 48, 5, 45});
    } catch (const sage::sim::KernelAbort&) {
    }
}

// LogSoftMax over [3, 64] float (an empty tiling: recomputed); SoftmaxFlashV2 with update over
// [4, 32] float, the running max and sum of an earlier block given, and its host sizes.
static void flash_and_log() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "ls_x", 3 * 64, 0.9f, 2);
    x.SetValue(5, -120.0f);  // exp(-120 - max) underflows to 0 in float: log10(0) = -inf
    dump("ls_x", x, 3 * 64);
    auto y = al<float>(a, 3 * 64), sum = al<float>(a, 3 * 8), mx = al<float>(a, 3 * 8);
    auto tmp = scratch(a, GetLogSoftMaxMinTmpSize(TensorShape({3, 64}), 4, false));
    LogSoftMaxTiling lt{};
    LogSoftMax<float>(y, sum, mx, x, tmp, lt, {3, 64, 3, 64});
    dump("ls_y", y, 3 * 64);

    auto fx = input<float>(a, "f2_x", 4 * 32, 0.2f, 4);
    auto inSum = input<float>(a, "f2_insum", 4 * 8, 0.0f);
    auto inMax = input<float>(a, "f2_inmax", 4 * 8, 0.0f);
    for (uint32_t r = 0; r < 4; ++r)
        for (uint32_t j = 0; j < 8; ++j) inSum.SetValue(r * 8 + j, 3.0f + r), inMax.SetValue(r * 8 + j, 4.0f * r - 4);
    dump("f2_insum", inSum, 32), dump("f2_inmax", inMax, 32);
    auto fy = al<float>(a, 4 * 32), fs = al<float>(a, 32), fm = al<float>(a, 32), fe = al<float>(a, 32);
    auto rmax = al<float>(a, 32);
    SoftMaxTiling t;
    const uint32_t need = GetSoftMaxFlashV2MinTmpSize(TensorShape({4, 32}), 4, 4, true);
    SoftMaxFlashV2TilingFunc(TensorShape({4, 32}), 4, 4, 4 * need, t, true);
    auto ftmp = scratch(a, 4 * need);
    SoftmaxFlashV2<float, true>(fy, rmax, fs, fm, fx, fe, inSum, inMax, ftmp, t, {4, 32, 4, 32});
    dump("f2_y", fy, 128), dump("f2_sum", fs, 32), dump("f2_max", fm, 32), dump("f2_expmax", fe, 32);
    dump("f2_rmax", rmax, 32);
    auto small = ftmp[0];
    small.SetSize(need);  // the tiling planned 4 rows
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        SoftmaxFlashV2<float, true>(fy, fs, fm, fx, fe, inSum, inMax, small, t, {4, 32, 4, 32});
    } catch (const sage::sim::KernelAbort&) {
    }
    // SoftmaxGrad over the same [4, 32]: grad = fx, src = fy (SoftmaxFlashV2's output)
    auto gy = al<float>(a, 4 * 32), gf = al<float>(a, 4 * 8);
    auto gtmp = scratch(a, GetSoftMaxGradMinTmpSize(TensorShape({4, 32}), 4, false, false));
    SoftMaxTiling none{};  // derived from the shape and the buffer
    SoftmaxGrad<float>(gy, fx, fy, gtmp, none, false, {4, 32, 4, 32});
    SoftmaxGradFront<float>(gf, fx, fy, gtmp, none, {4, 32, 4, 32});
    dump("grad_y", gy, 128), dump("grad_front", gf, 32);
    std::vector<uint32_t> sizes;
    for (auto sh : {std::vector<int64_t>{4, 32}, std::vector<int64_t>{8, 64}, std::vector<int64_t>{16, 1024}}) {
        for (uint32_t dt : {2u, 4u}) {
            for (bool front : {false, true}) {
                sizes.push_back(GetSoftMaxGradMinTmpSize(TensorShape(sh), dt, front, false));
                sizes.push_back(GetSoftMaxGradMaxTmpSize(TensorShape(sh), dt, front, false));
            }
        }
        for (uint32_t dt1 : {2u, 4u}) {
            for (bool basic : {false, true}) {
                sizes.push_back(GetSoftMaxFlashV2MinTmpSize(TensorShape(sh), dt1, 4, true, basic));
                sizes.push_back(GetSoftMaxFlashV2MaxTmpSize(TensorShape(sh), dt1, 4, true, basic));
            }
        }
        sizes.push_back(GetLogSoftMaxMinTmpSize(TensorShape(sh), 4, false));
    }
    write_raw("f2_sizes", sizes.data(), sizes.size() * 4);
}

// The element-wise activations on 200 elements (not a whole number of repeats).
static void elementwise() {
    LocalMemAllocator<Hardware::UB> a;
    const uint32_t n = 200;
    auto tmp = scratch(a, 6 * 256);
    auto hx = input<half>(a, "ew_hx", n, 0.09f);
    auto fx = input<float>(a, "ew_fx", n, 0.09f);
    auto hg = input<half>(a, "ew_hg", n, 0.05f, 11);
    auto fg = input<float>(a, "ew_fg", n, 0.05f, 11);
    auto hy = al<half>(a, n);
    auto fy = al<float>(a, n);
    Gelu<half>(hy, hx, tmp, n), dump("gelu_h", hy, n);
    Gelu<half, true>(hy, hx, tmp, n), dump("gelu_hp", hy, n);
    Gelu<float>(fy, fx, tmp, n), dump("gelu_f", fy, n);
    FasterGelu<float>(fy, fx, tmp, n), dump("fgelu_f", fy, n);
    FasterGeluV2<float>(fy, fx, tmp, n), dump("fgelu2_f", fy, n);
    Silu<half>(hy, hx, n), dump("silu_h", hy, n);
    Swish<float>(fy, fx, n, 1.5f), dump("swish_f", fy, n);
    Sigmoid<float>(fy, fx, tmp, n), dump("sigmoid_f", fy, n);
    Sigmoid<half>(hy, hx, n), dump("sigmoid_h", hy, n);
    SwiGLU<half>(hy, hx, hg, 1.0f, tmp, n), dump("swiglu_h", hy, n);
    SwiGLU<float>(fy, fx, fg, 0.5f, n), dump("swiglu_f", fy, n);
    GeGLU<float>(fy, fx, fg, n), dump("geglu_f", fy, n);
    GeGLU<half>(hy, hx, hg, tmp, n), dump("geglu_h", hy, n);
    ReGlu<half>(hy, hx, hg, tmp, n), dump("reglu_h", hy, n);
    auto small = tmp[0];
    small.SetSize(3 * 256 - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        Gelu<float>(fy, fx, small, n);
    } catch (const sage::sim::KernelAbort&) {
    }
    small.SetSize(4 * 256);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        SwiGLU<half>(hy, hx, hg, 1.0f, small, n);
    } catch (const sage::sim::KernelAbort&) {
    }
    // The instructions one call records for the cost model.
    auto& tr = sage::sim::blk().trace;
    tr.clear();
    Silu<float>(fy, fx, n);
    std::string names;
    for (auto& r : tr) names += std::string(r.api) + ",";
    write_raw("silu_trace", names.data(), names.size());
}

// LayerNorm [2, 3, 40] float with originalH 37 (zero padding), [1, 4, 32] half; RmsNorm [2, 3, 40]
// float with originalH 37 and [1, 4, 32] half.
static void norms() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "ln_x", 6 * 40, 0.13f, 3);
    for (uint32_t r = 0; r < 6; ++r)
        for (uint32_t j = 37; j < 40; ++j) x.SetValue(r * 40 + j, 0.0f);
    for (uint32_t i = 0; i < 6 * 40; ++i) x.SetValue(i, x.GetValue(i) + 4.0f * (i % 40 < 37));
    dump("ln_x", x, 6 * 40);
    auto g = input<float>(a, "ln_g", 40, 0.02f, 7);
    auto b = input<float>(a, "ln_b", 40, 0.01f, 9);
    auto y = al<float>(a, 6 * 40), m = al<float>(a, 8), v = al<float>(a, 8);
    uint32_t mx = 0, mn = 0;
    GetLayerNormMaxMinTmpSize(TensorShape({2, 3, 40, 37}), 4, false, mx, mn);
    LayerNormTiling lt;
    GetLayerNormNDTilingInfo(TensorShape({2, 3, 40, 37}), mn, 4, false, lt);
    auto tmp = scratch(a, mx);
    LayerNorm<float>(y, m, v, x, g, b, tmp, 1e-5f, lt);
    dump("ln_y", y, 6 * 40), dump("ln_mean", m, 6), dump("ln_var", v, 6);

    auto hx = input<half>(a, "lnh_x", 4 * 32, 0.21f, 1);
    auto hg = input<half>(a, "lnh_g", 32, 0.03f, 2);
    auto hb = input<half>(a, "lnh_b", 32, 0.02f, 4);
    auto hy = al<half>(a, 4 * 32), hm = al<half>(a, 16), hv = al<half>(a, 16);
    LayerNormTiling hlt;
    GetLayerNormMaxMinTmpSize(TensorShape({1, 4, 32, 32}), 2, false, mx, mn);
    GetLayerNormNDTilingInfo(TensorShape({1, 4, 32, 32}), mn, 2, false, hlt);
    LayerNorm<half>(hy, hm, hv, hx, hg, hb, tmp, half(1e-5f), hlt);
    dump("lnh_y", hy, 4 * 32), dump("lnh_mean", hm, 4), dump("lnh_var", hv, 4);

    tiling::RmsNormTiling rt;
    GetRmsNormMaxMinTmpSize(TensorShape({2, 3, 40}), 4, mx, mn);
    bool ok = GetRmsNormTilingInfo(TensorShape({2, 3, 40}), TensorShape({2, 3, 37}), mn, 4, rt);
    RmsNorm<float>(y, x, g, tmp, 1e-5f, rt);
    dump("rms_y", y, 6 * 40);
    tiling::RmsNormTiling hrt;
    GetRmsNormMaxMinTmpSize(TensorShape({1, 4, 32}), 2, mx, mn);
    ok = ok && GetRmsNormTilingInfo(TensorShape({1, 4, 32}), TensorShape({1, 4, 32}), 2 * mn, 2, hrt);
    RmsNorm<half>(hy, hx, hg, tmp, half(1e-5f), hrt);
    dump("rmsh_y", hy, 4 * 32);
    int32_t okv = ok;
    write_raw("rms_ok", &okv, 4);

    auto small = tmp[0];
    small.SetSize(mn);  // the half RmsNorm tiling planned for 2 * mn
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        RmsNorm<half>(hy, hx, hg, small, half(1e-5f), hrt);
    } catch (const sage::sim::KernelAbort&) {
    }
    small.SetSize(64);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        LayerNorm<float>(y, m, v, x, g, b, small, 1e-5f, lt);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// DeepNorm over [1, 4, 40] float with originalH 37: LayerNorm(alpha * x + gx).
static void deepnorm() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "dn_x", 4 * 40, 0.05f, 1);
    auto gx = input<float>(a, "dn_gx", 4 * 40, 0.07f, 6);
    auto g = input<float>(a, "dn_g", 40, 0.02f, 7);
    auto b = input<float>(a, "dn_b", 40, 0.01f, 9);
    auto y = al<float>(a, 4 * 40), m = al<float>(a, 8), v = al<float>(a, 8);
    uint32_t mx = 0, mn = 0;
    GetDeepNormMaxMinTmpSize(TensorShape({1, 4, 40}), 4, false, false, mx, mn);
    DeepNormTiling t;
    int32_t ok = GetDeepNormTilingInfo(TensorShape({1, 4, 40}), TensorShape({1, 4, 37}), mn, 4, false, false, t);
    auto tmp = scratch(a, mn);
    DeepNorm<float>(y, m, v, x, gx, b, g, tmp, 1.5f, 1e-5f, t);
    dump("dn_y", y, 160), dump("dn_mean", m, 4), dump("dn_var", v, 4);
    std::vector<uint32_t> sizes{uint32_t(ok)};
    for (auto sh : {std::vector<int64_t>{1, 1, 64}, std::vector<int64_t>{2, 5, 48}, std::vector<int64_t>{3, 8, 256}}) {
        GetDeepNormMaxMinTmpSize(TensorShape(sh), 2, false, false, mx, mn), sizes.push_back(mx), sizes.push_back(mn);
        sizes.push_back(GetDeepNormMaxMinTmpSize(TensorShape(sh), 4, true, true, mx, mn));
        sizes.push_back(mx), sizes.push_back(mn);
    }
    write_raw("dn_sizes", sizes.data(), sizes.size() * 4);
}

// The host tiling functions on three shapes each, written out for the Python side.
static void host_sizes() {
    std::vector<uint32_t> out;
    const int64_t shapes[3][3] = {{1, 1, 64}, {2, 5, 48}, {3, 7, 256}};
    for (auto& d : shapes) {
        TensorShape s2({d[0] * d[1], d[2]}), s3({d[0], d[1], d[2]}), s4({d[0], d[1], d[2], d[2]});
        uint32_t mx = 0, mn = 0;
        for (uint32_t ts : {2u, 4u}) {
            out.push_back(GetSoftMaxMinTmpSize(s2, ts, false));
            out.push_back(GetSoftMaxMaxTmpSize(s2, ts, false));
            out.push_back(GetSoftMaxFlashMinTmpSize(s2, ts, true, false));
            GetGeluMaxMinTmpSize(s3, ts, mx, mn), out.push_back(mx), out.push_back(mn);
            GetSigmoidMaxMinTmpSize(s3, ts, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetSwiGLUMaxMinTmpSize(s3, ts, mx, mn, false), out.push_back(mx), out.push_back(mn);
            GetGeGLUMaxMinTmpSize(s3, ts, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetReGluMaxMinTmpSize(s3, ts, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetSiluTmpSize(s3, ts, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetLayerNormMaxMinTmpSize(s4, ts, false, mx, mn), out.push_back(mx), out.push_back(mn);
            GetLayerNormMaxMinTmpSize(s4, ts, true, mx, mn), out.push_back(mx), out.push_back(mn);
            GetRmsNormMaxMinTmpSize(s3, ts, mx, mn), out.push_back(mx), out.push_back(mn);
        }
        SoftMaxTiling t;
        SoftMaxTilingFunc(s2, 4, 3 * GetSoftMaxMinTmpSize(s2, 4, false), t);
        out.push_back(t.splitM), out.push_back(t.rangeM), out.push_back(t.tailM), out.push_back(t.reduceSize);
        out.push_back(IsBasicBlockInSoftMax(t, 4));
    }
    write_raw("host_sizes", out.data(), out.size() * 4);
}
""" + main_calling("softmaxes();", "flash_and_log();", "elementwise();", "norms();", "deepnorm();",
                             "host_sizes();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("adv_activation"), DRIVER)


# ---------------------------------------------------------------- SoftMax family


def row_sum(v: np.ndarray) -> np.float32:
    """A float row sum as the vector unit reduces it (SoftMax.md, 实现原理: reducesum on Vector):
    64-float repeats added lane-wise, then the 64 lanes neighbour by neighbour."""
    lanes = np.zeros(64, F32)
    for i, x in enumerate(v.astype(F32)):
        lanes[i % 64] = F32(lanes[i % 64] + x)
    while len(lanes) > 1:
        lanes = (lanes[0::2] + lanes[1::2]).astype(F32)
    return lanes[0]


def softmax_rows(x: np.ndarray, k: int, ori_k: int):
    """SoftMax.md 实现原理, in float: reducemax, sub, exp, reducesum (over the first oriSrcK),
    div over the whole padded row."""
    rows = x.astype(F32).reshape(-1, k)
    mx = rows[:, :ori_k].max(axis=1)
    e = np.exp((rows - mx[:, None]).astype(F32)).astype(F32)
    s = np.array([row_sum(r[:ori_k]) for r in e], F32)
    return (e / s[:, None]).astype(F32), s, mx


def test_softmax_float_reduces_over_the_original_columns_and_fills_the_padding(run):
    x = run("sm_x", F32)
    want, s, mx = softmax_rows(x, 48, 45)
    y = run("sm_y", F32).reshape(5, 48)
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=1e-9)
    # sum and max: one 32-byte block per row, the value repeated (SoftMax.md, sumTensor/maxTensor)
    np.testing.assert_allclose(run("sm_sum", F32).reshape(5, 8), np.repeat(s[:, None], 8, 1), rtol=1e-6)
    assert np.array_equal(run("sm_max", F32).reshape(5, 8), np.repeat(mx[:, None], 8, 1))
    # the original 45 columns sum to 1; the 3 padding columns hold exp(pad - max) / sum on top
    assert np.allclose(y[:, :45].sum(axis=1), 1.0, atol=1e-5)
    assert (y[:, 45:] > 0).all()
    ref = torch.softmax(torch.tensor(x.reshape(5, 48)[:, :45], dtype=torch.float64), dim=-1).numpy()
    np.testing.assert_allclose(y[:, :45], ref, rtol=1e-5, atol=1e-8)


def test_softmax_half_computes_in_float(run):
    x = run("smh_x", F16)
    want, s, _ = softmax_rows(x, 32, 32)
    assert half_ulps(run("smh_y", F16), want.astype(F16).ravel()) <= 1
    np.testing.assert_allclose(run("smh_sum", F32).reshape(4, 8)[:, 0], s, rtol=1e-6)
    # with half sum/max the division still uses the float sum; the outputs are rounded copies
    assert half_ulps(run("smhh_y", F16), want.astype(F16).ravel()) <= 1
    assert np.array_equal(run("smhh_sum", F16).reshape(4, 16)[:, 0], s.astype(F16))
    assert np.array_equal(run("smhh_max", F16).reshape(4, 16)[:, 3], x.reshape(4, 32).max(axis=1))


def test_simple_softmax_with_softmax_s_own_max_and_sum_matches_softmax(run):
    np.testing.assert_allclose(run("ssm_y", F32), run("sm_y", F32), rtol=1e-6, atol=1e-9)


def test_adjust_softmax_res_sets_the_rows_whose_max_matches(run):
    y = run("adj_y", F32).reshape(5, 48)
    assert run("adj_hit", np.int32)[0] == 1
    assert (y[1] == 0.5).all()
    np.testing.assert_allclose(np.delete(y, 1, 0), np.delete(run("ssm_y", F32).reshape(5, 48), 1, 0))


def softmax_min(k: int, ts: int, update: bool = False) -> int:
    """GetSoftMaxMinTmpSize (SoftMax-SimpleSoftMax-Tiling.md; softmax_tiling.cpp on Atlas A2):
    one row of 32/dataTypeSize + srcK + 64 floats; SoftmaxFlash's update path 4 blocks + 2 rows."""
    return (32 // ts * 4 + 2 * k if update else 32 // ts + k + 64) * 4


def test_softmax_tiling_splits_rows_by_the_work_area(run):
    t = run("sm_tiling", np.uint32)
    # srcM srcK srcSize outMaxM outMaxK outMaxSize splitM splitK splitSize reduceM reduceK reduceSize rangeM tailM ...
    assert list(t[:14]) == [5, 48, 240, 5, 8, 40, 2, 48, 96, 2, 8, 16, 2, 1]


def test_logsoftmax_is_log10_of_softmax_and_differs_from_torch_log_softmax(run):
    x = run("ls_x", F32)
    p, _, _ = softmax_rows(x, 64, 64)
    with np.errstate(divide="ignore"):
        want = (np.log(p) * F32(0.4342944819)).astype(F32)  # LogSoftMax.md: dst = np.log10(exp / sum)
    y = run("ls_y", F32).reshape(3, 64)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    assert y[0, 5] == -np.inf  # the underflowed probability
    ref = torch.log_softmax(torch.tensor(x.reshape(3, 64), dtype=torch.float64), dim=-1).numpy()
    finite = np.isfinite(y)
    assert np.abs(y[finite] - ref[finite]).max() > 1.0  # base 10, not e
    np.testing.assert_allclose(y[finite], ref[finite] / math.log(10), rtol=1e-4, atol=1e-5)


def test_softmax_flash_v2_update_rescales_the_running_sum(run):
    x = run("f2_x", F32).reshape(4, 32)
    in_sum, in_max = run("f2_insum", F32).reshape(4, 8)[:, 0], run("f2_inmax", F32).reshape(4, 8)[:, 0]
    # SoftmaxFlashV2.md, the update branch of softmax_flash_2
    row_max = x.max(axis=1)
    mx = np.maximum(row_max, in_max)
    e = np.exp((x - mx[:, None]).astype(F32)).astype(F32)
    exp_max = np.exp((in_max - mx).astype(F32)).astype(F32)
    s = exp_max * in_sum + np.array([row_sum(r) for r in e], F32)
    np.testing.assert_allclose(run("f2_y", F32).reshape(4, 32), e, rtol=2e-6)
    assert np.array_equal(run("f2_max", F32).reshape(4, 8)[:, 2], mx)
    assert np.array_equal(run("f2_rmax", F32).reshape(4, 8)[:, 7], row_max)
    np.testing.assert_allclose(run("f2_expmax", F32).reshape(4, 8)[:, 0], exp_max, rtol=2e-6)
    np.testing.assert_allclose(run("f2_sum", F32).reshape(4, 8)[:, 0], s, rtol=2e-6)


def flashv2_row(k: int, dt1: int, basic: bool) -> int:
    """Floats per row of SoftmaxFlashV2's work area on Atlas A2 (softmax_tiling.cpp), float sums."""
    epb, unit = 8, (128 if basic and k == 1024 else 64)
    if basic:
        return epb + k + unit if dt1 == 2 else epb + unit
    return 2 * epb + k + 64 if dt1 == 2 else epb + 64


def test_softmax_grad(run):
    grad, y = run("f2_x", F32).reshape(4, 32), run("f2_y", F32).reshape(4, 32)
    # SoftmaxGrad.md: s = sum(grad * src); isFront returns s, else (grad - s) * src
    s = np.array([row_sum((g * v).astype(F32)) for g, v in zip(grad, y, strict=True)], F32)
    np.testing.assert_allclose(run("grad_front", F32).reshape(4, 8), np.repeat(s[:, None], 8, 1), rtol=1e-6)
    np.testing.assert_allclose(run("grad_y", F32).reshape(4, 32), (grad - s[:, None]) * y, rtol=1e-5, atol=1e-7)


def softmax_grad_row(k: int, ts: int, front: bool) -> int:
    """GetSoftMaxGradMinTmpSize's floats per row on Atlas A2 (softmax_tiling.cpp)."""
    epb = 32 // ts
    if ts == 2:
        return 2 * epb + 3 * k + 64
    return epb + k + 64 if front else 2 * epb + k + 64


def test_softmax_flash_v2_grad_and_logsoftmax_host_sizes(run):
    want = []
    for m, k in [(4, 32), (8, 64), (16, 1024)]:
        for ts in (2, 4):
            for front in (False, True):
                want += [softmax_grad_row(k, ts, front) * 4, m * softmax_grad_row(k, ts, front) * 4]
        for dt1 in (2, 4):
            for basic in (False, True):
                b = basic and k % 64 == 0
                want.append(flashv2_row(k, dt1, b) * (8 if b else 1) * 4)
                bm = b and m % 8 == 0
                rows = m
                while bm and rows * k >= 64 * 256:
                    rows //= 2
                want.append(rows * flashv2_row(k, dt1, bm) * 4)
        want.append(softmax_min(k, 4))
    assert list(run("f2_sizes", np.uint32)) == want


# ---------------------------------------------------------------- element-wise activations


def half_ulps(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance between two half arrays in units in the last place (the float exp of
    numpy and of the C library may differ by an ulp, which half rounding almost always hides)."""
    ia, ib = (np.asarray(v, F16).view(np.int16).astype(np.int32) for v in (a, b))
    ia, ib = (np.where(i < 0, -32768 - i, i) for i in (ia, ib))
    return int(np.abs(ia - ib).max())


def gelu_doc(x: np.ndarray, dtype) -> np.ndarray:
    """Gelu.md: x / (1 + exp(-1.5957691 (x + 0.044715 x^3))), computed as gelu_impl.h's steps in
    T, as x / (exp(-|y|) + 1) * exp(min(y, 0)), the coefficients T constants."""
    c = lambda v: dtype(v)  # noqa: E731
    x = x.astype(dtype)
    r = lambda v: np.asarray(v, np.float64).astype(dtype)  # noqa: E731
    a = r(x.astype(np.float64) * x)
    b = r(x.astype(np.float64) * a)
    a = r(b.astype(np.float64) * c(0.044715))
    b = r(x.astype(np.float64) + a)
    y = r(b.astype(np.float64) * c(1.5957691216057308))
    e = r(np.exp(r(np.minimum(y, 0)).astype(np.float32)))
    d = r(np.exp(r(-np.abs(y)).astype(np.float32)))
    d = r(x.astype(np.float64) / r(d.astype(np.float64) + 1))
    return r(d.astype(np.float64) * e)


def torch_gelu_tanh(x: np.ndarray) -> np.ndarray:
    return torch.nn.functional.gelu(torch.tensor(x, dtype=torch.float64), approximate="tanh").numpy()


def test_gelu_half_rounds_every_step_to_half_and_differs_from_the_float64_reference(run):
    x = run("ew_hx", F16)
    got = run("gelu_h", F16)
    want = gelu_doc(x, F16)
    assert half_ulps(got, want) <= 1
    ref = torch_gelu_tanh(x.astype(np.float64))
    err = np.abs(got.astype(np.float64) - ref) / np.maximum(np.abs(ref), 1e-2)
    assert err.max() > 2e-3  # half intermediates (and half constants) lose more than a half-output tolerance
    worst = int(err.argmax())
    assert half_ulps(got[worst], want[worst]) <= 1
    # highPrecision computes in float and rounds once: within half rounding of the reference
    np.testing.assert_allclose(run("gelu_hp", F16).astype(np.float64), ref, rtol=1e-3, atol=1e-3)


def test_gelu_family_float(run):
    x = run("ew_fx", F32).astype(np.float64)
    np.testing.assert_allclose(run("gelu_f", F32), torch_gelu_tanh(x), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(run("fgelu_f", F32), x / (1 + np.exp(-1.702 * x)), rtol=2e-6, atol=1e-6)
    # FasterGeluV2.md: x * (sgn(x) * (-0.1444 (min(|0.7071 x|, 1.769) - 1.769)^2 + 0.5) + 0.5)
    t = -0.1444 * (np.minimum(np.abs(0.7071 * x), 1.769) - 1.769) ** 2 + 0.5
    np.testing.assert_allclose(run("fgelu2_f", F32), x * (np.sign(x + 1e-12) * t + 0.5), rtol=1e-5, atol=1e-6)


def test_silu_swish_sigmoid(run):
    hx, fx = run("ew_hx", F16), run("ew_fx", F32).astype(np.float64)
    # Silu.md, silu_common_impl.h: Muls(-1), Exp, Adds(1), Div, each rounded to half
    e = np.exp((-hx).astype(F32)).astype(F16)
    want = (hx.astype(F32) / (e.astype(F32) + 1).astype(F16).astype(F32)).astype(F16)
    assert half_ulps(run("silu_h", F16), want) <= 1
    np.testing.assert_allclose(run("swish_f", F32), fx / (1 + np.exp(-1.5 * fx)), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(run("sigmoid_f", F32), 1 / (1 + np.exp(-fx)), rtol=2e-6)
    e = np.exp((-hx).astype(F32)).astype(F16)
    assert half_ulps(run("sigmoid_h", F16), (1 / (e.astype(F32) + 1).astype(F16).astype(F32)).astype(F16)) <= 1


def test_glu_family_computes_half_in_float_and_rounds_once(run):
    hx, hg = run("ew_hx", F16).astype(F32), run("ew_hg", F16).astype(F32)
    fx, fg = run("ew_fx", F32).astype(np.float64), run("ew_fg", F32).astype(np.float64)
    # SwiGLU.md: src0 * swish(src1, beta); half is cast to float first (swiglu_common_impl.h)
    want = (hx * (hg / (np.exp(-hg) + 1))).astype(F16)
    assert half_ulps(run("swiglu_h", F16), want) <= 1
    np.testing.assert_allclose(run("swiglu_f", F32), fx * fg / (1 + np.exp(-0.5 * fg)), rtol=2e-6, atol=1e-7)
    # GeGLU.md: src0 * gelu(src1), the tanh gelu
    np.testing.assert_allclose(run("geglu_f", F32), fx * torch_gelu_tanh(fg), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run("geglu_h", F16).astype(F32), hx * torch_gelu_tanh(hg), rtol=2e-3, atol=1e-3)
    # ReGlu.md: src0 * relu(src1), exact after one rounding
    assert np.array_equal(run("reglu_h", F16), (hx * np.maximum(hg, 0)).astype(F16))


def test_activation_instructions_are_traced_one_by_one(run):
    names = (run.folder / "silu_trace.bin").read_text()
    assert names == "Muls,Exp,Adds,Div,"


# ---------------------------------------------------------------- normalization


def layernorm_doc(x: np.ndarray, g, b, h: int, ori_h: int, eps: float):
    """LayerNorm.md 实现原理 ([B, S, H] form), in float: mean = ReduceSum(x * 1/originalH);
    variance = ReduceSum((x - mean)^2 * 1/originalH), both over all H columns; then
    (x - mean) / sqrt(variance + eps) * gamma + beta."""
    rows = x.astype(F32).reshape(-1, h)
    inv = F32(1.0 / ori_h)
    mean = np.array([row_sum((r * inv).astype(F32)) for r in rows], F32)
    d = (rows - mean[:, None]).astype(F32)
    var = np.array([row_sum(((q * q).astype(F32) * inv).astype(F32)) for q in d], F32)
    rstd = (F32(1) / np.sqrt((var + F32(eps)).astype(F32))).astype(F32)
    y = ((rstd[:, None] * d).astype(F32) * g.astype(F32)).astype(F32) + b.astype(F32)
    return y.astype(F32), mean, var


def test_layernorm_padding_columns_enter_the_variance(run):
    x, g, b = run("ln_x", F32), run("ln_g", F32), run("ln_b", F32)
    want, mean, var = layernorm_doc(x, g, b, 40, 37, 1e-5)
    np.testing.assert_allclose(run("ln_y", F32).reshape(6, 40), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run("ln_mean", F32), mean, rtol=1e-6)
    np.testing.assert_allclose(run("ln_var", F32), var, rtol=1e-5)
    # torch over the 37 real columns: the 3 zero columns add 3 * mean^2 / 37 to the device's
    # variance, far beyond tolerance with mean about 4
    xr = torch.tensor(x.reshape(6, 40)[:, :37], dtype=torch.float64)
    ref = torch.nn.functional.layer_norm(xr, (37,), torch.tensor(g[:37], dtype=torch.float64),
                                         torch.tensor(b[:37], dtype=torch.float64), 1e-5).numpy()
    assert np.abs(run("ln_y", F32).reshape(6, 40)[:, :37] - ref).max() > 1e-2
    true_var = xr.var(dim=-1, unbiased=False).numpy()
    np.testing.assert_allclose(run("ln_var", F32), true_var + 3 * mean.astype(np.float64) ** 2 / 37, rtol=1e-4)


def test_layernorm_half(run):
    x, g, b = run("lnh_x", F16), run("lnh_g", F16), run("lnh_b", F16)
    want, mean, var = layernorm_doc(x, g, b, 32, 32, float(F16(1e-5)))
    assert half_ulps(run("lnh_y", F16), want.astype(F16).ravel()) <= 1
    assert np.array_equal(run("lnh_mean", F16), mean.astype(F16))
    assert np.array_equal(run("lnh_var", F16), var.astype(F16))


def rmsnorm_doc(x: np.ndarray, g, h: int, ori_h: int, eps: float) -> np.ndarray:
    """RmsNorm.md, rmsnorm_common_impl.h, in float:
    x * exp(-0.5 ln(sum(x^2 over originalH) / originalH + eps)) * gamma."""
    rows = x.astype(F32).reshape(-1, h)
    ms = (rows[:, :ori_h].astype(np.float64) ** 2).sum(axis=1) / ori_h + eps
    return (rows / np.sqrt(ms)[:, None]) * g.astype(F32)


def test_rmsnorm(run):
    assert run("rms_ok", np.int32)[0] == 1
    x, g = run("ln_x", F32), run("ln_g", F32)
    np.testing.assert_allclose(run("rms_y", F32).reshape(6, 40), rmsnorm_doc(x, g, 40, 37, 1e-5), rtol=1e-5, atol=1e-6)
    hx, hg = run("lnh_x", F16), run("lnh_g", F16)
    np.testing.assert_allclose(run("rmsh_y", F16).astype(F32).reshape(4, 32), rmsnorm_doc(hx, hg, 32, 32, 1e-5),
                               rtol=2e-3, atol=1e-3)


def test_deepnorm_is_layernorm_of_alpha_x_plus_gx_over_the_original_columns(run):
    x, gx, g, b = run("dn_x", F32), run("dn_gx", F32), run("dn_g", F32), run("dn_b", F32)
    # DeepNorm.md: DeepNorm(x) = LayerNorm(alpha * x + SubLayer(x)); the sums over originalH = 37
    z = (1.5 * x.astype(np.float64) + gx).reshape(4, 40)
    mean = z[:, :37].mean(axis=1)
    var = ((z[:, :37] - mean[:, None]) ** 2).mean(axis=1)
    y = (z - mean[:, None]) / np.sqrt(var + 1e-5)[:, None] * g + b
    np.testing.assert_allclose(run("dn_y", F32).reshape(4, 40), y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run("dn_mean", F32), mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(run("dn_var", F32), var, rtol=1e-5)  # the "rstd" output holds the variance


def test_deepnorm_host_sizes_are_layernorm_s(run):
    got = list(run("dn_sizes", np.uint32))
    assert got[0] == 1  # GetDeepNormTilingInfo accepted [1, 4, 40] with originalH 37
    for i, (b, s, h) in enumerate([(1, 1, 64), (2, 5, 48), (3, 8, 256)]):
        m = b * s
        mx, mn, basic_ok, bmx, bmn = got[1 + 5 * i:6 + 5 * i]
        assert (mx, mn) == (3 * align32(m * h * 4) + 2 * align32(m * 4), 3 * align32(h * 4) + 2 * align32(m * 4))
        # isBasicBlock needs H % 64 == 0 and B * S % 8 == 0; isReuseSource on float saves one buffer
        assert basic_ok == int(h % 64 == 0 and m % 8 == 0)
        if basic_ok:
            assert (bmx, bmn) == (2 * align32(m * h * 4) + 2 * align32(m * 4), 2 * align32(h * 4) + 2 * align32(m * 4))


# ---------------------------------------------------------------- contracts


def test_too_small_temporary_buffers_fault_at_the_call(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found = {(row[1], int(row[2])): row[3] for row in run.rows("FAULT")}
    assert len(expected) == 7 and set(found) == expected, found
    msgs = list(found.values())
    assert any("SoftMax's sharedTmpBuffer holds 448 bytes, but the API needs at least 480" in m for m in msgs), msgs
    assert any("needs at least 960 (the tiling's splitM rows" in m for m in msgs), msgs
    assert any("Gelu's sharedTmpBuffer holds 736 bytes, but the API needs at least 768" in m for m in msgs), msgs


def align32(n: int) -> int:
    return (n + 31) // 32 * 32


def test_host_tmp_sizes_match_the_documented_formulas(run):
    got = list(run("host_sizes", np.uint32))
    want: list[int] = []
    for b, s, h in [(1, 1, 64), (2, 5, 48), (3, 7, 256)]:
        m, n = b * s, b * s * h
        for ts in (2, 4):
            want += [softmax_min(h, ts), m * softmax_min(h, ts), softmax_min(h, ts, update=True)]
            want += [max(3 * n * 4, 768), 768]  # GetGeluMaxMinTmpSize
            want += [max(n * ts, 256), 256]  # GetSigmoidMaxMinTmpSize
            f = 0 if ts == 4 else 6
            want += [f * max(n * ts, 256), f * 256]  # GetSwiGLUMaxMinTmpSize
            f = 0 if ts == 4 else 4
            want += [f * max(n * ts, 256), f * 256]  # GetGeGLUMaxMinTmpSize
            want += [256, 256] if ts == 4 else [max(6 * n * ts, 6 * 256), 6 * 256]  # GetReGluMaxMinTmpSize
            want += [0, 0]  # GetSiluTmpSize
            want += [3 * align32(n * 4) + 2 * align32(m * 4), 3 * align32(h * 4) + 2 * align32(m * 4)]
            k = 2 if ts == 4 else 3  # isReuseSource saves a buffer for float only
            want += [k * align32(n * 4) + 2 * align32(m * 4), k * align32(h * 4) + 2 * align32(m * 4)]
            c, unit = (1, 8) if ts == 4 else (2, 16)
            want += [(c * n + math.ceil(m / unit) * unit) * 4, (c * h + 8) * 4]  # GetRmsNormMaxMinTmpSize
        split = min(3, m)  # a work area of 3 rows
        basic = m % 8 == 0 and h % 64 == 0
        want += [split, m // split, m % split, split * 8, int(m % split == 0 and 64 <= h < 2048 and h % 64 == 0)]
        assert not basic
    assert got == want
