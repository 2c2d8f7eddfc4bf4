"""The emulator's vector API families (basic_api/kernel_operator_vec_*_intf.h) against numpy/torch references.

One C++ program (tests/sim_ops/vector_ops.cpp) runs every op in its count form and its
mask/repeat forms (bit mask, continuous mask, Counter mode, non-default strides) and dumps
inputs and outputs; the references here recompute them from the documented semantics:
half ops computed in float and rounded once, Cast rounding per RoundMode on tricky values,
the reductions' pairwise trees. Separate compiles check the [dtype-unsupported] diagnostics
(code and user line), and one task runs end to end through the Evaluator."""

from __future__ import annotations

import math
import subprocess
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from sage_npu.npu_eval import compile_errors
from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "sim_ops" / "vector_ops.cpp"
F16, F32 = np.float16, np.float32


# ---------------------------------------------------------------- the program


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    """Builds and runs vector_ops.cpp once; returns its output folder, stdout and binary."""
    root = tmp_path_factory.mktemp("vector_ops")
    binary = root / "vector_ops"
    flags = compile_flags(chip_profile("910B2"), "-O1", {})
    subprocess.run(["g++", *flags, str(PROGRAM), "-o", str(binary)], check=True, capture_output=True, text=True,
                   timeout=300)
    out = root / "out"
    out.mkdir()
    run = subprocess.run([str(binary), str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    return Dumps(out, run.stdout, binary)


class Dumps:
    def __init__(self, folder: Path, stdout: str, binary: Path):
        self.folder, self.stdout, self.binary = folder, stdout, binary

    def __call__(self, name: str, dtype) -> np.ndarray:
        return np.fromfile(self.folder / f"{name}.bin", dtype=dtype)

    def bf16(self, name: str) -> np.ndarray:
        """bfloat16 bits as float32 values."""
        bits = np.fromfile(self.folder / f"{name}.bin", dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32)


def same(got, want, what=""):
    """Bit-for-bit equal values (NaN matches NaN; -0 and +0 count as equal)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.dtype.kind == "f":
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    else:
        bad = got != want
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ, first at {i}: got {got[i]!r}, "
                             f"want {want[i]!r}")


def mask_bits(words, epr):
    """A mask[] argument as per-element booleans for one repeat."""
    bits = [(int(words[k >> 6]) >> (k & 63)) & 1 if (k >> 6) < len(words) else 0 for k in range(epr)]
    return np.array(bits, dtype=bool)


def offsets(repeats, active, blk, rep, size):
    """Element offsets of (repeat, k) for the active k: 32-byte blocks, `size`-byte elements."""
    epb = 32 // size
    out = []
    for r in range(repeats):
        for k in np.flatnonzero(active):
            out.append((r, int(k), (r * rep + (k // epb) * blk) * epb + k % epb))
    return out


# ---------------------------------------------------------------- binary


@pytest.mark.parametrize("tag,dtype", [("bin_half", F16), ("bin_float", F32), ("bin_i16", np.int16),
                                       ("bin_i32", np.int32)])
def test_binary_count_form(ops, tag, dtype):
    a, b = ops(f"{tag}_a", dtype), ops(f"{tag}_b", dtype)
    n = 1000
    with np.errstate(all="ignore"):
        refs = {"add": a + b, "sub": a - b, "mul": a * b, "max": np.maximum(a, b), "min": np.minimum(a, b)}
        if dtype in (F16, F32):
            refs["div"] = a / b
            refs["addrelu"] = np.maximum(a + b, dtype(0))
        if dtype == np.int16:
            refs["and"], refs["or"] = a & b, a | b
    for op, ref in refs.items():
        got = ops(f"{tag}_{op}", dtype)
        same(got[:n], ref[:n], f"{tag} {op}")
        same(got[n:], np.full(got.size - n, 7, dtype), f"{tag} {op}: elements past count untouched")
    same(ops(f"{tag}_inplace", dtype)[:n], refs["add"][:n], f"{tag} in place")


def test_binary_bit_mask_with_strides(ops):
    a, b, d = ops("bm_half_a", F16), ops("bm_half_b", F16), ops("bm_half_add", F16)
    want = np.full(4096, -3, F16)
    act = mask_bits([0x5555555555555555, 0xF0F0F0F00000FFFF], 128)
    for (_, _, od), (_, _, o0), (_, _, o1) in zip(offsets(3, act, 2, 20, 2), offsets(3, act, 1, 8, 2),
                                                  offsets(3, act, 3, 24, 2), strict=True):
        want[od] = a[o0] + b[o1]
    same(d, want, "Add<half> mask[] 3 repeats, strides {2,1,3,20,8,24}")


def test_binary_continuous_mask_with_strides(ops):
    a, b, d = ops("bm_float_a", F32), ops("bm_float_b", F32), ops("bm_float_mul", F32)
    want = np.full(2048, -3, F32)
    act = np.arange(64) < 37
    for (_, _, od), (_, _, o0), (_, _, o1) in zip(offsets(4, act, 1, 8, 4), offsets(4, act, 2, 16, 4),
                                                  offsets(4, act, 1, 9, 4), strict=True):
        want[od] = a[o0] * b[o1]
    same(d, want, "Mul<float> mask 37, 4 repeats, strides {1,2,1,8,16,9}")


def test_counter_mode_and_preset_mask(ops):
    a, b = ops("bm_float_a", F32), ops("bm_float_b", F32)
    want = np.full(256, -3, F32)
    want[:150] = a[:150] + b[:150]
    same(ops("bm_counter_add", F32), want, "Counter mode, SetVectorMask(0, 150), isSetMask=false")
    ha, hb = ops("bm_half_a", F16), ops("bm_half_b", F16)
    act = mask_bits([0x00000000FFFF0000, 0x8000000000000001], 128)
    want = np.full(512, -3, F16)
    for r in range(2):
        idx = r * 128 + np.flatnonzero(act)
        want[idx] = ha[idx] - hb[idx]
    same(ops("bm_norm_sub", F16), want, "Normal mode, SetVectorMask(hi, lo), isSetMask=false")


def test_ascendc_utils_set_mask(ops):
    a, b = ops("bm_float_a", F32), ops("bm_float_b", F32)
    want = np.full(192, -3, F32)
    picked = np.r_[np.arange(37), 64 + np.arange(64), 128, 130]  # 37; the whole repeat for 8; bits 0 and 2
    want[picked] = a[picked] + b[picked]
    same(ops("bm_utils_add", F32), want, "AscendCUtils::SetMask(37), (8), <false>(3), (0, 5)")
    row = next(line.split("\t")[1:] for line in ops.stdout.splitlines() if line.startswith("UTILS\t"))
    assert [int(v) for v in row] == [32, 32, 16, 8]


# ---------------------------------------------------------------- unary, scalar, Axpy, fills


@pytest.mark.parametrize("tag,dtype", [("un_half", F16), ("un_float", F32)])
def test_unary_and_scalar_count_forms(ops, tag, dtype):
    x, p = ops(f"{tag}_x", dtype), ops(f"{tag}_p", dtype)
    n = 777
    x32, p32 = x.astype(np.float64), p.astype(np.float64)
    exact = {
        "abs": np.abs(x), "relu": np.maximum(x, dtype(0)), "sqrt": np.sqrt(p), "recip": dtype(1) / p,
        "adds": x + dtype(1.25), "muls": x * dtype(-0.3), "maxs": np.maximum(x, dtype(0.5)),
        "mins": np.minimum(x, dtype(0.5)), "lrelu": np.where(x >= 0, x, x * dtype(0.01)),
    }
    for op, ref in exact.items():
        got = ops(f"{tag}_{op}", dtype)
        same(got[:n], ref[:n], f"{tag} {op}")
        same(got[n:], np.full(got.size - n, 7, dtype), f"{tag} {op}: elements past count untouched")
    # Transcendentals: the C library in float, then one rounding; within an ulp of float64.
    rtol = 2.0 ** -10 if dtype == F16 else 2.0 ** -22
    for op, ref in {"exp": np.exp(x32), "ln": np.log(p32), "rsqrt": 1 / np.sqrt(p32)}.items():
        got = ops(f"{tag}_{op}", dtype)[:n].astype(np.float64)
        np.testing.assert_allclose(got, ref[:n], rtol=rtol, err_msg=f"{tag} {op}")


def test_unary_mask_forms_and_integers(ops):
    x, d = ops("um_exp_x", F32), ops("um_exp", F32)
    want = np.full(2048, -3, F32)
    act = mask_bits([0xFFFF00000000FFFF], 64)
    for (_, _, od), (_, _, os_) in zip(offsets(3, act, 2, 16, 4), offsets(3, act, 1, 8, 4), strict=True):
        want[od] = np.exp(np.float64(x[os_]))
    np.testing.assert_allclose(d, want, rtol=2.0 ** -22, err_msg="Exp<float> mask[] strides {2,1,16,8}")
    hx, hd = ops("um_abs_x", F16), ops("um_abs", F16)
    act = np.arange(128) < 100
    want = np.full(2048, -3, F16)
    for (_, _, od), (_, _, os_) in zip(offsets(2, act, 1, 8, 2), offsets(2, act, 2, 16, 2), strict=True):
        want[od] = np.abs(hx[os_])
    same(hd, want, "Abs<half> mask 100 strides {1,2,8,16}")
    want = np.full(2048, -3, F16)
    act = np.arange(128) < 64
    for (_, _, od), (_, _, os_) in zip(offsets(3, act, 1, 10, 2), offsets(3, act, 1, 8, 2), strict=True):
        want[od] = hx[os_] * F16(2.5)
    same(ops("um_muls", F16), want, "Muls<half> mask 64 strides {1,1,10,8}")
    same(ops("um_not", np.int16), ~ops("um_not_x", np.int16), "Not<int16_t>")
    i = ops("um_i32_x", np.int32)
    same(ops("um_i32_relu", np.int32), np.maximum(i, 0), "Relu<int32_t>")
    with np.errstate(over="ignore"):
        same(ops("um_i32_adds", np.int32), i + np.int32(2000000000), "Adds<int32_t> wraps")


def test_axpy_forms(ops):
    hx = ops("ax_hx", F16).astype(F32)
    same(ops("ax_hh", F16)[:500], (ops("ax_hd0", F16)[:500].astype(F32) + hx[:500] * F32(0.75)).astype(F16),
         "Axpy half/half: float math, one rounding")
    fx = ops("ax_fx", F32)
    same(ops("ax_ff", F32)[:500], ops("ax_fd0", F32)[:500] + fx[:500] * F32(0.75), "Axpy float/float")
    md0 = ops("ax_md0", F32)
    want = md0.copy()
    want[:300] = md0[:300] + hx[:300] * F32(-1.5)
    same(ops("ax_fh", F32), want, "Axpy float dst, half src")
    kd0 = ops("ax_kd0", F32)
    want = kd0.copy()
    for r in range(3):
        want[r * 64:r * 64 + 40] = kd0[r * 64:r * 64 + 40] + hx[r * 64:r * 64 + 40] * F32(2.0)
    same(ops("ax_fh_masked", F32), want, "Axpy float/half mask 40, 64 per repeat")


def test_duplicate_brcb_vec_index(ops):
    want = np.zeros(1024, F16)
    want[:300] = 2.5
    same(ops("dup_count", F16), want, "Duplicate count")
    want = np.zeros(1024, F32)
    for _, _, o in offsets(3, np.arange(64) < 20, 2, 24, 4):
        want[o] = -1.5
    same(ops("dup_masked", F32), want, "Duplicate mask 20, blk 2, rep 24")
    same(ops.bf16("dup_bf16"), np.full(64, 3.0, F32), "Duplicate bfloat16")
    want = np.zeros(1024, F32)
    for r in range(3):
        for j in range(8):
            base = (r * 24 + j * 2) * 8
            want[base:base + 8] = r * 8 + j + 0.5
    same(ops("brcb_f", F32), want, "Brcb float {2, 24}")
    want = np.zeros(512, F16)
    for r in range(2):
        for j in range(8):
            base = (r * 8 + j) * 16
            want[base:base + 16] = r * 8 + j - 4
    same(ops("brcb_h", F16), want, "Brcb half {1, 8}")
    same(ops("vidx_i32", np.int32), np.arange(200, dtype=np.int32) + 5, "CreateVecIndex count")
    want = np.full(256, -1, F32)
    for r in range(2):
        want[r * 64:r * 64 + 10] = np.arange(10) + r * 64 + 0.5
    same(ops("vidx_f_masked", F32), want, "CreateVecIndex mask 10, 2 repeats")


# ---------------------------------------------------------------- Cast

RINT, FLOOR, CEIL, ROUND, TRUNC, ODD = 1, 2, 3, 4, 5, 6


def round_to_grid(x: float, rne, step):
    """Rounds x to a floating format per RoundMode, from the format's round-to-nearest-even
    conversion `rne` and `step(v, toward)` (its next representable value); an independent
    reference for the emulator's bit-level rounding."""

    def ref(mode):
        if math.isnan(x):
            return math.nan
        h = float(rne(x))
        if math.isinf(x) or h == x:
            return h
        if math.isinf(h):  # past the largest finite value
            lo, hi = float(step(h, 0.0)), h
        elif abs(h) > abs(x):
            lo, hi = float(step(h, 0.0)), h
        else:
            lo, hi = h, float(step(h, math.copysign(math.inf, x)))
        neg = x < 0
        if mode in (0, RINT):
            return h
        if mode == TRUNC:
            return lo
        if mode == FLOOR:
            return hi if neg else lo
        if mode == CEIL:
            return lo if neg else hi
        if mode == ROUND:
            # Past the largest finite value, inf stands where the next value would be.
            far = lo + (lo - float(step(lo, 0.0))) if math.isinf(hi) else hi
            return hi if abs(x - lo) >= abs(far - x) else lo
        if mode == ODD:
            odd = lambda v: not math.isinf(v) and int(np.array(v, F32).astype(F16).view(np.uint16)) & 1  # noqa: E731
            return lo if odd(lo) else hi
        raise ValueError(mode)

    return ref


def half_ref(x, mode):
    with np.errstate(over="ignore"):
        return round_to_grid(float(x), lambda v: np.float16(v),
                             lambda v, t: np.nextafter(F16(v), F16(t)))(mode)


def bf16_rne(v):
    return torch.tensor([v], dtype=torch.float32).to(torch.bfloat16).float().item()


def bf16_step(v, toward):
    bits = int(np.array([v], F32).view(np.uint32)[0]) >> 16
    mag_up = abs(toward) > abs(v)
    bits = bits + 1 if mag_up else bits - 1
    return float(np.array([bits << 16], np.uint32).view(F32)[0])


def int_ref(x: float, mode: int, lo: int, hi: int) -> int:
    if math.isnan(x):
        return 0
    r = {TRUNC: math.trunc, FLOOR: math.floor, CEIL: math.ceil}.get(mode)
    if math.isinf(x):
        v = hi if x > 0 else lo
    elif r is not None:
        v = r(x)
    elif mode == ROUND:
        v = int(math.copysign(math.floor(abs(x) + 0.5), x))
    else:
        v = round(x)  # Python rounds half to even
    return max(lo, min(hi, v))


def test_cast_float_to_half_every_mode(ops):
    src = ops("cast_f_src", F32)
    for mode in range(7):
        got = ops(f"cast_f2h_m{mode}", F16).astype(np.float64)
        want = np.array([half_ref(x, mode) for x in src])
        same(got, want, f"Cast float->half mode {mode}")
    # Spot checks of the documented examples: 0.5 + 2^-12 rounds up only in CEIL, ROUND, ODD.
    x = 0.5 + 2.0 ** -12
    assert [half_ref(x, m) for m in (RINT, FLOOR, CEIL, ROUND, TRUNC, ODD)] == \
        [0.5, 0.5, 0.5 + 2 ** -11, 0.5 + 2 ** -11, 0.5, 0.5 + 2 ** -11]


def test_cast_to_integers_saturate_and_round(ops):
    fsrc = ops("cast_f_src", F32)
    for tag, dt in (("f2i32", np.int32), ("f2i16", np.int16)):
        info = np.iinfo(dt)
        for mode in (RINT, FLOOR, CEIL, ROUND, TRUNC):
            want = np.array([int_ref(float(x), mode, info.min, info.max) for x in fsrc], dt)
            same(ops(f"cast_{tag}_m{mode}", dt), want, f"Cast float->{dt.__name__} mode {mode}")
    hsrc = ops("cast_h_src", F16)
    for tag, dt, modes in (("h2i32", np.int32, (1, 2, 3, 4, 5)), ("h2i8", np.int8, (0, 1, 2, 3, 4, 5)),
                           ("h2u8", np.uint8, (0, 1, 2, 3, 4, 5))):
        info = np.iinfo(dt)
        for mode in modes:
            want = np.array([int_ref(float(x), mode, info.min, info.max) for x in hsrc], dt)
            same(ops(f"cast_{tag}_m{mode}", dt), want, f"Cast half->{dt.__name__} mode {mode}")
    bsrc = ops.bf16("cast_bf_src")
    for mode in (RINT, FLOOR, CEIL, ROUND, TRUNC):
        want = np.array([int_ref(float(x), mode, -2 ** 31, 2 ** 31 - 1) for x in bsrc], np.int32)
        same(ops(f"cast_bf2i32_m{mode}", np.int32), want, f"Cast bfloat16->int32 mode {mode}")
    i32 = ops("cast_i32_src", np.int32)
    same(ops("cast_i32i16_m0", np.int16), np.clip(i32, -32768, 32767).astype(np.int16), "Cast int32->int16")


def test_cast_between_float_formats(ops):
    fsrc = ops("cast_f_src", F32)
    for mode in (RINT, FLOOR, CEIL, ROUND, TRUNC):
        want = np.array([round_to_grid(float(x), bf16_rne, bf16_step)(mode) for x in fsrc])
        same(ops.bf16(f"cast_f2bf_m{mode}").astype(np.float64), want, f"Cast float->bfloat16 mode {mode}")
        r = {RINT: np.rint, FLOOR: np.floor, CEIL: np.ceil, TRUNC: np.trunc,
             ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[mode]
        with np.errstate(invalid="ignore"):
            same(ops(f"cast_f2f_m{mode}", F32), r(fsrc.astype(np.float64)).astype(F32), f"Cast float->float {mode}")
    same(ops("cast_h2f_m0", F32), ops("cast_h_src", F16).astype(F32), "Cast half->float")
    same(ops("cast_bf2f_m0", F32), ops.bf16("cast_bf_src"), "Cast bfloat16->float")
    i32 = ops("cast_i32_src", np.int32)
    for mode in (0, RINT, FLOOR, CEIL, ROUND, TRUNC):
        ref = round_to_grid  # int32 -> float: exact ints, float32 grid
        want = np.array([ref(float(v), lambda t: np.float32(t), lambda t, d: np.nextafter(F32(t), F32(d)))(mode)
                         for v in i32])
        same(ops(f"cast_i32f_m{mode}", F32).astype(np.float64), want, f"Cast int32->float mode {mode}")
    i16 = ops("cast_i16_src", np.int16)
    for mode in (0, RINT, FLOOR, CEIL, ROUND, TRUNC):
        want = np.array([half_ref(float(v), mode) for v in i16])
        same(ops(f"cast_i16h_m{mode}", F16).astype(np.float64), want, f"Cast int16->half mode {mode}")
    same(ops("cast_i8h_m0", F16), ops("cast_i8_src", np.int8).astype(F16), "Cast int8->half")
    same(ops("cast_u8h_m0", F16), ops("cast_u8_src", np.uint8).astype(F16), "Cast uint8->half")
    same(ops("cast_deq", F16), (ops("cast_deq_src", np.int32) * 0.125).astype(F16), "Cast int32->half deq")


def test_cast_mask_form(ops):
    src = ops("cast_f_src", F32)
    want = np.full(1024, -7, F16)
    act = np.arange(64) < 48
    for (_, _, od), (_, _, os_) in zip(offsets(3, act, 2, 12, 2), offsets(3, act, 1, 8, 4), strict=True):
        want[od] = half_ref(src[os_], TRUNC)
    same(ops("cast_masked_f2h", F16), want, "Cast float->half TRUNC, mask 48, dst strides {2, 12}")


# ---------------------------------------------------------------- Compare and Select


@pytest.mark.parametrize("tag,dtype", [("cs_half", F16), ("cs_float", F32)])
def test_compare_and_select(ops, tag, dtype):
    a, b = ops(f"{tag}_a", dtype), ops(f"{tag}_b", dtype)
    epr = 256 // a.itemsize
    fns = [np.less, np.greater, np.equal, np.less_equal, np.greater_equal, np.not_equal]
    pack = lambda c: np.packbits(c, bitorder="little")  # noqa: E731
    for m, fn in enumerate(fns):
        same(ops(f"{tag}_cmp{m}", np.uint8), pack(fn(a, b)), f"{tag} Compare mode {m}")
        same(ops(f"{tag}_cmps{m}", np.uint8), pack(fn(a, dtype(1))), f"{tag} Compares mode {m}")
    same(ops(f"{tag}_cmpscalar", np.uint8), pack(a >= 2), f"{tag} CompareScalar GE")

    sel = np.unpackbits(ops(f"{tag}_sel", np.uint8), bitorder="little").astype(bool)
    n, cnt = a.size, 300
    want2, want1, want0 = (np.full(n, -9, dtype) for _ in range(3))
    want2[:cnt] = np.where(sel[:cnt], a[:cnt], b[:cnt])
    want1[:cnt] = np.where(sel[:cnt], a[:cnt], dtype(5))
    rep_bits = sel[np.arange(cnt) % epr]  # mode 0 reuses one repeat's bits
    want0[:cnt] = np.where(rep_bits, a[:cnt], b[:cnt])
    same(ops(f"{tag}_sel2", dtype), want2, f"{tag} Select tensor-tensor")
    same(ops(f"{tag}_sel1", dtype), want1, f"{tag} Select tensor-scalar")
    same(ops(f"{tag}_sel0", dtype), want0, f"{tag} Select CMPMASK_SPR")

    full = np.ones(epr, bool)
    s0 = [o for _, _, o in offsets(2, full, 2, 8, a.itemsize)]
    s1 = [o for _, _, o in offsets(2, full, 1, 16, a.itemsize)]
    want = np.zeros(64, np.uint8)
    bits = pack(a[s0] < b[s1])
    want[:bits.size] = bits
    same(ops(f"{tag}_cmp_masked", np.uint8), want, f"{tag} Compare mask form, src strides")

    want = np.full(n, -9, dtype)
    for r in range(2):
        i = r * epr + np.arange(20)
        want[i] = np.where(sel[i], a[i], b[i])
    same(ops(f"{tag}_sel_masked", dtype), want, f"{tag} Select mask 20, 2 repeats")

    gt = a[:epr] > b[:epr]
    want = np.zeros(16, np.uint8)
    want[:epr // 8] = pack(gt)
    same(ops(f"{tag}_cmpmask", np.uint8), want, f"{tag} Compare -> CMPMASK -> GetCmpMask")
    want = np.full(n, -9, dtype)
    for r in range(2):
        i = r * epr + np.arange(16)
        want[i] = np.where(gt[:16], a[i], b[i])
    same(ops(f"{tag}_sel_reg", dtype), want, f"{tag} Select<T, VSEL_CMPMASK_SPR> from the register")


def test_compare_int32_equal(ops):
    a, b = ops("cmp_i32_a", np.int32), ops("cmp_i32_b", np.int32)
    same(ops("cmp_i32_eq", np.uint8), np.packbits(a == b, bitorder="little"), "Compare<int32_t> EQ")


# ---------------------------------------------------------------- reductions


def tree(vals, dtype):
    """The unit's pairwise sum: neighbours added level by level, every partial rounded to dtype."""
    v = np.asarray(vals, dtype=F32)
    while v.size > 1:
        v = (v[0::2] + v[1::2]).astype(dtype).astype(F32)
    return v[0]


def padded(vals, epr):
    out = np.zeros(epr, F32)
    out[:len(vals)] = vals
    return out


def reduce_sum_ref(x, n, dtype):
    epr = 256 // np.dtype(dtype).itemsize
    parts = [tree(padded(x[i:min(i + epr, n)], epr), dtype) for i in range(0, n, epr)]
    while len(parts) > 1:
        parts = [tree(padded(parts[i:i + epr], epr), dtype) for i in range(0, len(parts), epr)]
    return dtype(parts[0])


@pytest.mark.parametrize("tag,dtype,ibits", [("red_half", F16, np.uint16), ("red_float", F32, np.uint32)])
def test_reduce_sum_max_min_odd_counts(ops, tag, dtype, ibits):
    x = ops(f"{tag}_x", dtype)
    for n in (1, 7, 129, 1000, 4097):
        s = ops(f"{tag}_{n}_sum", dtype)[0]
        same(s, reduce_sum_ref(x, n, dtype), f"{tag} ReduceSum n={n}")
        tol = 2e-2 * math.sqrt(n) if dtype == F16 else 1e-4 * math.sqrt(n)
        assert abs(float(s) - float(x[:n].astype(np.float64).sum())) < tol
        for op, fn, arg in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
            got = ops(f"{tag}_{n}_{op}", dtype)
            same(got[0], fn(x[:n]), f"{tag} Reduce{op} n={n}")
            assert int(got[1:2].view(ibits)[0]) == int(arg(x[:n])), f"{tag} Reduce{op} n={n} index"
    epr = 256 // x.itemsize
    idx = [r * 16 * (32 // x.itemsize) + k for r in range(5) for k in range(50)]
    got = ops(f"{tag}_maxmask", dtype)
    same(got[0], x[idx].max(), f"{tag} ReduceMax mask form")
    assert int(got[1:2].view(ibits)[0]) == idx[int(np.argmax(x[idx]))]
    parts = [tree(padded(x[r * 16 * (32 // x.itemsize):][:50], epr), dtype) for r in range(5)]
    same(ops(f"{tag}_summask", dtype)[0], dtype(tree(padded(parts, epr), dtype)), f"{tag} ReduceSum mask form")


@pytest.mark.parametrize("tag,dtype,ibits", [("red_half", F16, np.uint16), ("red_float", F32, np.uint32)])
def test_per_repeat_reductions(ops, tag, dtype, ibits):
    x = ops(f"{tag}_x", dtype)
    size = x.itemsize
    epr, epb = 256 // size, 32 // size
    sentinel = lambda: np.full(256, -5, dtype)  # noqa: E731
    bits = lambda v: np.array([v], ibits).view(dtype)[0]  # noqa: E731

    want = sentinel()
    for r in range(6):
        want[r * 2] = tree(padded(x[r * epr:r * epr + epr - 3], epr), dtype)
    same(ops(f"{tag}_wsum", dtype), want, f"{tag} WholeReduceSum mask epr-3, dstRepStride 2")

    act = mask_bits([0x00FF00FF00FF00FF, 0x1], epr)
    want = sentinel()
    for r in range(5):
        pos = [(k, o) for rr, k, o in offsets(5, act, 2, 16, size) if rr == r]
        k, o = max(pos, key=lambda p: (x[p[1]], -p[0]))
        want[2 * r], want[2 * r + 1] = x[o], bits(k)
    same(ops(f"{tag}_wmax_vi", dtype), want, f"{tag} WholeReduceMax mask[] VALUE_INDEX")

    want = sentinel()
    want[:4] = x[:4 * epr].reshape(4, epr).min(axis=1)
    same(ops(f"{tag}_wmin_v", dtype), want, f"{tag} WholeReduceMin ONLY_VALUE")

    want = sentinel()
    for r in range(4):
        row = x[r * epr:(r + 1) * epr]
        want[2 * r], want[2 * r + 1] = bits(int(np.argmax(row))), row.max()
    same(ops(f"{tag}_rrmax_iv", dtype), want, f"{tag} ReduceRepeat<MAX> INDEX_VALUE")

    want = sentinel()
    for r in range(13):
        want[r] = tree(padded(x[r * epr:r * epr + 57], epr), dtype)
    same(ops(f"{tag}_rrsum57", dtype), want, f"{tag} ReduceRepeat<SUM> mask 57 x 13 repeats")

    want = sentinel()
    for r in range(3):
        for b in range(8):
            want[r * 8 + b] = tree(x[r * epr + b * epb:r * epr + (b + 1) * epb], dtype)
    same(ops(f"{tag}_bsum", dtype), want, f"{tag} BlockReduceSum")

    want = sentinel()
    act = np.arange(epr) < epr - 5
    for r in range(2):
        for b in range(8):
            vals = [x[o] for rr, k, o in offsets(2, act, 2, 16, size) if rr == r and k // epb == b]
            want[r * 16 + b] = max(vals)
    same(ops(f"{tag}_bmax", dtype), want, f"{tag} BlockReduceMax dstRepStride 2, strides {{2, 16}}")

    want = sentinel()
    want[:24] = x[:3 * epr].reshape(24, epb).min(axis=1)
    same(ops(f"{tag}_rdbmin", dtype), want, f"{tag} ReduceDataBlock<MIN>")

    want = sentinel()
    want[:epr] = (x[:2 * epr:2].astype(F32) + x[1:2 * epr:2].astype(F32)).astype(dtype)
    same(ops(f"{tag}_psum", dtype), want, f"{tag} PairReduceSum")
    want[epr // 2 - 1] = x[epr - 2]  # mask epr-1 drops each repeat's last element
    want[epr - 1] = x[2 * epr - 2]
    same(ops(f"{tag}_rpe", dtype), want, f"{tag} ReducePairElem<SUM> mask epr-1")

    n = 3 * epr + 11
    parts = [tree(padded(x[i:min(i + epr, n)], epr), dtype) for i in range(0, n, epr)]
    same(ops(f"{tag}_counter_chain", dtype)[0], dtype(tree(padded(parts, epr), dtype)),
         f"{tag} Counter-mode WholeReduceSum<T, false> chain (the ReduceCustom sample)")


def test_half_tree_sum_overflows_to_inf_on_910b(ops):
    # 60000 + 60000 leaves half's range: Inf/NaN mode (910B's default) gives inf, not 65504.
    assert np.isinf(ops("red_overflow", F16)[0])


# ---------------------------------------------------------------- faults


def test_clean_cases_raise_no_findings_and_faults_land_on_their_lines(ops):
    lines = [ln.split("\t") for ln in ops.stdout.splitlines()]
    assert ["CLEAN", "0"] in lines, ops.stdout
    found = {(f[1], int(f[2])) for f in lines if f[0] == "FAULT"}
    expected = {(e[1], int(e[2])) for e in lines if e[0] == "EXPECT"}
    assert len(expected) == 5 and expected <= found, ops.stdout
    assert ["ABORT"] in lines
    text = ops.stdout
    assert "not a multiple of 64 (256 bytes)" in text and "supports only CMPMODE::EQ" in text


# ---------------------------------------------------------------- dtype gates (compile time)

BAD_KERNEL = """\
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void bad(GM_ADDR x)
{{
    LocalTensor<int32_t> i;
    LocalTensor<half> h;
    LocalTensor<float> f;
    LocalTensor<uint8_t> u;
    Exp(i, i, 64);
    And(h, h, h, 64);
    Cast(u, f, RoundMode::CAST_RINT, 64);
    {chip_line}
}}
"""


def compile_diags(tmp_path: Path, source: str, chip: str):
    path = tmp_path / "bad.cpp"
    path.write_text(source)
    flags = compile_flags(chip_profile(chip), "-O0", {})
    out = subprocess.run(["g++", *flags, "-fsyntax-only", str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    return path, compile_errors.parse(out.stderr, {str(path.resolve())}, (str(path), 1))


def line_of(path: Path, needle: str) -> int:
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if needle in s)


def test_unsupported_dtypes_are_compile_errors_at_the_users_line(tmp_path):
    path, diags = compile_diags(tmp_path, BAD_KERNEL.format(chip_line="Div(i, i, i, 64);"), "910B2")
    by_line = {d.line: d for d in diags}
    expect = {"Exp(i": "Exp has no int32_t overload on 910B (it takes half, float)",
              "And(h": "And has no half overload on 910B",
              "Cast(u": "Cast has no float -> uint8_t conversion on 910B",
              "Div(i": "Div has no int32_t overload on 910B"}
    for needle, message in expect.items():
        d = by_line.get(line_of(path, needle))
        assert d is not None, (needle, diags)
        assert d.code == "dtype-unsupported" and message in d.message, d
    assert all(d.code == "dtype-unsupported" for d in diags), diags


def test_310p_gates_differ(tmp_path):
    source = BAD_KERNEL.format(chip_line="LocalTensor<bfloat16_t> b; Cast(b, f, RoundMode::CAST_RINT, 64);")
    path, diags = compile_diags(tmp_path, source, "310P3")
    d = next(d for d in diags if d.line == line_of(path, "LocalTensor<bfloat16_t> b"))
    assert d.code == "dtype-unsupported" and "Cast has no float -> bfloat16_t conversion on 310P" in d.message


# ---------------------------------------------------------------- speed


def test_fp16_add_reaches_a_third_of_numpy(ops):
    n, reps = 16384, 800  # three tensors within the UB
    emu = max(float(subprocess.run([str(ops.binary), "--bench", str(n), str(reps)], capture_output=True,
                                   text=True, timeout=60).stdout) for _ in range(3))
    a, b = np.random.randn(n).astype(F16), np.random.randn(n).astype(F16)
    c = np.empty_like(a)
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            np.add(a, b, out=c)
        best = max(best, n * reps / (time.perf_counter() - t) / 1e6)
    assert emu >= best / 3, f"emulator {emu:.0f} Melem/s vs numpy {best:.0f} Melem/s"


# ---------------------------------------------------------------- end to end

ROWSUM_KERNEL = """\
// y[r] = sum(x[r, 0:64]) in fp32: one WholeReduceSum repeat per row, then Muls by a scale.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void row_sum(GM_ADDR x, GM_ADDR y, uint32_t rows)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, yb;
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, rows * 64);
    yg.SetGlobalBuffer((__gm__ float*)y, rows);
    pipe.InitBuffer(xb, rows * 64 * sizeof(float));
    pipe.InitBuffer(yb, rows * sizeof(float));
    AscendC::LocalTensor<float> xl = xb.Get<float>();
    AscendC::LocalTensor<float> yl = yb.Get<float>();
    AscendC::DataCopy(xl, xg, rows * 64);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WholeReduceSum<float>(yl, xl, 64, rows, 1, 1, 8);
    AscendC::Muls(yl, yl, 2.0f, rows);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, yl, rows);
}
"""

ROWSUM_REFERENCE = """\
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return 2 * x.sum(dim=1)

def get_inputs():
    return [torch.randn(32, 64)]

def get_init_inputs():
    return []
"""

ROWSUM_HOST = """\
import torch
from sage_npu.npu_eval import Launch

def launch(x):
    y = torch.empty(x.shape[0])
    return Launch(kernel="row_sum", block_dim=1, args=[x, y, x.shape[0]], outputs=[y])
"""


def test_reduction_kernel_end_to_end_and_dtype_gate_in_the_report(evaluator, tmp_path):
    task = tmp_path / "row_sum"
    task.mkdir()
    (task / "row_sum.cpp").write_text(ROWSUM_KERNEL)
    (task / "reference.py").write_text(ROWSUM_REFERENCE)
    (task / "host.py").write_text(ROWSUM_HOST)
    report = evaluator.evaluate(task).report
    assert report.status == "correct", [(d.code, d.line, d.message) for d in report.diagnostics]
    assert not [d for d in report.diagnostics if d.severity == "error"]

    bad = ROWSUM_KERNEL.replace("AscendC::Muls(yl, yl, 2.0f, rows);",
                                "AscendC::LocalTensor<int32_t> il = yl.ReinterpretCast<int32_t>();\n"
                                "    AscendC::Exp(il, il, rows);")
    (task / "row_sum.cpp").write_text(textwrap.dedent(bad))
    report = evaluator.evaluate(task).report
    assert report.status == "compile_error"
    d = next(d for d in report.diagnostics if d.code == "dtype-unsupported")
    assert d.line == line_of(task / "row_sum.cpp", "AscendC::Exp(il") and "Exp has no int32_t overload" in d.message
