"""Basic APIs the emulator gained for the official samples and for kernels others wrote for 910B:
the enhanced Transpose (TransposeParamsExt: [N,C,H,W] <-> [N,H,W,C] and the 16 x 16 form),
TransDataTo5HD's uint64_t address-list form, Cast between half and int4b_t, element access with
LocalTensor/GlobalTensor::operator() and SetValue<S>, ShapeInfo (SetShapeInfo/GetShapeInfo,
GetShapeSize, DumpTensor laid out by it), DumpAccChkPoint, and tiling keys (TILING_KEY_IS and
TILING_KEY_LIST, from ICPU_SET_TILING_KEY and, end to end in task mode, from Launch(tiling_key=...)).

One C++ driver (DRIVER below) runs every API outside a launch and dumps its outputs; the
expectations are recomputed with numpy from each API's asc-devkit doc page. Provoked faults are
checked for code and line."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile
from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
#include "tikicpulib.h"  // ICPU_SET_TILING_KEY, the CPU-debug way to set the key

// PopStackBuffer: the UB above the pipe's buffers (from a 32-byte boundary), false once none is left.
static void pop_stack() {
    int64_t seen[5];
    {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 1000);
        LocalTensor<float> rest;
        seen[0] = PopStackBuffer<float, TPosition::VECCALC>(rest);
        seen[1] = rest.GetSize();
        seen[2] = reinterpret_cast<uint8_t*>(rest.GetPhyAddr()) - sage::sim::blk().ub;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> all;
    expect("ub-overflow", __LINE__ + 1);  // a warning: the whole UB reaches into the reserved top
    pipe.InitBuffer(all, uint32_t(sage::sim::rt().ub_bytes));
    LocalTensor<half> none;
    seen[3] = PopStackBuffer<half, TPosition::VECIN>(none);
    seen[4] = none.GetSize();
    write_raw("pop_stack", seen, sizeof seen);
}
// TILING_KEY_IS and TILING_KEY_LIST read the key a CPU-debug program sets (task mode: the manifest).
static void tiling_keys() {
    int32_t seen[4];
    ICPU_SET_TILING_KEY(6);
    seen[0] = TILING_KEY_IS(6);
    seen[1] = TILING_KEY_LIST(1, 2, 3, 4, 5, 6, 7, 8);
    seen[2] = TILING_KEY_LIST(5, 7);
    ICPU_SET_TILING_KEY(0);
    seen[3] = TILING_KEY_IS(6);
    write_raw("tiling_keys", seen, sizeof seen);
}
// The scratch the doc page asks for on A2: (C + 2) or (2C + 1) tiles of 16 x (32 / sizeof(T)).
template <typename T>
static uint32_t tmp_bytes(bool to_nhwc, uint32_t c) {
    uint32_t tile = (sizeof(T) == 1 ? 32 : 16) * 32;
    return (to_nhwc ? c + 2 : 2 * c + 1) * tile;
}

template <typename T>
static void transpose4d(LocalMemAllocator<Hardware::UB>& a, const char* name, bool to_nhwc, uint16_t n, uint16_t c,
                        uint16_t h, uint16_t w) {
    const uint32_t total = uint32_t(n) * c * h * w;
    auto src = a.Alloc<T>(total);
    fill(src, total, [](uint32_t i) { return int(i % 113) - 50; });
    auto dst = a.Alloc<T>(total);
    fill(dst, total, [](uint32_t) { return 0; });
    auto tmp = a.Alloc<uint8_t>(tmp_bytes<T>(to_nhwc, c));
    TransposeParamsExt p(n, c, h, w, to_nhwc ? TransposeType::TRANSPOSE_NCHW2NHWC : TransposeType::TRANSPOSE_NHWC2NCHW);
    Transpose(dst, src, tmp, p);
    dump(name, dst, total);
}

static void transposes() {
    LocalMemAllocator<Hardware::UB> a;
    transpose4d<half>(a, "nchw2nhwc_half", true, 3, 3, 2, 8);     // the sample's scenario 2
    transpose4d<half>(a, "nchw2nhwc_half_big", true, 2, 19, 4, 12);
    transpose4d<float>(a, "nhwc2nchw_float", false, 3, 5, 2, 4);
    transpose4d<int8_t>(a, "nchw2nhwc_int8", true, 2, 3, 4, 8);
    transpose4d<uint32_t>(a, "nchw2nhwc_uint32", true, 1, 17, 1, 8);
    transpose4d<int16_t>(a, "nhwc2nchw_int16", false, 2, 7, 1, 16);
    // TRANSPOSE_ND2ND_B16: one 16 x 16 matrix (uint16_t on A2; half moves the same bits, with a warning)
    auto m = a.Alloc<uint16_t, 256>();
    fill(m, 256, [](uint32_t i) { return i * 7 + 3; });
    auto mt = a.Alloc<uint16_t, 256>();
    auto none = a.Alloc<uint8_t, 32>();
    Transpose(mt, m, none, TransposeParamsExt(0, 0, 16, 16, TransposeType::TRANSPOSE_ND2ND_B16));
    dump("nd2nd_b16", mt, 256);
    auto mh = m.ReinterpretCast<half>();
    auto mth = a.Alloc<half, 256>();
    expect("dtype-unsupported", __LINE__ + 1);
    Transpose(mth, mh, none, TransposeParamsExt(0, 0, 16, 16, TransposeType::TRANSPOSE_ND2ND_B16));
    dump("nd2nd_b16_half", mth, 256);
    // TRANSPOSE_TYPE_NONE and zero sizes write nothing
    auto keep = a.Alloc<half, 64>();
    fill(keep, 64, [](uint32_t) { return 5.0f; });
    auto ksrc = a.Alloc<half, 64>();
    fill(ksrc, 64, [](uint32_t i) { return float(i); });
    Transpose(keep, ksrc, none, TransposeParamsExt(1, 4, 1, 16, TransposeType::TRANSPOSE_TYPE_NONE));
    Transpose(keep, ksrc, none, TransposeParamsExt(0, 4, 1, 16, TransposeType::TRANSPOSE_NCHW2NHWC));
    dump("transpose_none", keep, 64);
    // misuse: a plane that is not whole 32-byte blocks, a scratch too small, dst on src
    auto big = a.Alloc<uint8_t>(tmp_bytes<half>(false, 4));
    expect("unaligned-copy", __LINE__ + 1);
    Transpose(keep, ksrc, big, TransposeParamsExt(1, 4, 2, 8 - 1, TransposeType::TRANSPOSE_NCHW2NHWC));
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        Transpose(keep, ksrc, none, TransposeParamsExt(1, 4, 1, 16, TransposeType::TRANSPOSE_NHWC2NCHW));
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("crash", __LINE__ + 1);
        Transpose(ksrc, ksrc, big, TransposeParamsExt(1, 4, 1, 16, TransposeType::TRANSPOSE_NHWC2NCHW));
    } catch (const sage::sim::KernelAbort&) {
    }
}

// TransDataTo5HD's two list forms on the sample's NCHW -> NC1HWC0 layout (C = 32, H * W = 16 x 16).
static void trans5hd() {
    LocalMemAllocator<Hardware::UB> a;
    constexpr uint32_t C1 = 2, HW = 256, N = 1;
    auto src = a.Alloc<half, N * 32 * HW>();
    fill(src, N * 32 * HW, [](uint32_t i) { return float(i % 1000) * 0.5f; });
    auto by_addr = a.Alloc<half, N * 32 * HW>();
    auto by_tensor = a.Alloc<half, N * 32 * HW>();
    TransDataTo5HDParams p(false, false, 16, 16, 1);
    for (uint32_t j = 0; j < C1; ++j) {
        uint64_t dl[16], sl[16];
        LocalTensor<half> dt[16], st[16];
        for (int i = 0; i < 16; ++i) {
            dl[i] = uint64_t(by_addr[j * 16 * HW + 16 * i].GetPhyAddr());
            sl[i] = uint64_t(src[j * 16 * HW + HW * i].GetPhyAddr());
            dt[i] = by_tensor[j * 16 * HW + 16 * i];
            st[i] = src[j * 16 * HW + HW * i];
        }
        TransDataTo5HD<half>(dl, sl, p);
        TransDataTo5HD<half>(dt, st, p);
    }
    dump("nc1hwc0_addr", by_addr, 32 * HW);
    dump("nc1hwc0_tensor", by_tensor, 32 * HW);
    uint64_t bad[16], ok[16];
    for (int i = 0; i < 16; ++i) {
        bad[i] = uint64_t(src[16 * i + 1].GetPhyAddr());  // 2 bytes past a block boundary
        ok[i] = uint64_t(by_addr[16 * i].GetPhyAddr());
    }
    expect("unaligned-copy", __LINE__ + 1);
    TransDataTo5HD<half>(ok, bad, TransDataTo5HDParams(false, false, 1, 0, 0));
}

// Cast half <-> int4b_t: the mask/repeat form of the doc page's example, the count form on a
// tail, every RoundMode, saturation and NaN.
static void int4_casts() {
    LocalMemAllocator<Hardware::UB> a;
    const RoundMode modes[] = {RoundMode::CAST_NONE, RoundMode::CAST_RINT, RoundMode::CAST_FLOOR,
                               RoundMode::CAST_CEIL, RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC};
    auto x = a.Alloc<half, 512>();
    fill(x, 512, [](uint32_t i) { return -10.0f + float(i) * 0.0390625f; });  // -10 .. 10 in 1/25.6 steps
    x.SetValue(7, half(2.5f));
    x.SetValue(8, half(-2.5f));
    x.data()[9] = half::from_bits(0x7e00);  // NaN
    for (int mi = 0; mi < 6; ++mi) {
        auto y8 = a.Alloc<int8_t, 256>();
        fill(y8, 256, [](uint32_t) { return 0x55; });
        auto y4 = y8.ReinterpretCast<int4b_t>();
        Cast<int4b_t, half>(y4, x, modes[mi], 128, 4, {1, 1, 2, 8});
        dump(std::string("to_int4_") + std::to_string(mi), y8, 256);
    }
    auto t8 = a.Alloc<int8_t, 96>();
    fill(t8, 96, [](uint32_t) { return 0x55; });
    auto t4 = t8.ReinterpretCast<int4b_t>();
    Cast(t4, x, RoundMode::CAST_FLOOR, 130);  // a tail: 130 elements, 65 bytes
    dump("to_int4_count", t8, 96);
    auto back = a.Alloc<half, 192>();
    fill(back, 192, [](uint32_t) { return 99.0f; });
    Cast(back, t4, RoundMode::CAST_NONE, 130);
    dump("from_int4_count", back, 192);
    auto back2 = a.Alloc<half, 256>();
    fill(back2, 256, [](uint32_t) { return 99.0f; });
    auto y8 = a.Alloc<int8_t, 128>();
    fill(y8, 128, [](uint32_t i) { return int(i * 37 + 11); });
    Cast<half, int4b_t>(back2, y8.ReinterpretCast<int4b_t>(), RoundMode::CAST_NONE, 64, 2, {1, 1, 8, 2});
    dump("from_int4_masked", back2, 256);
    try {
        expect("crash", __LINE__ + 1);
        Cast(t4, x, RoundMode::CAST_RINT, 31);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// operator() on both tensors, and ShapeInfo.
static void access_and_shapes() {
    LocalMemAllocator<Hardware::UB> a;
    auto t = a.Alloc<float, 16>();
    for (uint32_t i = 0; i < 16; ++i) t(i) = float(i) * 1.5f;
    t(3) += 100.0f;
    float got[3] = {t(3), t.GetValue(4), 0};
    t.SetValue<double>(5, 7.25);  // CANN's SetValue<S>: S converted to the element type
    got[2] = t(5);
    write_raw("local_access", got, sizeof got);
    dump("local_all", t, 16);
    std::vector<int32_t> host(32, 4);
    sage::sim::rt().gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(host.data()), 128, 0, "g", nullptr});
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer(host.data(), 32);
    g(2) = 9;
    int32_t gv[2] = {g(2), g.GetValue(3)};
    write_raw("global_access", gv, sizeof gv);
    uint32_t dims[3] = {2, 3, 7}, orig[2] = {6, 7};
    ShapeInfo s(3, dims, 2, orig, DataFormat::NHWC);
    t.SetShapeInfo(s);
    g.SetShapeInfo(ShapeInfo(3, dims));
    ShapeInfo ls = t.GetShapeInfo(), gs = g.GetShapeInfo();
    uint32_t shape_out[] = {ls.shapeDim, ls.originalShapeDim, ls.shape[0], ls.shape[1], ls.shape[2],
                            ls.originalShape[0], ls.originalShape[1], uint32_t(ls.dataFormat), gs.shapeDim,
                            gs.originalShapeDim, gs.originalShape[2], uint32_t(gs.dataFormat),
                            uint32_t(GetShapeSize(gs))};
    write_raw("shapes", shape_out, sizeof shape_out);
    uint32_t two_by_three[2] = {2, 3}, three_by_two[2] = {3, 2};
    DumpTensor(t, 7, 6, ShapeInfo(2, two_by_three));
    DumpTensor(t, 8, 4, ShapeInfo(2, three_by_two));  // fewer elements than the shape: "-"
    DumpTensor(g, 9, 3, ShapeInfo(1, two_by_three));  // more elements than the shape: cut
    auto wide = a.Alloc<float, 64>();
    fill(wide, 64, [](uint32_t i) { return float(i); });
    DumpAccChkPoint(wide, 41, 8, 3);  // from element 8 (32 bytes in)
    DumpAccChkPoint(g, 42, 2, 2);
    expect("unaligned-copy", __LINE__ + 1);
    DumpAccChkPoint(wide, 43, 3, 1);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        t(16) = 1.0f;
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        uint32_t nine[9] = {};
        expect("crash", __LINE__ + 1);
        ShapeInfo too_many(9, nine);
    } catch (const sage::sim::KernelAbort&) {
    }
}

""" + main_calling("pop_stack();", "transposes();", "trans5hd();", "int4_casts();", "access_and_shapes();",
                            "tiling_keys();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("apis_basic2"), DRIVER)


def filled(total: int, dtype) -> np.ndarray:
    """The driver's source pattern: i % 113 - 50."""
    return (np.arange(total) % 113 - 50).astype(dtype)


@pytest.mark.parametrize("name,to_nhwc,shape,dtype", [
    ("nchw2nhwc_half", True, (3, 3, 2, 8), np.float16),
    ("nchw2nhwc_half_big", True, (2, 19, 4, 12), np.float16),
    ("nhwc2nchw_float", False, (3, 5, 2, 4), np.float32),
    ("nchw2nhwc_int8", True, (2, 3, 4, 8), np.int8),
    ("nchw2nhwc_uint32", True, (1, 17, 1, 8), np.uint32),
    ("nhwc2nchw_int16", False, (2, 7, 1, 16), np.int16),
])
def test_enhanced_transpose_moves_nchw_and_nhwc(run, name, to_nhwc, shape, dtype):
    n, c, h, w = shape
    src = filled(n * c * h * w, dtype)
    if to_nhwc:  # the doc page: np.transpose(src_nchw, axes=(0, 2, 3, 1))
        want = np.transpose(src.reshape(n, c, h, w), (0, 2, 3, 1))
    else:  # np.transpose(src_nhwc, axes=(0, 3, 1, 2))
        want = np.transpose(src.reshape(n, h, w, c), (0, 3, 1, 2))
    assert np.array_equal(run(name, dtype), want.ravel())


def test_enhanced_transpose_16x16_form(run):
    m = (np.arange(256) * 7 + 3).astype(np.uint16).reshape(16, 16)
    assert np.array_equal(run("nd2nd_b16", np.uint16), m.T.ravel())
    assert np.array_equal(run("nd2nd_b16_half", np.uint16), m.T.ravel())


def test_enhanced_transpose_none_and_zero_sizes_write_nothing(run):
    assert np.array_equal(run("transpose_none", np.float16), np.full(64, 5.0, np.float16))


def test_trans5hd_address_lists_match_the_tensor_lists_and_the_sample(run):
    src = (np.arange(32 * 256) % 1000 * 0.5).astype(np.float16)
    want = src.reshape(1, 2, 16, 16, 16).transpose(0, 1, 3, 4, 2).ravel()  # the sample's golden
    assert np.array_equal(run("nc1hwc0_addr", np.float16), want)
    assert np.array_equal(run("nc1hwc0_tensor", np.float16), want)


def int4_source() -> np.ndarray:
    x = (-10.0 + np.arange(512) * 0.0390625).astype(np.float16)
    x[7], x[8], x[9] = 2.5, -2.5, np.nan
    return x


ROUND = [np.rint, np.rint, np.floor, np.ceil, lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5), np.trunc]


