"""Where a crash or timeout is reported when the kernel dies before its first Ascend C call:
on the definition of the function it was in (named from the binary's symbols), or on the entry
when the program counter is outside the kernel (a C library call), never on line 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.symbolize import CrashPc, function_at, short_name

HOSTILE = Path(__file__).resolve().parent / "hostile"


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.fixture(scope="module", params=["-O1", "-O0"])
def ev(request, tmp_path_factory):
    ev = Evaluator(EvalSettings(trials=1, run_timeout_s=1.5, opt_level=request.param,
                                cache_dir=tmp_path_factory.getbasetemp() / "bc"))
    yield ev
    ev.close()


def only(report, code):
    found = [d for d in report.diagnostics if d.code == code]
    assert len(found) == 1, report.diagnostics
    return found[0]


def test_a_spin_before_the_first_call_names_its_function(ev):
    k = HOSTILE / "early_spin" / "early_spin.cpp"
    r = ev.evaluate(k.parent).report
    assert r.status == "timeout"
    d = only(r, "timeout")
    assert "before its first Ascend C call" in d.message
    if ev.settings.opt_level == "-O0":  # SettleCount is its own function
        assert (d.file, d.line) == (str(k), line_of(k, "SettleCount(uint32_t n)"))
        assert "it was in SettleCount, defined here" in d.message
    else:  # -O1 inlines it into the entry, where its code then is
        assert (d.file, d.line) == (str(k), line_of(k, "void early_spin("))
        assert "it was in early_spin" in d.message


def test_a_crash_before_the_first_call_names_the_method(ev):
    k = HOSTILE / "early_null" / "early_null.cpp"
    r = ev.evaluate(k.parent).report
    assert r.status == "crash"
    d = only(r, "crash")
    assert "SIGSEGV" in d.message and "before its first Ascend C call" in d.message
    if ev.settings.opt_level == "-O0":
        assert (d.file, d.line) == (str(k), line_of(k, "void Scribble("))
        assert "it was in KernelEarly::Scribble, defined here" in d.message
    else:
        assert (d.file, d.line) == (str(k), line_of(k, "void early_null("))


def test_a_crash_in_the_c_library_is_placed_on_the_entry_and_said_plainly(ev):
    k = HOSTILE / "early_libc" / "early_libc.cpp"
    r = ev.evaluate(k.parent).report
    assert r.status == "crash"
    d = only(r, "crash")
    assert (d.file, d.line) == (str(k), line_of(k, "void early_libc("))
    assert d.message.endswith("before its first Ascend C call"), d.message


@pytest.mark.parametrize(("demangled", "short"), [
    ("early_spin", "early_spin"),
    ("KernelEarly::Scribble(unsigned int)", "KernelEarly::Scribble"),
    ("void Foo<int, Bar<char> >::Run(float*) const", "Foo<int, Bar<char> >::Run"),
    ("(anonymous namespace)::Helper(int)", "Helper"),
])
def test_short_name(demangled, short):
    assert short_name(demangled) == short


def test_garbage_and_missing_inputs_name_nothing(tmp_path):
    assert CrashPc.parse("not hex") is None and CrashPc.parse("") is None
    assert CrashPc.parse("1f 10") == CrashPc(0x1f, 0x10)
    assert function_at(tmp_path / "missing", CrashPc(0x1000, 0)) is None
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x7fELF garbage")
    assert function_at(junk, CrashPc(0x1000, 0)) is None
