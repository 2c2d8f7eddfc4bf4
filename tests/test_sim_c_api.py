"""The SIMD C API (`c_api/asc_simd.h`, the `asc_*` functions) and its `__ubuf__` storage model.

One C++ driver (DRIVER below, its `__ubuf__` arrays placed in the emulated UB by the same rewrite
the build applies, npu_eval/ubuf.py) runs the vector compute, data movement and mask-register
families outside a launch on full and tail shapes and dumps the results; the expectations are
recomputed with numpy from the instructions' documented semantics (asc-devkit's C API pages).
Provoked faults are checked for code and line. Whole programs in the samples' style check what
only a launch shows: the missing-sync check on the trace, flag deadlocks, and a clean run."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from sage_npu.npu_eval.analysis import analyze
from sage_npu.npu_eval.host_split import kernel_part
from sage_npu.npu_eval.program import ProgramReport, rewrite, run_program
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.ubuf import rewrite_ubuf
from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

# ---- the rewrite (no compiler) ----


def test_ubuf_arrays_in_functions_are_placed_in_the_ub_on_their_own_lines():
    src = (b"__ubuf__ float global_buf[64];\n"
           b"namespace tiles { struct Tile { __ubuf__ float member[8]; }; }\n"
           b"__global__ __aicore__ void k(__gm__ float* x) {\n"
           b"    __ubuf__ float xLocal[TILE_LENGTH];\n"
           b"    __ubuf__ unsigned int grid [2] [N * 2];  // two rows\n"
           b"    static __ubuf__ float kept[8];\n"
           b"    __ubuf__ float* p = xLocal;\n"
           b"    extern __ubuf__ float smem[];\n"
           b"}\n")
    out = rewrite_ubuf(src).decode().splitlines()
    assert len(out) == src.count(b"\n")
    # Namespace scope and class members stay: no block runs their initialisers.
    assert out[:2] == [s.decode() for s in src.splitlines()[:2]]
    assert out[3] == '    auto& xLocal = ::sage::sim::ub_array<float [TILE_LENGTH]>("xLocal");'
    assert out[4] == '    auto& grid = ::sage::sim::ub_array<unsigned int [2][N * 2]>("grid");  // two rows'
    assert out[5:8] == [s.decode() for s in src.splitlines()[5:8]]  # static, pointer, extern: unchanged


def test_program_rewrite_places_arrays_and_launches_together():
    src = (b"__global__ void k(__gm__ float* x) { __ubuf__ float a[64]; }\n"
           b"int main() { k<<<8, nullptr>>>(x); }\n")
    rw = rewrite(src)
    lines = rw.text.splitlines()
    assert 'auto& a = ::sage::sim::ub_array<float [64]>("a");' in lines[0]
    assert "::sage::sim::kernel_launch(" in lines[1]
    assert sorted(rw.edits) == [1, 2]


def test_task_mode_kernel_with_ubuf_arrays_gets_its_placed_copy(tmp_path):
    kernel = tmp_path / "k.cpp"
    kernel.write_text("__global__ __aicore__ void k(GM_ADDR x) {\n    __ubuf__ half h[128];\n}\n")
    part = kernel_part(kernel, tmp_path / "cache")
    assert part != kernel
    text = part.read_text()
    assert text.startswith(f'#line 1 "{kernel.resolve()}"\n')
    assert 'auto& h = ::sage::sim::ub_array<half [128]>("h");' in text.splitlines()[2]
    plain = tmp_path / "plain.cpp"
    plain.write_text("__global__ __aicore__ void k(GM_ADDR x) {}\n")
    assert kernel_part(plain, tmp_path / "cache") == plain


def test_the_c_api_on_a_310p_is_an_error_at_each_call():
    src = ('#include "c_api/asc_simd.h"\n'
           "__global__ __aicore__ void k(__gm__ float* x) {\n"
           "    asc_init();\n"
           "    __ubuf__ float a[64];\n"
           "    asc_copy_gm2ub(a, x, 256);\n"
           "    asc_add(a, a, a, 64);\n"
           "}\n")
    found = [f for f in analyze(src, "310P3") if f.code == "api-unsupported"]
    assert [f.line for f in found] == [3, 5, 6] and "asc_add is not available on 310P3" in found[2].message
    assert not [f for f in analyze(src, "910B2") if f.code == "api-unsupported"]


# ---- the driver: numerics and faults outside a launch ----

DRIVER = PRELUDE + r"""
#include <cmath>