def int4_pack(values: np.ndarray) -> np.ndarray:
    """Element 2i in the low nibble, as the sample's golden packs them."""
    nib = values.astype(np.int8) & 0xF
    return (nib[::2] | (nib[1::2] << 4)).astype(np.int8)


def int4_of(x: np.ndarray, mode) -> np.ndarray:
    v = np.nan_to_num(mode(x.astype(np.float64)), nan=0.0)
    return np.clip(v, -8, 7)


@pytest.mark.parametrize("mi", range(6))
def test_cast_half_to_int4_every_round_mode(run, mi):
    want = int4_pack(int4_of(int4_source(), ROUND[mi]))
    got = run(f"to_int4_{mi}", np.int8)
    assert np.array_equal(got, want), np.nonzero(got != want)


def test_cast_int4_count_form_on_a_tail_and_back(run):
    x = int4_source()[:130]
    vals = int4_of(x, np.floor)
    got = run("to_int4_count", np.int8)
    assert np.array_equal(got[:65], int4_pack(vals))
    assert np.all(got[65:] == 0x55)  # past the count: untouched
    back = run("from_int4_count", np.float16)
    assert np.array_equal(back[:130], vals.astype(np.float16))
    assert np.all(back[130:] == 99.0)


def test_cast_int4_to_half_mask_repeat_strides(run):
    raw = ((np.arange(128) * 37 + 11) & 0xFF).astype(np.uint8)
    lo = (raw & 0xF).astype(np.int8)
    hi = (raw >> 4).astype(np.int8)
    vals = np.empty(256, np.int8)
    vals[0::2], vals[1::2] = lo, hi
    vals = np.where(vals >= 8, vals - 16, vals)
    # 2 repeats of 64: src repeat stride 2 blocks of 64 int4 (128 apart), dst 8 blocks of 16 halves
    want = np.full(256, 99.0, np.float16)
    want[0:64] = vals[0:64]
    want[128:192] = vals[128:192]
    assert np.array_equal(run("from_int4_masked", np.float16), want)


