"""The NPUKernelBench correctness rule, table-driven."""

import numpy as np
import pytest

from sage_npu.npu_eval.compare import THRESHOLDS, compare


def test_thresholds_follow_the_rule():
    assert THRESHOLDS["float16"] == 2**-10
    assert THRESHOLDS["bfloat16"] == 2**-7
    assert THRESHOLDS["float32"] == 2**-13


def test_identical_arrays_pass():
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    r = compare(x, x.copy(), "float32")
    assert r.passed and r.max_abs_err == 0 and r.first_bad is None


def test_one_bad_element_over_ten_thr_fails_and_is_located():
    g = np.ones(1000, dtype=np.float32)
    a = g.copy()
    a[417] = 1.0 + 20 * 2**-13
    r = compare(a, g, "float32")
    assert not r.passed
    assert r.first_bad == 417
    assert r.got == pytest.approx(a[417]) and r.expected == 1.0


def test_small_scattered_error_within_mean_passes():
    g = np.ones(1000, dtype=np.float16)
    a = g.copy()
    a[::100] = np.float16(1.0 + 2**-9)  # rel 2^-9 < 10*thr on 10 elements; mean well under thr
    assert compare(a, g, "float16").passed


def test_uniform_error_above_thr_fails_on_mean():
    g = np.ones(100, dtype=np.float32)
    a = g * (1 + 2 * 2**-13)
    r = compare(a.astype(np.float32), g, "float32")
    assert not r.passed and r.mean_rel_err >= 2**-13


def test_tiny_absolute_differences_count_as_zero():
    g = np.zeros(10, dtype=np.float32)
    a = g + 2**-13 * 1e-4  # |a-g| < thr*1e-3: rel forced to 0 despite g == 0
    assert compare(a, g, "float32").passed


def test_nan_and_inf_positions_must_match():
    g = np.array([1.0, np.nan, np.inf, -np.inf], dtype=np.float32)
    assert compare(g.copy(), g, "float32").passed
    a = g.copy()
    a[2] = -np.inf
    r = compare(a, g, "float32")
    assert not r.passed and r.first_bad == 2
    a = g.copy()
    a[0] = np.nan
    assert compare(a, g, "float32").first_bad == 0


@pytest.mark.parametrize("dtype,delta,ok", [("int8", 1, True), ("int8", 2, False), ("int16", 1, True),
                                            ("int32", 1, False), ("int64", 0, True)])
def test_integer_rules(dtype, delta, ok):
    g = np.arange(50).astype(dtype)
    a = g.copy()
    a[3] += delta
    assert compare(a, g, dtype).passed is ok


def test_bool_exact():
    g = np.array([True, False, True])
    assert not compare(np.array([True, True, True]), g, "bool").passed


def test_explicit_tolerance_overrides_dtype_threshold():
    g = np.ones(10, dtype=np.float32)
    a = g * 1.001
    assert not compare(a, g, "float32").passed
    assert compare(a, g, "float32", tolerance=1e-2).passed