static void dump_raw(const std::string& name, const void* p, size_t bytes) { write_raw(name, p, bytes); }
// A host vector as a GM buffer the kernel was given.
static void gm(void* p, size_t bytes, const char* name) {
    sage::sim::rt().gm.push_back(sage::sim::GmBuffer{static_cast<uint8_t*>(p), bytes, 0, name, nullptr});
}
static std::vector<float> ramp(uint32_t n, float a, float b) {
    std::vector<float> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = a * float(i) + b;
    return v;
}

// Count forms on a tail length (300: four full repeats and a partial one), loaded from GM.
static void count_forms() {
    static std::vector<float> x = ramp(320, 0.25f, -30.0f), y = ramp(320, -0.5f, 7.0f);
    gm(x.data(), x.size() * 4, "x");
    gm(y.data(), y.size() * 4, "y");
    __ubuf__ float a[320];
    __ubuf__ float b[320];
    __ubuf__ float c[320];
    asc_init();
    asc_copy_gm2ub(a, x.data(), 320 * sizeof(float));
    asc_copy_gm2ub(b, y.data(), 1, 40, 0, 0);  // 40 blocks of 32 bytes
    asc_duplicate(c, -1.0f, 320u);
    const char* names[] = {"add", "sub", "mul", "div", "max", "min", "add_relu", "sub_relu"};
    for (int op = 0; op < 8; ++op) {
        asc_duplicate(c, -1.0f, 320u);
        switch (op) {
            case 0: asc_add(c, a, b, 300u); break;
            case 1: asc_sub(c, a, b, 300u); break;
            case 2: asc_mul(c, a, b, 300u); break;
            case 3: asc_div(c, a, b, 300u); break;
            case 4: asc_max(c, a, b, 300u); break;
            case 5: asc_min(c, a, b, 300u); break;
            case 6: asc_add_relu(c, a, b, 300u); break;
            default: asc_sub_relu_sync(c, a, b, 300u); break;
        }
        dump_raw(std::string("bin_") + names[op], c, sizeof c);
    }
    const char* unames[] = {"exp", "log", "abs", "sqrt", "rsqrt", "rcp", "relu"};
    for (int op = 0; op < 7; ++op) {
        asc_duplicate(c, -1.0f, 320u);
        switch (op) {
            case 0: asc_exp(c, b, 300u); break;
            case 1: asc_abs(c, a, 300u); asc_log(c, c, 300u); break;
            case 2: asc_abs(c, a, 300u); break;
            case 3: asc_abs(c, a, 300u); asc_sqrt(c, c, 300u); break;
            case 4: asc_abs(c, a, 300u); asc_rsqrt(c, c, 300u); break;
            case 5: asc_rcp(c, b, 300u); break;
            default: asc_relu_sync(c, a, 300u); break;
        }
        dump_raw(std::string("un_") + unames[op], c, sizeof c);
    }
    const char* snames[] = {"add_scalar", "sub_scalar", "mul_scalar", "max_scalar", "min_scalar", "leakyrelu"};
    for (int op = 0; op < 6; ++op) {
        asc_duplicate(c, -1.0f, 320u);
        switch (op) {
            case 0: asc_add_scalar(c, a, 1.5f, 300u); break;
            case 1: asc_sub_scalar(c, a, 2, 300u); break;  // an int converts to the operands' float
            case 2: asc_mul_scalar(c, a, -3.0f, 300u); break;
            case 3: asc_max_scalar(c, a, 0.0f, 300u); break;
            case 4: asc_min_scalar(c, a, -5.0f, 300u); break;
            default: asc_leakyrelu_sync(c, a, 0.125f, 300u); break;
        }
        dump_raw(std::string("sc_") + snames[op], c, sizeof c);
    }
    asc_copy_ub2gm(y.data(), c, 1, 40, 0, 0);
    dump_raw("gm_y", y.data(), y.size() * 4);
}