def test_element_access_operator(run):
    assert list(run("local_access", np.float32)) == [104.5, 6.0, 7.25]
    want = np.arange(16, dtype=np.float32) * 1.5
    want[3] += 100
    want[5] = 7.25
    assert np.array_equal(run("local_all", np.float32), want)
    assert list(run("global_access", np.int32)) == [9, 4]


def test_pop_stack_buffer_is_the_ub_above_the_pipes_buffers(run):
    ub = chip_profile("910B2").ub_bytes
    assert list(run("pop_stack", np.int64)) == [1, (ub - 1024) // 4, 1024, 0, 0]


def test_dump_tensor_by_shape_info_and_from_an_offset(run):
    out = run.stdout
    assert "desc=7" in out and "[[0,1.5,3],\n[104.5,6,7.25]]\n" in out
    assert "shape is [3, 2], dumpSize is 4, data is not enough.\n[[0,1.5],\n[3,104.5],\n[-,-]]\n" in out
    assert "shape is [2], dumpSize is 3, dumpSize is greater than shapeSize.\n[4,4]\n" in out
    assert "desc=41" in out and "[8, 9, 10]" in out  # DumpAccChkPoint: from the offset, labelled
    assert "desc=42" in out and "[9, 4]" in out


def test_tiling_key_macros_read_the_cpu_debug_key(run):
    assert list(run("tiling_keys", np.int32)) == [1, 1, 0, 0]


def test_shape_info_round_trips(run):
    # DataFormat::NHWC is 4 and ND 0 (asc-devkit kernel_struct_data_copy.h)
    assert list(run("shapes", np.uint32)) == [3, 2, 2, 3, 7, 6, 7, 4, 3, 3, 7, 0, 42]


def test_faults_at_the_call(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found = {(row[1], int(row[2])): row[3] for row in run.rows("FAULT")}
    assert expected and set(found) == expected, (expected, found)
    messages = " | ".join(found.values())
    assert "sharedTmpBuffer holds 32 bytes" in messages and "needs 4608" in messages
    assert "does not allow src and dst to share memory" in messages
    assert "whole 32-byte blocks" in messages
    assert "odd count (31)" in messages
    assert "K_MAX_SHAPE_DIM = 8" in messages


# ---------------------------------------------------------------- tiling keys in task mode

KEYED_KERNEL = """\
#include "kernel_operator.h"

struct KeyTiling {
    uint32_t length;
};

// One branch per tiling key, as a framework kernel the op build compiles once per key.
extern "C" __global__ __aicore__ void keyed(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(KeyTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, t.length);
    yg.SetGlobalBuffer((__gm__ float*)y, t.length);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.length * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    if (AscendC::GetBlockIdx() != 0) return;
    AscendC::DataCopy(v, xg, t.length);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    if (TILING_KEY_IS(1)) {
        AscendC::Muls(v, v, 2.0f, t.length);
    } else if (TILING_KEY_IS(2)) {
        AscendC::Muls(v, v, 3.0f, t.length);
    } else if (TILING_KEY_LIST(5, 6, 7)) {
        AscendC::Adds(v, v, 1.0f, t.length);
    }
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopy(yg, v, t.length);
}
"""

KEYED_REFERENCE = """\
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        n = x.numel()
        return x * 2 if n == 1024 else x * 3 if n == 512 else x + 1

def get_input_groups():
    return [[torch.randn(1024)], [torch.randn(512)], [torch.randn(256)]]
"""

KEYED_HOST = """\
import torch
from sage_npu.npu_eval import Launch, Tiling

def launch(x):
    y = torch.empty_like(x)
    n = x.numel()
    key = 1 if n == 1024 else 2 if n == 512 else 6
    return Launch(kernel="keyed", block_dim=2, tiling_key=KEY,
                  args=[x, y, torch.empty(32, dtype=torch.uint8), Tiling(length=n)], outputs=[y])
"""


def keyed_task(tmp_path, key_expr: str):
    d = tmp_path / "keyed"
    d.mkdir()
    (d / "keyed.cpp").write_text(KEYED_KERNEL)
    (d / "reference.py").write_text(KEYED_REFERENCE)
    (d / "host.py").write_text(KEYED_HOST.replace("KEY", key_expr, 1))
    return d


def test_tiling_key_from_host_picks_the_branch_per_trial(evaluator, tmp_path):
    r = evaluator.evaluate(keyed_task(tmp_path, "key")).report
    assert r.status == "correct", r.diagnostics
    assert r.correctness.trials == 3 and r.correctness.passed == 3


def test_a_wrong_tiling_key_takes_the_wrong_branch(evaluator, tmp_path):
    r = evaluator.evaluate(keyed_task(tmp_path, "1")).report  # key 1 for every shape
    assert r.status == "mismatch", r.diagnostics


def test_a_tiling_key_that_is_not_an_int_is_a_host_error_at_its_line(evaluator, tmp_path):
    d = keyed_task(tmp_path, "-3")
    r = evaluator.evaluate(d).report
    found = [x for x in r.diagnostics if x.code == "host-error"]
    assert found and "tiling_key=-3" in found[0].message, r.diagnostics
    assert found[0].line == next(i for i, ln in enumerate((d / "host.py").read_text().splitlines(), 1)
                                 if "Launch(" in ln)


def test_cast_from_int4_is_refused_on_310p_by_name(tmp_path):
    """The Cast doc lists half -> int4b_t for 310P but not int4b_t -> half: a build for 310P says so."""
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   "void f(const LocalTensor<half>& h, const LocalTensor<int4b_t>& q) {\n"
                   "    Cast(q, h, RoundMode::CAST_NONE, 64);\n"
                   "    Cast(h, q, RoundMode::CAST_NONE, 64);\n}\n")
    r = subprocess.run(["g++", *compile_flags(chip_profile("310P3"), "-O0", {}), "-fsyntax-only", str(src)],
                       capture_output=True, text=True, timeout=300)
    errors = [ln for ln in r.stderr.splitlines() if "error:" in ln]
    assert r.returncode != 0 and errors, r.stderr
    assert all("no int4b_t -> half conversion on 310P" in ln for ln in errors), errors
