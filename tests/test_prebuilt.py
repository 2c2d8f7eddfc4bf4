"""The prebuilt emulator parts (npu_eval/prebuilt.py): the precompiled header is the one g++
uses, defines the emulator never mentions share a set, and a kernel built with the parts gives
the same report as one built without them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.prebuilt import prebuilt, prebuilt_key, shared_flags
from sage_npu.npu_eval.settings import EvalSettings

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"


def test_kernel_only_defines_and_folders_do_not_split_the_set():
    base = compile_flags(chip_profile("910B2"), "-O0", {})
    mine = [*base, "-DBUFFER_NUM=2", "-DDTYPE_X=half", "-iquote", "/some/task"]
    assert shared_flags(mine) == base
    assert prebuilt_key("g++", mine) == prebuilt_key("g++", base)
    coop = compile_flags(chip_profile("910B2"), "-O0", {"SAGE_SIM_COOP": "1"})
    assert prebuilt_key("g++", coop) != prebuilt_key("g++", base), "a define the emulator reads needs its own set"
    assert prebuilt_key("g++", compile_flags(chip_profile("910B4"), "-O0", {})) != prebuilt_key("g++", base)
    assert shared_flags([*base, "-D_GLIBCXX_DEBUG=1", "-DNDEBUG=1"]) == [*base, "-D_GLIBCXX_DEBUG=1", "-DNDEBUG=1"]


def test_gxx_uses_the_precompiled_header(tmp_path):
    flags = compile_flags(chip_profile("910B2"), "-O0", {}) + ["-iquote", str(ADD)]
    parts = prebuilt(tmp_path / "cache", "g++", flags, 300)
    assert parts is not None and parts.runtime.is_file()
    src = tmp_path / "h.cpp"
    src.write_text(f'#include "sage_sim/harness.h"\n#include "{ADD / "add_custom.cpp"}"\n')
    proc = subprocess.run(["g++", *parts.flags, *flags, "-H", "-Winvalid-pch", "-fsyntax-only", str(src)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "! " + str(parts.include_dir / "sage_sim" / "harness.h.gch") in proc.stderr, proc.stderr[:2000]
    assert prebuilt(tmp_path / "cache", "g++", flags, 300) == parts  # built once, then reused


@pytest.mark.parametrize("use", [True, False])
def test_the_report_is_the_same_with_or_without_the_prebuilt_parts(tmp_path, use):
    settings = EvalSettings(trials=2, cache_dir=tmp_path / "cache", prebuilt=use)
    with Evaluator(settings) as ev:
        report = ev.evaluate(ADD).report
    assert report.status == "correct"
    assert any((tmp_path / "cache" / "pch").glob("*/runtime.o")) == use
