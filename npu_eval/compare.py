"""The compare stage: NPUKernelBench's correctness rule (docs/task-format.md).

Per element rel = |a-g| / (|g| + 1e-7), with rel = 0 where |a-g| < thr*1e-3; pass when the
mean rel < thr and the max rel < 10*thr. thr = 2^-10 (fp16), 2^-7 (bf16), 2^-13 (fp32).
int8/int16 may differ by one, other integers and bools exactly; NaN and Inf positions must
match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

THRESHOLDS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-13, "float64": 2.0**-13}
NUMPY_DTYPES = {
    "float16": np.float16, "bfloat16": np.uint16, "float32": np.float32, "float64": np.float64,
    "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "bool": np.bool_,
}


@dataclass
class CompareResult:
    passed: bool
    max_abs_err: float
    mean_rel_err: float
    max_rel_err: float
    first_bad: int | None  # flat index of the first wrong element
    got: float | None
    expected: float | None


def itemsize(dtype: str) -> int:
    return np.dtype(NUMPY_DTYPES[dtype]).itemsize


def load_array(path: str, dtype: str) -> np.ndarray:
    """Read a raw array; bfloat16 (stored as its 16 bits) widens exactly to float32."""
    raw = np.fromfile(path, dtype=NUMPY_DTYPES[dtype])
    if dtype == "bfloat16":
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw


def compare(got: np.ndarray, expected: np.ndarray, dtype: str, tolerance: float | None = None) -> CompareResult:
    got, expected = got.ravel(), expected.ravel()
    if dtype in THRESHOLDS:
        return _compare_float(got.astype(np.float64), expected.astype(np.float64),
                              tolerance if tolerance is not None else THRESHOLDS[dtype])
    g, e = got.astype(np.int64), expected.astype(np.int64)
    allowed = 1 if dtype in ("int8", "int16") else 0
    diff = np.abs(g - e)
    bad = np.flatnonzero(diff > allowed)
    first = int(bad[0]) if bad.size else None
    return CompareResult(
        passed=first is None,
        max_abs_err=float(diff.max()) if diff.size else 0.0,
        mean_rel_err=0.0 if first is None else float(bad.size / diff.size),
        max_rel_err=0.0 if first is None else 1.0,
        first_bad=first,
        got=None if first is None else float(g[first]),
        expected=None if first is None else float(e[first]),
    )


def _compare_float(a: np.ndarray, g: np.ndarray, thr: float) -> CompareResult:
    special_a, special_g = ~np.isfinite(a), ~np.isfinite(g)
    # NaN where NaN, +-Inf where the same Inf.
    special_bad = (special_a != special_g) | (special_a & special_g & ~((np.isnan(a) & np.isnan(g)) | (a == g)))
    finite = ~(special_a | special_g)
    diff = np.zeros_like(a)
    diff[finite] = np.abs(a[finite] - g[finite])
    rel = diff / (np.abs(np.where(finite, g, 0.0)) + 1e-7)
    rel[diff < thr * 1e-3] = 0.0
    mean_rel = float(rel.mean()) if rel.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    passed = not special_bad.any() and mean_rel < thr and max_rel < 10 * thr
    first = None
    if not passed:
        wrong = np.flatnonzero(special_bad | (rel >= thr))
        first = int(wrong[0]) if wrong.size else int(np.argmax(rel))
    return CompareResult(
        passed=passed,
        max_abs_err=float(diff.max()) if diff.size else 0.0,
        mean_rel_err=mean_rel,
        max_rel_err=max_rel,
        first_bad=first,
        got=None if first is None else float(a[first]),
        expected=None if first is None else float(g[first]),
    )
