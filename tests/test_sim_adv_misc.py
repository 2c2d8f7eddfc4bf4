"""The advanced API's quantization, index, filter/select and transpose/pad families on the
emulator: AscendQuant, AscendDequant, AscendAntiQuant, Arange, DropOut, Select with a bytes mask,
Pad, UnPad, Transpose (ConfusionTranspose) and TransData, with their host tiling functions.

One C++ driver (DRIVER below, one compile) runs every API outside a launch, with full and tail
shapes, and dumps inputs and outputs; the expectations are recomputed here from each API's
asc-devkit page (docs/zh/api/SIMD-API/高阶API/量化操作/<API>.md, 索引计算/Arange-94.md, 数据过滤/DropOut.md and
Select-95.md, 张量变换/Pad.md, UnPad.md, Transpose-96.md, TransData.md: the formula, the 实现原理 steps
and their precision) and the host tiling implementations (the buffer sizes). Where the device's
computation differs from a float64 reference, the test includes an input on which they differ and
asserts the documented result. Provoked faults are checked for code and line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim_driver import ADV_HELPERS, PRELUDE, Run, build_and_run, main_calling

F16, F32 = np.float16, np.float32

DRIVER = PRELUDE + ADV_HELPERS + r"""
#include "tiling/tiling_api.h"

// AscendQuant: per tensor on 64 half (with a sharedTmpBuffer) and 96 float (the framework form, a
// tail of a 64-element repeat; one input on a half rounding tie), per channel on 64 float with
// scale and offset tensors of 16; a buffer 32 bytes short.
static void quant() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<half>(a, "q_x", 64, [](uint32_t i) { return (float(i) - 32.0f) * 1.75f; });
    auto y = al<int8_t>(a, 64);
    uint32_t mx = 0, mn = 0;
    GetAscendQuantMaxMinTmpSize(TensorShape({64}), 2, mx, mn);
    auto tmp = al<uint8_t>(a, mn);
    AscendQuant<half>(y, x, tmp, 2.5f, 0.5f, 64);
    dump("q_y", y, 64);
    auto xf = input<float>(a, "qf_x", 96, [](uint32_t i) { return i == 5 ? 2.5009765625f : float(i) * 0.37f - 7.0f; });
    auto yf = al<int8_t>(a, 96);
    AscendQuant<float>(yf, xf, 1.0f, 0.0f, 96);
    dump("qf_y", yf, 96);
    auto xc = input<float>(a, "qc_x", 64, [](uint32_t i) { return float(int(i * 29u % 41u) - 20) * 0.3f; });
    auto sc = input<float>(a, "qc_s", 16, [](uint32_t i) { return 0.5f + 0.25f * float(i); });
    auto of = input<float>(a, "qc_o", 16, [](uint32_t i) { return float(i) - 8.0f; });
    auto yc = al<int8_t>(a, 64);
    AscendQuant<float>(yc, xc, tmp, sc, of, 16, 16, 64);
    dump("qc_y", yc, 64);
    auto small = tmp[0];
    small.SetSize(mn - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        AscendQuant<half>(y, x, small, 2.5f, 0.5f, 64);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// AscendDequant: float rows [4, 16] of which 12 are computed (the rest keep -7), one int32 past
// 2^24; bfloat16 [2, 8] -> rows of 16; {1, 32, 8} read as 4 rows (single-row mode) and as one row
// (multi-row mode); half with a uint64_t scale; a scalar scale; a buffer too small.
static void dequant() {
    LocalMemAllocator<Hardware::UB> a;
    auto s = input<int32_t>(a, "dq_s", 64,
                            [](uint32_t i) { return i == 3 ? 16777217 : int(i * 7919u % 2001u) - 1000; });
    auto k = input<float>(a, "dq_k", 16, [](uint32_t i) { return 0.01f * float(i + 1) - 0.05f; });
    auto sentinel = [](uint32_t) { return -7.0f; };
    auto d = input<float>(a, "dq_d0", 64, sentinel);
    uint32_t mx = 0, mn = 0;
    GetAscendDequantMaxMinTmpSize(TensorShape({4, 16}), 4, mx, mn);
    auto tmp = al<uint8_t>(a, mn);
    AscendDequant(d, s, k, tmp, {4, 16, 12});
    dump("dq_d", d, 64);
    auto kb = input<bfloat16_t>(a, "dq_kb", 8, [](uint32_t i) { return 0.3f * float(i) - 1.1f; });
    auto db = input<bfloat16_t>(a, "dq_db0", 32, sentinel);
    AscendDequant(db, s, kb, DequantParams{2, 8, 8});
    dump("dq_db", db, 32);
    auto d2 = input<float>(a, "dq_d20", 32, sentinel);
    AscendDequant(d2, s, k, DequantParams{1, 32, 8});
    dump("dq_d2", d2, 32);
    auto d3 = input<float>(a, "dq_d30", 32, sentinel);
    AscendDequant<float, float, DeQuantMode::DEQUANT_WITH_MULTI_ROW>(d3, s, k, DequantParams{1, 32, 8});
    dump("dq_d3", d3, 32);
    auto ku = al<uint64_t>(a, 8);
    for (uint32_t i = 0; i < 8; ++i) {
        float f = 0.125f * float(i + 1);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        ku.data()[i] = (uint64_t(0xABCDu) << 32) | bits;  // control bits above the float
    }
    sage::sim::ub_mark(ku.range(8));
    auto dh = al<half>(a, 32);
    AscendDequant(dh, s, ku, DequantParams{2, 8, 8});
    dump("dq_dh", dh, 32);
    auto d4 = al<float>(a, 64);
    AscendDequant<float, float>(d4, s, 3.0f, DequantParams{4, 16, 16});
    dump("dq_d4", d4, 64);
    auto small = tmp[0];
    small.SetSize(mn - 4);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        AscendDequant(d, s, k, small, {4, 16, 12});
    } catch (const sage::sim::KernelAbort&) {
    }
}