// Repeat forms: the mask register, strides, the first C API's config words, and what a count form
// leaves in the mask register (Normal mode reads its count as bits).
static void repeat_forms() {
    __ubuf__ half h0[512];
    __ubuf__ half h1[512];
    __ubuf__ half hd[512];
    asc_duplicate(h0, half(1.5f), 512u);
    for (int i = 0; i < 512; ++i) h1[i] = half(float(i % 17) - 8.0f);  // scalar stores: no uninitialized-read
    asc_duplicate(hd, half(0.0f), 512u);
    asc_set_vector_mask(0xFF, 0xF0F0F0F0F0F0F0F0ull);  // elements 4..7, 12..15, ... and 64..71
    asc_add(hd, h0, h1, 2, 1, 1, 1, 16, 8, 8);  // two repeats, dst repeats 16 blocks apart
    dump_raw("rep_add", hd, sizeof hd);
    asc_binary_config cfg;  // repeat 1, strides 1 and 8
    cfg.repeat = 2;
    asc_duplicate(hd, half(0.0f), 512u);
    asc_init();  // a count form left its count in the mask register: full mask again
    asc_mul(hd, h0, h1, cfg);
    dump_raw("cfg_mul", hd, sizeof hd);
    asc_duplicate(hd, half(0.0f), 512u);
    asc_exp(hd, h0, 200u);  // leaves the mask register at (0, 200) in Normal mode
    asc_sub(hd + 256, h1, h0, 1, 1, 1, 1, 8, 8, 8);
    dump_raw("after_count", hd, sizeof hd);
    asc_duplicate(hd, half(0.0f), 512u);
    asc_init();
    asc_duplicate(hd, half(2.0f), 2, 2, 16);  // every other block of two repeats
    dump_raw("dup_rep", hd, sizeof hd);
    __ubuf__ int16_t i0[128];
    __ubuf__ int16_t i1[128];
    asc_duplicate(i0, int16_t(0x0F0F), 128u);
    asc_duplicate(i1, int16_t(0x00FF), 128u);
    __ubuf__ uint32_t b8[16];
    __ubuf__ uint32_t spread[128];
    for (uint32_t i = 0; i < 16; ++i) b8[i] = 100 + i;
    asc_brcb_sync(spread, b8, 1, 8, 2);  // 2 repeats: 8 values each over 8 blocks of 8
    dump_raw("brcb", spread, sizeof spread);
    asc_and(i1, i0, i1, 128u);
    asc_not(i0, i1, 100u);
    asc_or(i0, i0, i1, 128u);
    dump_raw("bits", i0, sizeof i0);
}

