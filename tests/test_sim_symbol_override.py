"""The whole-tensor operators on LocalTensor (asc-devkit Add.md ... Compare.md, "整个tensor参与计算"):
`dst = src0 + src1` is the named API over dst's length (a comparison over src0's), bit for bit,
and a fault in it lands on the operator's line. tests/sim_ops/symbol_override.cpp runs each
operator beside its named API."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile

PROGRAM = Path(__file__).resolve().parent / "sim_ops" / "symbol_override.cpp"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("symbol_override")
    binary = root / "symbol_override"
    flags = compile_flags(chip_profile("910B2"), "-O1", {})
    subprocess.run(["g++", *flags, str(PROGRAM), "-o", str(binary)], check=True, capture_output=True, text=True,
                   timeout=600)
    out = root / "out"
    out.mkdir()
    done = subprocess.run([str(binary), str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


def load(out: Path, name: str, dtype) -> np.ndarray:
    return np.fromfile(out / f"{name}.bin", dtype=dtype)


ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "and": np.bitwise_and, "or": np.bitwise_or}
CASES = [("half", np.float16, ["add", "sub", "mul", "div"]), ("float", np.float32, ["add", "sub", "mul", "div"]),
         ("i16", np.int16, ["add", "sub", "mul", "and", "or"]), ("i32", np.int32, ["add", "sub", "mul"]),
         ("u16", np.uint16, ["and", "or"])]


@pytest.mark.parametrize("tag,dtype,ops", CASES, ids=[c[0] for c in CASES])
def test_each_arithmetic_operator_is_its_named_api_bit_for_bit(run, tag, dtype, ops):
    out, _ = run
    a, b = load(out, f"{tag}_a", dtype), load(out, f"{tag}_b", dtype)
    for op in ops:
        got, api = load(out, f"{tag}_{op}_op", dtype), load(out, f"{tag}_{op}_api", dtype)
        assert got.tobytes() == api.tobytes(), (tag, op)
        # and the named API is the documented element-wise op (half: computed in float, rounded once)
        wide = np.float32 if dtype == np.float16 else dtype
        with np.errstate(over="ignore"):
            want = ARITH[op](a.astype(wide), b.astype(wide)).astype(dtype)
        assert np.array_equal(got, want), (tag, op)


@pytest.mark.parametrize("tag,dtype", [("cmp_half", np.float16), ("cmp_float", np.float32)])
def test_each_comparison_operator_is_compare_bit_for_bit(run, tag, dtype):
    out, _ = run
    a, b = load(out, f"{tag}_a", dtype), load(out, f"{tag}_b", dtype)
    refs = {"lt": a < b, "gt": a > b, "eq": a == b, "le": a <= b, "ge": a >= b, "ne": a != b}
    for name, want in refs.items():
        got, api = load(out, f"{tag}_{name}_op", np.uint8), load(out, f"{tag}_{name}_api", np.uint8)
        assert got.tobytes() == api.tobytes(), (tag, name)
        assert np.array_equal(got, np.packbits(want, bitorder="little")), (tag, name)
    assert refs["eq"].any() and not refs["eq"].all()  # the inputs exercise both outcomes


def test_an_operator_fault_lands_on_the_operators_line(run):
    _, stdout = run
    rows = [line.split("\t") for line in stdout.splitlines()]
    assert ["CLEAN", "0"] in rows, stdout
    expect = [(r[1], int(r[2])) for r in rows if r[0] == "EXPECT"]
    found = [(r[1], int(r[2])) for r in rows if r[0] == "FAULT"]
    assert expect and found == expect, stdout
    assert "ABORT" in stdout and "Add" in stdout