// AscendAntiQuant: int8 [4, 64] -> half per channel ([1, 64] from the offset's ShapeInfo; [2, 64]
// groups from AntiQuantShapeInfo), -> bfloat16 per tensor with its buffer, transposed [2, 128]
// with [2, 4] groups along K; a bfloat16 call with half the minimum buffer.
static void antiquant() {
    LocalMemAllocator<Hardware::UB> a;
    auto q = input<int8_t>(a, "aq_q", 256, [](uint32_t i) { return int(i * 37u % 255u) - 127; });
    auto off = input<half>(a, "aq_o", 128, [](uint32_t i) { return (float(i % 13) - 6.0f) * 0.37f; });
    auto sc = input<half>(a, "aq_s", 128, [](uint32_t i) { return 0.011f * float(i + 3) * (i % 2 ? 1.0f : -1.0f); });
    uint32_t shp[] = {1, 64};
    off.SetShapeInfo(ShapeInfo(2, shp, DataFormat::ND));
    auto out = al<half>(a, 256);
    AscendAntiQuant<int8_t, half, false>(out, q, off, sc, 4);
    dump("aq_y", out, 256);
    auto out2 = al<half>(a, 256);
    AscendAntiQuant<int8_t, half, false>(out2, q, off, sc, 4, {2, 64, 2, 64});
    dump("aq_y2", out2, 256);
    const uint32_t need = GetAscendAntiQuantMinTmpSize(TensorShape({4, 64}), TensorShape({1}), false, ge::DT_INT8,
                                                       ge::DT_BF16);
    auto tmp = al<uint8_t>(a, need);
    auto outb = al<bfloat16_t>(a, 256);
    AscendAntiQuant<int8_t, bfloat16_t, false>(outb, q, bfloat16_t(1.5f), bfloat16_t(-0.75f), tmp, 4);
    dump("aq_yb", outb, 256);
    auto outt = al<half>(a, 256);
    AscendAntiQuant<int8_t, half, true>(outt, q, off, sc, 128, {2, 4, 2, 4});
    dump("aq_yt", outt, 256);
    auto small = tmp[0];
    small.SetSize(need / 2);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        AscendAntiQuant<int8_t, bfloat16_t, false>(outb, q, bfloat16_t(1.5f), bfloat16_t(-0.75f), small, 4);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Arange: 100 float (a tail), 20 half, 70 int32; a count of 0.
static void arange() {
    LocalMemAllocator<Hardware::UB> a;
    auto f = al<float>(a, 104);
    Arange<float>(f, 1.234f, 5.678f, 100);
    dump("ar_f", f, 104);
    auto h = al<half>(a, 32);
    Arange<half>(h, half(-3.0f), half(0.3f), 20);
    dump("ar_h", h, 32);
    auto i = al<int32_t>(a, 72);
    ArithProgression<int32_t>(i, -5, 3, 70);
    dump("ar_i", i, 72);
    try {
        expect("api-misuse", __LINE__ + 1);
        Arange<float>(f, 0.0f, 1.0f, 0);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// DropOut on float [2, 64]: byte mode, bit mode, byte mode with a padded mask [2, 96]; half
// [2, 64] in bit mode with a padded mask [2, 16]; keepProb out of range.
static void dropout() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "do_x", 128, [](uint32_t i) { return float(int(i * 13u % 97u) - 48) * 0.7f; });
    auto mb = input<uint8_t>(a, "do_mb", 192, [](uint32_t i) { return (i * 7u % 5u) < 2 ? 1 : 0; });
    auto mbits = input<uint8_t>(a, "do_mbits", 32, [](uint32_t i) { return (i * 97u + 13u) % 256u; });
    uint32_t mx = 0, mn = 0;
    GetDropOutMaxMinTmpSize(TensorShape({2, 64}), 4, false, mx, mn);
    auto tmp = al<uint8_t>(a, mn);
    auto y = al<float>(a, 128);
    DropOutShapeInfo info;
    info.firstAxis = 2, info.srcLastAxis = 64, info.maskLastAxis = 64;
    DropOut(y, x, mb, tmp, 0.7f, info);
    dump("do_byte", y, 128);
    info.maskLastAxis = 8;
    DropOut(y, x, mbits, tmp, 0.7f, info);
    dump("do_bit", y, 128);
    info.maskLastAxis = 96;
    DropOut(y, x, mb, 0.7f, info);
    dump("do_bytepad", y, 128);
    auto xh = input<half>(a, "do_xh", 128, [](uint32_t i) { return float(int(i % 29u) - 14) * 0.3f; });
    auto yh = al<half>(a, 128);
    info.maskLastAxis = 16;
    DropOut<half>(yh, xh, mbits, tmp, 0.3f, info);
    dump("do_bitpad", yh, 128);
    try {
        expect("api-misuse", __LINE__ + 1);
        DropOut(y, x, mb, tmp, 1.5f, info);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Select with a bytes mask: float [3, 8] by a uint8_t mask [3, 32] (tensor, scalar); half [2, 16]
// by an int16_t mask [2, 16] (scalar, tensor); a buffer too small.
static void select_bytes() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "se_x", 24, [](uint32_t i) { return float(i) - 11.5f; });
    auto m = input<uint8_t>(a, "se_m", 96, [](uint32_t i) { return (i * 5u) % 3u == 0 ? 0 : i % 7u; });
    uint32_t mx = 0, mn = 0;
    GetSelectMaxMinTmpSize(TensorShape({3, 8}), TensorShape({1}), 4, TensorShape({3, 32}), 1, false, mx, mn);
    auto tmp = al<uint8_t>(a, mn);
    auto y = al<float>(a, 24);
    SelectWithBytesMaskShapeInfo info;
    info.firstAxis = 3, info.srcLastAxis = 8, info.maskLastAxis = 32;
    Select<float, uint8_t, false>(y, x, 1.234f, m, tmp, info);
    dump("se_y", y, 24);
    auto xh = input<half>(a, "se_xh", 32, [](uint32_t i) { return float(i) * 0.5f; });
    auto mh = input<int16_t>(a, "se_mh", 32, [](uint32_t i) { return i % 3u == 1 ? 0 : int(i) - 16; });
    auto yh = al<half>(a, 32);
    info.firstAxis = 2, info.srcLastAxis = 16, info.maskLastAxis = 16;
    Select(yh, half(-2.0f), xh, mh, tmp, info);
    dump("se_yh", yh, 32);
    auto small = tmp[0];
    small.SetSize(512);
    info.firstAxis = 3, info.srcLastAxis = 8, info.maskLastAxis = 32;
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        Select<float, uint8_t, false>(y, x, 1.234f, m, small, info);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Pad: float [8, 7] -> [8, 8] (right 1, the framework form), half [16, 13] -> [16, 16] (left 1,
// right 2), half [2, 16] with 13 real columns (right 2); UnPad float [3, 16] -> [3, 11]; a left
// pad on an aligned width.
static void pads() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<float>(a, "pad_x", 56, [](uint32_t i) { return float(i); });
    auto y = al<float>(a, 64);
    PadTiling t;
    uint32_t mx = 0, mn = 0;
    GetPadMaxMinTmpSize(TensorShape({8, 7}), 4, mx, mn);
    PadTilingFunc(TensorShape({8, 7}), TensorShape({8, 7}), mx, 4, t);
    PadParams p{0, 1, 321};
    Pad(y, x, p, t);
    dump("pad_y", y, 64);
    write_raw("pad_tiling", &t, sizeof t);
    auto xh = input<half>(a, "padh_x", 208, [](uint32_t i) { return float(i % 50u) * 0.5f; });
    auto yh = al<half>(a, 256);
    auto tmp = al<uint8_t>(a, mn);
    PadTilingFunc(TensorShape({16, 13}), TensorShape({16, 13}), mn, 2, t);
    PadParams ph{1, 2, -4};
    Pad(yh, xh, ph, tmp, t);
    dump("padh_y", yh, 256);
    auto x2 = input<half>(a, "pad2_x", 32, [](uint32_t i) { return float(i) + 0.25f; });
    auto y2 = al<half>(a, 32);
    PadTilingFunc(TensorShape({2, 16}), TensorShape({2, 13}), mn, 2, t);
    PadParams p2{0, 2, 7};
    Pad(y2, x2, p2, tmp, t);
    dump("pad2_y", y2, 32);
    auto xu = input<float>(a, "unpad_x", 48, [](uint32_t i) { return float(i) * 2.0f; });
    auto yu = al<float>(a, 40);
    UnPadTiling ut;
    UnPadTilingFunc(TensorShape({3, 16}), 0, 4, ut);
    UnPadParams up{2, 3};
    UnPad(yu, xu, up, ut);
    dump("unpad_y", yu, 33);
    PadParams bad{1, 1, 0};
    try {
        expect("api-misuse", __LINE__ + 1);
        Pad(y2, x2, bad, tmp, t);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Transpose: half [B=1, N=2, S=32, H/N=32] NZ -> ND and NZ -> NZ, float [2, 1, 16, 16] NZ -> ND;
// a type not emulated.
static void transposes() {
    LocalMemAllocator<Hardware::UB> a;
    auto x = input<half>(a, "tr_x", 2048, [](uint32_t i) { return float(i % 2000u); });
    auto y = al<half>(a, 2048);
    uint32_t mx = 0, mn = 0;
    GetTransposeMaxMinTmpSize(TensorShape({1, 2, 32, 32}), 2, 1, mx, mn);
    ConfusionTransposeTiling t;
    GetTransposeTilingInfo(TensorShape({1, 2, 32, 32}), mn, 2, 1, t);
    auto tmp = al<uint8_t>(a, mn);
    Transpose(y, x, tmp, TransposeType::TRANSPOSE_NZ2ND_0213, t);
    dump("tr_nd", y, 2048);
    Transpose(y, x, TransposeType::TRANSPOSE_NZ2NZ_0213, t);
    dump("tr_nz", y, 2048);
    auto xf = input<float>(a, "trf_x", 512, [](uint32_t i) { return float(i) * 0.5f; });
    auto yf = al<float>(a, 512);
    GetTransposeTilingInfo(TensorShape({2, 1, 16, 16}), 1024, 4, 1, t);
    Transpose(yf, xf, TransposeType::TRANSPOSE_NZ2ND_0213, t);
    dump("trf_nd", yf, 512);
    try {
        expect("not-emulated", __LINE__ + 1);
        Transpose(y, x, tmp, TransposeType::TRANSPOSE_ND2ND_ONLY, t);
    } catch (const sage::sim::KernelAbort&) {
    }
}

constexpr TransDataConfig kToFz = {DataFormat::NCDHW, DataFormat::FRACTAL_Z_3D};
constexpr TransDataConfig kFromFz = {DataFormat::FRACTAL_Z_3D, DataFormat::NCDHW};
constexpr TransDataConfig kTo5hd = {DataFormat::NCDHW, DataFormat::NDC1HWC0};
constexpr TransDataConfig kFrom5hd = {DataFormat::NDC1HWC0, DataFormat::NCDHW};

// TransData on half with N = 3, C = 5, D = 2, H = W = 3 (HW padded to 16): all four conversions,
// each back from the other format; the buffer one block short.
static void transdatas() {
    LocalMemAllocator<Hardware::UB> a;
    const int n = 3, c = 5, d = 2, h = 3, w = 3;
    auto nc = input<half>(a, "td_nc", 480, [](uint32_t i) { return i % 16u < 9u ? float(i) : 99.0f; });
    auto ncdhw = MakeLayout(MakeShape(n, c, d, h, w), MakeStride());
    auto fz = MakeLayout(MakeShape(d, 1, h, w, 1, 16, 16), MakeStride());
    auto hd = MakeLayout(MakeShape(n, d, 1, h, w, 16), MakeStride());
    auto& plat = *platform_ascendc::PlatformAscendCManager::GetInstance();
    uint32_t mx = 0, mn = 0;
    std::vector<uint32_t> s;
    GetTransDataMaxMinTmpSize(plat, TensorShape({n, c, d, h, w}), TensorShape({d, 1, h, w, 1, 16, 16}),
                              ge::DT_FLOAT16, kToFz, mx, mn);
    s.push_back(mn);
    auto tmp = al<uint8_t>(a, 65536);
    tmp.SetSize(mn);
    auto yfz = al<half>(a, 4608);
    TransData<kToFz>(yfz, nc, tmp, TransDataParams<decltype(ncdhw), decltype(fz)>{ncdhw, fz});
    dump("td_fz", yfz, 4608);
    GetTransDataMaxMinTmpSize(plat, TensorShape({d, 1, h, w, 1, 16, 16}), TensorShape({n, c, d, h, w}),
                              ge::DT_FLOAT16, kFromFz, mx, mn);
    s.push_back(mn);
    tmp.SetSize(mn);
    auto back = al<half>(a, 480);
    TransData<kFromFz>(back, yfz, tmp, TransDataParams<decltype(fz), decltype(ncdhw)>{fz, ncdhw});
    dump("td_back_fz", back, 480);
    GetTransDataMaxMinTmpSize(plat, TensorShape({n, c, d, h, w}), TensorShape({n, d, 1, h, w, 16}), ge::DT_FLOAT16,
                              kTo5hd, mx, mn);
    s.push_back(mn);
    tmp.SetSize(mn);
    auto y5 = al<half>(a, 864);
    TransData<kTo5hd>(y5, nc, tmp, TransDataParams<decltype(ncdhw), decltype(hd)>{ncdhw, hd});
    dump("td_5hd", y5, 864);
    GetTransDataMaxMinTmpSize(plat, TensorShape({n, d, 1, h, w, 16}), TensorShape({n, c, d, h, w}), ge::DT_FLOAT16,
                              kFrom5hd, mx, mn);
    s.push_back(mn);
    tmp.SetSize(mn);
    TransData<kFrom5hd>(back, y5, tmp, TransDataParams<decltype(hd), decltype(ncdhw)>{hd, ncdhw});
    dump("td_back_5hd", back, 480);
    sizes_out("td_sizes", s);
    tmp.SetSize(mn - 32);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        TransData<kFrom5hd>(back, y5, tmp, TransDataParams<decltype(hd), decltype(ncdhw)>{hd, ncdhw});
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Layout(coord) and Crd2Idx (辅助数据结构/Layout, Coordinate): row-major offsets as the matmul_l2cache
// sample computes them, the Crd2Idx page's two worked examples (flat and hierarchical, the second
// delinearizing a single integer over a tuple mode), and a compile-time Std::Int coordinate.
static void coords() {
    std::vector<uint32_t> v;
    const int64_t m = 640, k = 512;
    auto a = MakeLayout(MakeShape(m, k), MakeStride(k, int64_t(1)));
    Coord<int64_t, int64_t> ac = MakeCoord(int64_t(128), int64_t(64));
    v.push_back(uint32_t(a(ac)));
    v.push_back(uint32_t(Crd2Idx(MakeCoord(1, 2, 3), MakeShape(3, 4, 5), MakeStride(20, 5, 1))));
    auto nested = MakeLayout(MakeShape(MakeShape(2, 4), MakeShape(3, 5)),
                             MakeStride(MakeStride(3, 6), MakeStride(1, 24)));
    v.push_back(uint32_t(nested(MakeCoord(11, 12))));
    v.push_back(uint32_t(Crd2Idx(7, MakeShape(2, 4), MakeStride(1, 2))));  // (1, 3): 1 + 6
    constexpr auto fixed = MakeLayout(MakeShape(Std::Int<4>{}, Std::Int<8>{}),
                                      MakeStride(Std::Int<8>{}, Std::Int<1>{}));
    static_assert(fixed(MakeCoord(Std::Int<2>{}, Std::Int<3>{})) == 19, "a constant coordinate folds at compile time");
    static_assert(is_layout<decltype(fixed)>::value && !is_layout<int>::value, "is_layout");
    v.push_back(uint32_t(std::get<1>(fixed.GetShape())));
    sizes_out("coords", v);
}

// The host functions for three shapes each.
static void host_sizes() {
    std::vector<uint32_t> v;
    uint32_t mx = 0, mn = 0;
    for (int64_t n : {32, 1024, 4096}) {
        GetAscendQuantMaxMinTmpSize(TensorShape({n}), 2, mx, mn), v.push_back(mx), v.push_back(mn);
    }
    for (auto s : {std::vector<int64_t>{4, 16}, std::vector<int64_t>{128, 32}, std::vector<int64_t>{64}}) {
        GetAscendDequantMaxMinTmpSize(TensorShape(s), 4, mx, mn), v.push_back(mx), v.push_back(mn);
    }
    GetAscendAntiQuantMaxMinTmpSize(TensorShape({8, 128}), TensorShape({1, 128}), false, ge::DT_INT8, ge::DT_BF16,
                                    mx, mn);
    v.push_back(mx), v.push_back(mn);
    GetAscendAntiQuantMaxMinTmpSize(TensorShape({8, 128}), TensorShape({1}), false, ge::DT_INT8, ge::DT_BF16,
                                    mx, mn);
    v.push_back(mx), v.push_back(mn);
    GetAscendAntiQuantMaxMinTmpSize(TensorShape({64, 64}), TensorShape({64, 2}), true, ge::DT_INT8, ge::DT_BF16,
                                    mx, mn);
    v.push_back(mx), v.push_back(mn);
    for (int64_t n : {64, 1000, 4096}) {
        GetDropOutMaxMinTmpSize(TensorShape({n}), 2, false, mx, mn), v.push_back(mx), v.push_back(mn);
    }
    GetSelectMaxMinTmpSize(TensorShape({2, 32}), TensorShape({1}), 4, TensorShape({2, 32}), 1, false, mx, mn);
    v.push_back(mx), v.push_back(mn);
    GetSelectMaxMinTmpSize(TensorShape({8, 1024}), TensorShape({1}), 2, TensorShape({8, 1024}), 1, false, mx, mn);
    v.push_back(mx), v.push_back(mn);
    GetSelectMaxMinTmpSize(TensorShape({1}), TensorShape({4, 48}), 2, TensorShape({4, 64}), 2, false, mx, mn);
    v.push_back(mx), v.push_back(mn);
    for (auto s : {std::vector<int64_t>{16, 31}, std::vector<int64_t>{8, 7}, std::vector<int64_t>{100, 33}}) {
        GetPadMaxMinTmpSize(TensorShape(s), 4, mx, mn), v.push_back(mx), v.push_back(mn);
    }
    for (auto s : {std::vector<int64_t>{1, 2, 64, 32}, std::vector<int64_t>{2, 4, 30, 16},
                   std::vector<int64_t>{1, 1, 16, 64}}) {
        GetTransposeMaxMinTmpSize(TensorShape(s), 2, 1, mx, mn), v.push_back(mx), v.push_back(mn);
    }
    GetArangeMaxMinTmpSize(mx, mn), v.push_back(mx), v.push_back(mn);
    sizes_out("host_sizes", v);
}
""" + main_calling("quant();", "dequant();", "antiquant();", "arange();", "dropout();", "select_bytes();",
                   "pads();", "transposes();", "transdatas();", "coords();", "host_sizes();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("adv_misc"), DRIVER)


def h(x):
    return np.asarray(x, dtype=F32).astype(F16)


def test_every_provoked_fault_is_reported_at_its_line(run):
    expected = sorted((code, int(line)) for _, code, line in run.rows("EXPECT"))
    got = sorted((code, int(line)) for _, code, line, _msg in run.rows("FAULT"))
    assert expected == got
    assert len(expected) == 9


# ---- quantization ----

def quant_model(x, scale, offset):
    """AscendQuant.md 实现原理: src, scale and offset to half, Mul(s) and Add(s) in half, Cast to int8
    rounding half to even and saturating."""
    t = (h(x).astype(F32) * h(scale).astype(F32)).astype(F16)
    t = (t.astype(F32) + h(offset).astype(F32)).astype(F16)
    return np.clip(np.rint(t.astype(np.float64)), -128, 127).astype(np.int8)


def test_ascend_quant_per_tensor_and_per_channel(run):
    x = run("q_x", F16)
    assert np.array_equal(run("q_y", np.int8), quant_model(x, 2.5, 0.5))
    assert run("q_y", np.int8).max() == 127 and run("q_y", np.int8).min() == -128  # saturated both ways
    xf = run("qf_x", F32)
    yf = run("qf_y", np.int8)
    assert np.array_equal(yf, quant_model(xf, 1.0, 0.0))
    # The float input is cast to half first: 2.5009765625 becomes the tie 2.5, which rounds to 2;
    # a float64 reference rounds the input itself to 3.
    assert yf[5] == 2 and np.rint(np.float64(xf[5])) == 3
    xc, sc, of = run("qc_x", F32), run("qc_s", F32), run("qc_o", F32)
    idx = np.arange(64) % 16
    assert np.array_equal(run("qc_y", np.int8), quant_model(xc, sc[idx], of[idx]))


def test_ascend_dequant_rows_modes_and_scales(run):
    s = run("dq_s", np.int32).astype(np.float64)
    k = run("dq_k", F32)
    d = run("dq_d", F32).reshape(4, 16)
    src32 = run("dq_s", np.int32).astype(F32)  # the device's Cast int32 -> float rounds 16777217 to 16777216
    want = (src32.reshape(4, 16)[:, :12] * k[:12]).astype(F32)
    assert np.array_equal(d[:, :12], want)
    assert np.all(d[:, 12:] == -7.0)  # past calCount: left as it was
    kb = run("dq_kb", np.uint16)
    kbf = (kb.astype(np.uint32) << 16).view(F32)
    db = run("dq_db", np.uint16).reshape(2, 16)
    prod = src32[:16].reshape(2, 8) * kbf
    bits = prod.view(np.uint32)
    rne = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # float -> bfloat16, nearest even
    assert np.array_equal(db[:, :8], rne)
    assert np.all(db[:, 8:] == run("dq_db0", np.uint16).reshape(2, 16)[:, 8:])  # n_dst = 16: padding untouched
    d2 = run("dq_d2", F32).reshape(4, 8)
    assert np.array_equal(d2, (src32[:32].reshape(4, 8) * k[:8]).astype(F32))  # {1, 32, 8} as 4 rows
    d3 = run("dq_d3", F32)
    assert np.array_equal(d3[:8], src32[:8] * k[:8]) and np.all(d3[8:] == -7.0)  # multi-row: one row of 8
    dh = run("dq_dh", F16).reshape(2, 16)
    scale = (0.125 * np.arange(1, 9)).astype(F32)
    with np.errstate(over="ignore"):  # 16777216 * 0.5 overflows half: inf, as the Cast gives
        assert np.array_equal(dh[:, :8], (src32[:16].reshape(2, 8) * scale).astype(F16))
    d4 = run("dq_d4", F32)
    assert np.array_equal(d4, (src32 * F32(3.0)).astype(F32))
    # 16777217 is cast to float first (16777216): 50331648, where float64 gives 50331651 -> 50331652
    assert d4[3] == 50331648 and F32(s[3] * 3.0) == 50331652


def test_ascend_antiquant_half_steps_bfloat16_and_transposed(run):
    q = run("aq_q", np.int8).astype(F32)
    off, sc = run("aq_o", F16).astype(F32), run("aq_s", F16).astype(F32)
    qk = q.reshape(4, 64)
    # half output: Add then Mul, each rounded to half (AscendAntiQuant.md 实现原理)
    want = ((qk + off[:64]).astype(F16).astype(F32) * sc[:64]).astype(F16)
    got = run("aq_y", F16).reshape(4, 64)
    assert np.array_equal(got, want)
    once = ((qk + off[:64]) * sc[:64]).astype(F16)  # float computation rounded once
    assert np.any(got != once)
    og, sg = off.reshape(2, 64), sc.reshape(2, 64)  # two groups of 2 rows
    want2 = ((qk + og[np.arange(4) // 2]).astype(F16).astype(F32) * sg[np.arange(4) // 2]).astype(F16)
    assert np.array_equal(run("aq_y2", F16).reshape(4, 64), want2)
    yb = run("aq_yb", np.uint16)
    prod = ((q + F32(1.5)) * F32(-0.75)).astype(F32)
    bits = prod.view(np.uint32)
    assert np.array_equal(yb, ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16))
    qt = q.reshape(2, 128)  # [N, K], offset/scale [N, 4]: groups of 32 along K
    ot, st = off[:8].reshape(2, 4), sc[:8].reshape(2, 4)
    g = np.arange(128) // 32
    wantt = ((qt + ot[:, g]).astype(F16).astype(F32) * st[:, g]).astype(F16)
    assert np.array_equal(run("aq_yt", F16).reshape(2, 128), wantt)


# ---- index ----

def arange_model(first, diff, count, dtype, blk, rep):
    """Arange-94.md 实现原理: the first block by the scalar unit, then Adds a block, then a repeat, at a time."""
    written = count if count <= blk else -(-count // blk) * blk
    out = np.zeros(written, dtype=dtype)
    calc = F32 if dtype == F16 else dtype
    for i in range(min(count, blk)):
        out[i] = (calc(first) + calc(diff) * calc(i)).astype(dtype) if dtype == F16 else dtype(first + diff * dtype(i))
    step_b = dtype(F32(diff) * F32(blk)) if dtype != np.int32 else dtype(diff * blk)
    step_r = dtype(F32(diff) * F32(rep)) if dtype != np.int32 else dtype(diff * rep)
    for i in range(blk, min(written, rep)):
        out[i] = out[i - blk] + step_b
    for i in range(rep, written):
        out[i] = out[i - rep] + step_r
    return out


def test_arange_accumulates_as_the_device_adds(run):
    f = run("ar_f", F32)
    want = arange_model(F32(1.234), F32(5.678), 100, F32, 8, 64)
    assert np.array_equal(f, want)  # 104 written: the last Adds fills its block
    once = (np.float64(F32(1.234)) + np.arange(104) * np.float64(F32(5.678))).astype(F32)
    assert np.any(f != once)  # the adds' roundings accumulate
    assert np.array_equal(run("ar_h", F16)[:20], arange_model(h(-3.0)[()], h(0.3)[()], 20, F16, 16, 128)[:20])
    assert np.array_equal(run("ar_i", np.int32)[:70], -5 + 3 * np.arange(70))


# ---- filter and select ----

def test_dropout_byte_and_bit_modes(run):
    x = run("do_x", F32).reshape(2, 64)
    mb = run("do_mb", np.uint8)
    mbits = run("do_mbits", np.uint8)
    k = F32(F32(1) / F32(0.7))
    keep = mb[:128].reshape(2, 64) != 0
    assert np.array_equal(run("do_byte", F32).reshape(2, 64), np.where(keep, x * k, 0).astype(F32))
    bits = np.unpackbits(mbits[:16].reshape(2, 8), axis=1, bitorder="little").astype(bool)  # LSB first
    assert np.array_equal(run("do_bit", F32).reshape(2, 64), np.where(bits, x * k, 0).astype(F32))
    keep_pad = mb.reshape(2, 96)[:, :64] != 0
    assert np.array_equal(run("do_bytepad", F32).reshape(2, 64), np.where(keep_pad, x * k, 0).astype(F32))
    xh = run("do_xh", F16).reshape(2, 64)
    bits_pad = np.unpackbits(mbits.reshape(2, 16), axis=1, bitorder="little")[:, :64].astype(bool)
    kh = F16(F32(1) / F32(0.3))  # Muls by 1 / keepProb rounded to half
    want = np.where(bits_pad, (xh.astype(F32) * F32(kh)).astype(F16), F16(0))
    assert np.array_equal(run("do_bitpad", F16).reshape(2, 64), want)


def test_select_with_bytes_mask_takes_src1_where_the_mask_is_nonzero(run):
    x = run("se_x", F32).reshape(3, 8)
    m = run("se_m", np.uint8).reshape(3, 32)[:, :8]
    assert np.array_equal(run("se_y", F32).reshape(3, 8), np.where(m != 0, F32(1.234), x))
    xh = run("se_xh", F16).reshape(2, 16)
    mh = run("se_mh", np.int16).reshape(2, 16)
    assert np.array_equal(run("se_yh", F16).reshape(2, 16), np.where(mh != 0, xh, F16(-2.0)))


# ---- pad and transpose ----

def test_pad_and_unpad(run):
    x = run("pad_x", F32).reshape(8, 7)
    assert np.array_equal(run("pad_y", F32).reshape(8, 8), np.pad(x, ((0, 0), (0, 1)), constant_values=321))
    t = run("pad_tiling", np.uint32)
    assert list(t[:5]) == [8, 7, 7, 7 - 8 & 0xFFFFFFFF, 0]  # srcHeight, srcWidth, srcOriWidth, width - 8, blocks
    xh = run("padh_x", F16).reshape(16, 13)
    assert np.array_equal(run("padh_y", F16).reshape(16, 16), np.pad(xh, ((0, 0), (1, 2)), constant_values=-4))
    x2 = run("pad2_x", F16).reshape(2, 16)
    want = x2.copy()
    want[:, 13:15] = 7
    assert np.array_equal(run("pad2_y", F16).reshape(2, 16), want)
    xu = run("unpad_x", F32).reshape(3, 16)
    assert np.array_equal(run("unpad_y", F32).reshape(3, 11), xu[:, 2:13])


def test_confusion_transpose_0213(run):
    x = run("tr_x", F16)
    # src NZ [B, N, H/N/16, S/16, 16, 16]: element (b, n, s, w) at ((b*N + n)*W1 + w//16)*S*16 + s*16 + w%16
    logical = x.reshape(1, 2, 2, 32, 16).transpose(0, 1, 3, 2, 4).reshape(1, 2, 32, 32)  # [B, N, S, H/N]
    nd = logical.transpose(0, 2, 1, 3)  # [B, S, N, H/N]
    assert np.array_equal(run("tr_nd", F16).reshape(1, 32, 2, 32), nd)
    nz = nd.reshape(1, 32, 2, 2, 16).transpose(0, 1, 3, 2, 4)  # [B, S, H/N/16, N, 16]
    assert np.array_equal(run("tr_nz", F16).reshape(1, 32, 2, 2, 16), nz)
    xf = run("trf_x", F32)
    lf = xf.reshape(2, 1, 1, 16, 16).transpose(0, 1, 3, 2, 4).reshape(2, 1, 16, 16)
    assert np.array_equal(run("trf_nd", F32).reshape(2, 16, 1, 16), lf.transpose(0, 2, 1, 3))


def test_transdata_round_trips_and_layouts(run):
    n, c, d, hw = 3, 5, 2, 9
    nc = run("td_nc", F16).reshape(n, c, d, 16)[..., :hw]  # the HW axis padded to 16 in UB
    fz = run("td_fz", F16).reshape(d, 1, hw, 1, 16, 16)
    want = np.zeros((d, 1, hw, 1, 16, 16), F16)
    want[:, 0, :, 0, :n, :c] = nc.transpose(2, 3, 0, 1)  # [D, HW, N, C]
    assert np.array_equal(fz, want)
    back = run("td_back_fz", F16).reshape(n, c, d, 16)
    assert np.array_equal(back[..., :hw], nc) and np.all(back[..., hw:] == 0)
    hd = run("td_5hd", F16).reshape(n, d, 1, hw, 16)
    want5 = np.zeros((n, d, 1, hw, 16), F16)
    want5[:, :, 0, :, :c] = nc.transpose(0, 2, 3, 1)  # [N, D, HW, C]
    assert np.array_equal(hd, want5)
    assert np.array_equal(run("td_back_5hd", F16).reshape(n, c, d, 16)[..., :hw], nc)
    # GetTransDataMaxMinTmpSize (transdata_tiling.cpp): c1 = n1 = 1, HW padded to 16
    assert list(run("td_sizes", np.uint32)) == [max(c * d * 16, d * hw * 16) * 2 + 16 * d * 16 * 16 * 2,
                                                 2 * 16 * 16 * d * 16 * 2, (d * 16 + d * 16 * 16) * 2,
                                                 d * 16 * 16 * 2 + 512]


def test_layout_coordinates_give_the_offsets_the_crd2idx_page_computes(run):
    # 128 * 512 + 64; the page's 1*20 + 2*5 + 3*1 = 33 and its hierarchical 129; 7 over (2, 4)
    # strides (1, 2) is (1, 3) -> 7; the constant layout's second extent
    assert list(run("coords", np.uint32)) == [128 * 512 + 64, 33, 129, 7, 8]


def test_host_tiling_sizes_follow_cannss_formulas(run):
    v = list(run("host_sizes", np.uint32))
    pairs = [tuple(v[i:i + 2]) for i in range(0, len(v), 2)]
    quant = [(max(n * 2, 512) + 31) // 32 * 32 for n in (32, 1024, 4096)]
    assert pairs[0:3] == [(q, 512) for q in quant]
    dq = [(4, 16), (128, 32), (1, 64)]
    assert pairs[3:6] == [((64 + m * k + k + 8) * 4, (64 + k + k + 8) * 4) for m, k in dq]
    assert pairs[6] == (128 * 2 * 4 + 64 * 8 * 4,) * 2  # per channel, not transposed
    assert pairs[7] == (8 * 128 * 4, 1024)  # per tensor
    assert pairs[8] == (80 * 128 * 4,) * 2  # transposed per channel
    assert pairs[9:12] == [(max(512, n * 8), 512) for n in (64, 1000, 4096)]
    assert pairs[12] == (1024, 1024)
    assert pairs[13] == (8192 * 2 + 512, 4096 * 2 + 512)
    assert pairs[14] == (1024 + 192 * 2, 1024 + 192 * 2)  # mask row longer, not reused: the compacted copy
    assert pairs[15:18] == [((hw_ - 1) // 16 * 1024 + 1024, 1024) for hw_ in (16 * 31, 56, 3300)]
    assert pairs[18:21] == [(64 * 16 * 2, 512), (32 * 16 * 2, 512), (16 * 16 * 2, 512)]
    assert pairs[21] == (0, 0)