// Data movement: bursts with gaps both ways, UB -> UB, and the byte-exact _align forms with padding.
static void data_movement() {
    static std::vector<float> src = ramp(256, 1.0f, 0.0f), dst(256, -7.0f);
    gm(src.data(), src.size() * 4, "src");
    gm(dst.data(), dst.size() * 4, "dst");
    __ubuf__ float u[256];
    __ubuf__ float v[256];
    asc_duplicate(u, 0.0f, 256u);
    asc_copy_gm2ub(u, src.data(), 3, 2, 1, 2);  // 3 bursts of 16 floats, GM gap 8 floats, UB gap 16
    asc_copy_ub2ub_sync(v, u, 256 * sizeof(float));
    asc_copy_ub2gm(dst.data(), v, 2, 1, 3, 1);  // 2 bursts of 8 floats from UB every 32, GM every 16
    dump_raw("gm_dst", dst.data(), dst.size() * 4);
    __ubuf__ half p[64];
    static std::vector<half> hs(40), hd(40, half(0.0f));
    for (int i = 0; i < 40; ++i) hs[i] = half(float(i));
    gm(hs.data(), hs.size() * 2, "hs");
    gm(hd.data(), hd.size() * 2, "hd");
    asc_set_copy_pad_val(half(-1.0f));
    asc_copy_gm2ub_align(p, hs.data(), 2, 10 * 2, 2, 1, 4 * 2, 0);  // 2 rows of 10, pads 2 left 1 right
    dump_raw("align_rows", p, 64 * 2);
    asc_copy_ub2gm_align_sync(hd.data(), p, 13 * 2);
    dump_raw("align_out", hd.data(), 40 * 2);
}

// Faults at the caller's line.
static void faults() {
    static std::vector<float> x(64, 1.0f);
    __ubuf__ float small[64];
    __ubuf__ float other[64];
    asc_duplicate(small, 0.0f, 64u);
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        asc_add(small, small, small, 65u);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);
        asc_add(small, small, x.data(), 8u);  // a host pointer, not a UB address
    } catch (const sage::sim::KernelAbort&) {
    }
    expect("uninitialized-read", __LINE__ + 1);
    asc_exp(small, other, 64u);
    gm(x.data(), x.size() * 4, "x_fault");
    expect("unaligned-copy", __LINE__ + 1);
    asc_copy_gm2ub(small, x.data(), 40);
    try {
        expect("ub-overflow", __LINE__ + 1);
        __ubuf__ float huge[64 * 1024];
        huge[0] = 1.0f;
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Conversions on a tail (200 of 256), every rounding of float -> int32, saturation to int16, and
// half round trips; reductions in the count and repeat forms; the scalar bit operations.
static void conversions() {
    __ubuf__ float f[256];
    for (int i = 0; i < 256; ++i) f[i] = float(i - 128) * 0.75f + ((i & 1) ? 0.5f : 0.0f);
    __ubuf__ int32_t r[256];
    const char* names[] = {"rd", "ru", "rn", "rna", "rz"};
    for (int m = 0; m < 5; ++m) {
        asc_duplicate(r, int32_t(-999), 256u);
        switch (m) {
            case 0: asc_float2int32_rd(r, f, 200u); break;
            case 1: asc_float2int32_ru(r, f, 200u); break;
            case 2: asc_float2int32_rn(r, f, 200u); break;
            case 3: asc_float2int32_rna(r, f, 200u); break;
            default: asc_float2int32_rz_sync(r, f, 200u); break;
        }
        dump_raw(std::string("f2i_") + names[m], r, sizeof r);
    }
    __ubuf__ float big[128];
    for (int i = 0; i < 128; ++i) big[i] = float(i) * 700.0f - 40000.0f;
    __ubuf__ int16_t s16[128];
    asc_float2int16_rz(s16, big, 128u);
    dump_raw("f2i16", s16, sizeof s16);
    __ubuf__ half h[256];
    asc_float2half(h, f, 256u);
    __ubuf__ float back[256];
    asc_half2float(back, h, 256u);
    dump_raw("f2h2f", back, sizeof back);
    asc_int322float(back, r, 200u);
    dump_raw("i2f", back, sizeof back);
}

static void reductions() {
    __ubuf__ float s[256];
    for (int i = 0; i < 256; ++i) s[i] = float((i * 37) % 101) - 50.0f;
    __ubuf__ float o[64];
    __ubuf__ float p[128];
    asc_duplicate(o, -1.0f, 64u);
    asc_repeat_reduce_sum(o, s, 256u);  // 4 repeats of 64: o[0..3]
    asc_init();
    asc_repeat_reduce_max_value_index(o + 8, s, 4, 1, 1, 8);  // (value, index) pairs at o[8..15]
    asc_datablock_reduce_min(o + 16, s, 4, 1, 1, 8);  // 8 per repeat: o[16..47]
    dump_raw("red", o, sizeof o);
    asc_pair_reduce_sum_sync(p, s, 256u);
    dump_raw("pair", p, sizeof p);
}

// Comparisons into a bit mask and into CMPMASK, and select reading CMPMASK in every repeat.
static void compare_select() {
    __ubuf__ float a[128];
    __ubuf__ float b[128];
    for (int i = 0; i < 128; ++i) a[i] = float(i % 10), b[i] = float(i % 7);
    __ubuf__ uint8_t lt[32];
    __ubuf__ uint8_t ge[32];
    asc_init();
    asc_lt(lt, a, b, 2, 1, 1, 1, 8, 8, 8);
    asc_ge_scalar_sync(ge, a, 5.0f, 2, 1, 1, 8, 8);
    dump_raw("cmp_lt", lt, 16);
    dump_raw("cmp_ge5", ge, 16);
    asc_set_cmp_mask(lt);
    __ubuf__ float sel[128];
    asc_select(sel, a, b, 128u);  // Counter mode: both repeats read bits 0..63
    dump_raw("sel", sel, sizeof sel);
    asc_init();
    asc_set_vector_mask(0, 0xFFFF);
    asc_eq(a, b, 1, 1, 1, 1, 8, 8, 8);  // the first 16 elements, into CMPMASK
    __ubuf__ uint8_t cm[32];
    asc_get_cmp_mask(cm);
    dump_raw("cmpmask", cm, 16);
}

static void scalar_bits() {
    int64_t v[11] = {asc_clz(1), asc_clz(0), asc_ffs(0x50), asc_ffs(0), asc_ffz(0xFF), asc_popc(0xF0F0),
                     asc_zero_bits_cnt(0xFF), asc_sflbits(0x0f00000000000000), asc_sflbits(-1),
                     int64_t(asc_set_nthbit(0, 62)), int64_t(asc_clear_nthbit(~0ull, 0))};
    dump_raw("bits64", v, sizeof v);
    asc_set_ctrl(0x1234);
    int64_t regs[3] = {asc_get_ctrl(), asc_get_block_num(), asc_get_sub_block_num()};
    dump_raw("regs", regs, sizeof regs);
    asc_sync_data_barrier(DSB_UB);
}
""" + main_calling("count_forms();", "repeat_forms();", "data_movement();", "conversions();", "reductions();",
                   "compare_select();", "scalar_bits();", "faults();")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("c_api"), rewrite_ubuf(DRIVER.encode()).decode())


def test_binary_unary_and_scalar_count_forms_on_a_tail(run):
    x = (0.25 * np.arange(320) - 30).astype(np.float32)
    y = (-0.5 * np.arange(320) + 7).astype(np.float32)
    n = 300
    with np.errstate(all="ignore"):
        binary = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "max": np.maximum(x, y),
                  "min": np.minimum(x, y), "add_relu": np.maximum(x + y, 0), "sub_relu": np.maximum(x - y, 0)}
        unary = {"exp": np.exp(y), "log": np.log(np.abs(x)), "abs": np.abs(x), "sqrt": np.sqrt(np.abs(x)),
                 "rsqrt": 1 / np.sqrt(np.abs(x)), "rcp": 1 / y, "relu": np.maximum(x, 0)}
    scalar = {"add_scalar": x + 1.5, "sub_scalar": x - 2, "mul_scalar": x * -3, "max_scalar": np.maximum(x, 0),
              "min_scalar": np.minimum(x, -5), "leakyrelu": np.where(x >= 0, x, x * 0.125)}
    for prefix, table in (("bin", binary), ("un", unary), ("sc", scalar)):
        for name, want in table.items():
            got = run(f"{prefix}_{name}", np.float32)
            np.testing.assert_allclose(got[:n], want[:n].astype(np.float32), rtol=2e-6, err_msg=name)
            assert (got[n:] == -1).all(), f"{name} wrote past its count"
    # The last result (leakyrelu_sync) went back to GM in 40 whole blocks, its untouched tail too.
    want = np.where(np.arange(320) < n, scalar["leakyrelu"], -1).astype(np.float32)
    np.testing.assert_array_equal(run("gm_y", np.float32), want)


def test_repeat_forms_read_the_mask_register_and_strides(run):
    h0 = np.full(512, 1.5, np.float16)
    h1 = (np.arange(512) % 17 - 8).astype(np.float16)
    mask = np.zeros(128, bool)
    bits = (0xFF << 64) | 0xF0F0F0F0F0F0F0F0
    mask[[k for k in range(128) if bits >> k & 1]] = True
    want = np.zeros(512, np.float16)
    for r in range(2):
        for k in np.flatnonzero(mask):
            want[r * 256 + k] = h0[r * 128 + k] + h1[r * 128 + k]
    np.testing.assert_array_equal(run("rep_add", np.float16), want)
    want = np.zeros(512, np.float16)
    want[:256] = h0[:256] * h1[:256]
    np.testing.assert_array_equal(run("cfg_mul", np.float16), want)
    # The count form leaves (0, 200) in the mask register: the next repeat form runs on bits 3, 6, 7.
    got = run("after_count", np.float16)
    np.testing.assert_allclose(got[:200], np.exp(np.float32(1.5)).astype(np.float16), rtol=1e-3)
    active = [k for k in range(128) if 200 >> k & 1]
    want_sub = np.zeros(256, np.float16)
    want_sub[active] = h1[active] - h0[active]
    np.testing.assert_array_equal(got[256:], want_sub)
    want = np.zeros(512, np.float16)
    for r in range(2):
        for blk in range(8):
            want[r * 256 + blk * 32: r * 256 + blk * 32 + 16] = 2.0
    np.testing.assert_array_equal(run("dup_rep", np.float16), want)
    np.testing.assert_array_equal(run("brcb", np.uint32), np.repeat(100 + np.arange(16), 8).astype(np.uint32))
    a = np.int16(0x0F0F) & np.int16(0x00FF)
    i0 = np.where(np.arange(128) < 100, ~a, np.int16(0x0F0F)).astype(np.int16)
    np.testing.assert_array_equal(run("bits", np.int16), i0 | a)


def test_bursts_gaps_and_the_byte_exact_align_forms(run):
    src = np.arange(256, dtype=np.float32)
    u = np.zeros(256, np.float32)
    for i in range(3):
        u[i * 32: i * 32 + 16] = src[i * 24: i * 24 + 16]
    dst = np.full(256, -7, np.float32)
    for i in range(2):
        dst[i * 16: i * 16 + 8] = u[i * 32: i * 32 + 8]
    np.testing.assert_array_equal(run("gm_dst", np.float32), dst)
    rows = run("align_rows", np.float16)
    for r in range(2):  # each row padded to 16 halves (32 bytes): 2 pad, 10 data, 1 pad, then alignment fill
        row = rows[r * 16: r * 16 + 16]
        np.testing.assert_array_equal(row[:2], -1)
        np.testing.assert_array_equal(row[2:12], np.arange(10) + r * 14)
        np.testing.assert_array_equal(row[12:], -1)
    out = run("align_out", np.float16)
    np.testing.assert_array_equal(out[:13], rows[:13])
    assert (out[13:] == 0).all()


def test_conversions_round_as_named_and_saturate(run):
    f = (np.arange(256) - 128) * 0.75 + np.where(np.arange(256) % 2, 0.5, 0.0)
    f = f.astype(np.float32)
    rna = np.sign(f) * np.floor(np.abs(f) + 0.5)
    for name, want in (("rd", np.floor(f)), ("ru", np.ceil(f)), ("rn", np.rint(f)), ("rna", rna), ("rz", np.trunc(f))):
        got = run(f"f2i_{name}", np.int32)
        np.testing.assert_array_equal(got[:200], want[:200].astype(np.int32), err_msg=name)
        assert (got[200:] == -999).all(), name
    big = np.arange(128) * 700.0 - 40000.0
    np.testing.assert_array_equal(run("f2i16", np.int16), np.clip(np.trunc(big), -32768, 32767).astype(np.int16))
    np.testing.assert_array_equal(run("f2h2f", np.float32), f.astype(np.float16).astype(np.float32))
    i2f = run("i2f", np.float32)
    np.testing.assert_array_equal(i2f[:200], run("f2i_rz", np.int32)[:200].astype(np.float32))


def test_reductions_per_repeat_per_block_and_per_pair(run):
    s = ((np.arange(256) * 37) % 101 - 50).astype(np.float32)
    o = run("red", np.float32)
    np.testing.assert_array_equal(o[:4], s.reshape(4, 64).sum(axis=1))
    assert (o[4:8] == -1).all()
    pairs = o[8:16].reshape(4, 2)
    np.testing.assert_array_equal(pairs[:, 0], s.reshape(4, 64).max(axis=1))
    np.testing.assert_array_equal(pairs[:, 1].view(np.uint32), s.reshape(4, 64).argmax(axis=1))
    np.testing.assert_array_equal(o[16:48], s.reshape(32, 8).min(axis=1))
    np.testing.assert_array_equal(run("pair", np.float32), s.reshape(128, 2).sum(axis=1))


def test_comparisons_and_select_through_cmpmask(run):
    a = (np.arange(128) % 10).astype(np.float32)
    b = (np.arange(128) % 7).astype(np.float32)
    np.testing.assert_array_equal(run("cmp_lt", np.uint8), np.packbits(a < b, bitorder="little"))
    np.testing.assert_array_equal(run("cmp_ge5", np.uint8), np.packbits(a >= 5, bitorder="little"))
    bit = (a < b)[np.arange(128) % 64]
    np.testing.assert_array_equal(run("sel", np.float32), np.where(bit, a, b))
    eq = np.zeros(128, bool)
    eq[:16] = a[:16] == b[:16]
    np.testing.assert_array_equal(run("cmpmask", np.uint8), np.packbits(eq, bitorder="little"))


def test_scalar_bit_operations_and_registers(run):
    want = [63, 64, 4, -1, 8, 8, 56, 3, 63, 1 << 62, -2]
    assert run("bits64", np.int64).tolist() == want
    assert run("regs", np.int64).tolist() == [0x1234, 1, 1]


def test_faults_are_reported_at_the_callers_line(run):
    expected = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    found = {(code, int(line)) for _, code, line, _ in run.rows("FAULT")}
    assert expected <= found, run.stdout
    messages = {code: msg for _, code, _, msg in run.rows("FAULT") if code != "ub-out-of-bounds"}
    overruns = [m for _, c, _, m in run.rows("FAULT") if c == "ub-out-of-bounds"]
    assert any("touches 65 elements" in m and "__ubuf__ array 'small' declared at line" in m for m in overruns)
    assert any("src1 is not a Unified Buffer address" in m for m in overruns)
    assert "__ubuf__ array 'huge'" in messages["ub-overflow"]
    assert "asc_exp" in messages["uninitialized-read"]
    # Scalar stores into a __ubuf__ array count as writes: repeat_forms reads h1 without a warning.
    lines = run.source.read_text().splitlines()
    sub_line = next(i for i, t in enumerate(lines, 1) if "asc_add(hd, h0, h1, 2" in t)
    assert ("uninitialized-read", sub_line) not in found


# ---- whole programs: what the launch's trace and flags show ----

PROGRAM = """\
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "c_api/asc_simd.h"

constexpr uint32_t N = 1024;
constexpr uint32_t BLOCKS = 4;

__vector__ __global__ void scale_add(__gm__ float* x, __gm__ float* z)
{
    asc_init();
    uint32_t per = N / asc_get_block_num();
    __gm__ float* xg = x + asc_get_block_idx() * per;
    __gm__ float* zg = z + asc_get_block_idx() * per;
    __ubuf__ float xl[N / BLOCKS];
    __ubuf__ float zl[N / BLOCKS];
    asc_copy_gm2ub(xl, xg, per * sizeof(float));
    asc_sync_notify(PIPE_MTE2, PIPE_V, EVENT_ID0);
    asc_sync_wait(PIPE_MTE2, PIPE_V, EVENT_ID0);
    asc_mul_scalar(zl, xl, 2.0f, per);
    asc_add_scalar(zl, zl, 1.0f, per);
    asc_sync();
    asc_copy_ub2gm(zg, zl, per * sizeof(float));
}

int main()
{
    std::vector<float> x(N), z(N);
    for (uint32_t i = 0; i < N; ++i) x[i] = float(i) * 0.5f;
    aclInit(nullptr);
    aclrtSetDevice(0);
    float *xd = nullptr, *zd = nullptr;
    aclrtMalloc((void**)&xd, N * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&zd, N * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(xd, N * 4, x.data(), N * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    scale_add<<<BLOCKS, nullptr>>>(xd, zd);
    aclrtSynchronizeDevice();
    aclrtMemcpy(z.data(), N * 4, zd, N * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;
    for (uint32_t i = 0; i < N; ++i) bad += z[i] != x[i] * 2 + 1;
    std::printf("bad %d\\n", bad);
    aclrtFree(xd);
    aclrtFree(zd);
    aclFinalize();
    return bad != 0;
}
"""


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return EvalSettings(cache_dir=tmp_path_factory.mktemp("c-api-builds"))


def run_source(tmp_path: Path, settings: EvalSettings, text: str) -> tuple[Path, ProgramReport]:
    path = tmp_path / "c_api_prog.asc"
    path.write_text(text)
    return path, run_program(path, [], settings, cwd=tmp_path, stdout=None)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


def diagnostics(report: ProgramReport):
    return list(report.diagnostics) + [d for lr in report.launches for d in lr.diagnostics]


def test_a_c_api_program_runs_clean(tmp_path, settings):
    _, report = run_source(tmp_path, settings, PROGRAM)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert "bad 0" in report.stdout
    assert not diagnostics(report)
    (launch,) = report.launches
    assert launch.timing is not None and launch.timing.estimated_us > 0


def test_a_missing_barrier_between_vector_and_mte3_is_a_missing_sync(tmp_path, settings):
    path, report = run_source(tmp_path, settings, PROGRAM.replace("    asc_sync();\n", ""))
    found = [d for d in diagnostics(report) if d.code == "missing-sync"]
    assert found, report.model_dump_json(indent=2)
    lines = {line_of(path, "asc_add_scalar(zl"), line_of(path, "asc_copy_ub2gm(zg")}
    assert {d.line for d in found} <= lines and found[0].file == str(path)


def test_a_wait_without_its_notify_deadlocks_at_the_wait(tmp_path, settings):
    path, report = run_source(tmp_path, settings,
                              PROGRAM.replace("    asc_sync_notify(PIPE_MTE2, PIPE_V, EVENT_ID0);\n", ""))
    (d,) = [d for d in diagnostics(report) if d.code == "flag-deadlock"]
    assert d.line == line_of(path, "asc_sync_wait(PIPE_MTE2")
    assert re.search(r"MTE2_V", d.message)
