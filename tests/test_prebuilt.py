"""The prebuilt emulator parts (npu_eval/prebuilt.py): the precompiled header is the one g++
uses, defines the emulator never mentions share a set, and a kernel built with the parts gives
the same report as one built without them."""

from __future__ import annotations

import subprocess
import time
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
    parts = prebuilt(tmp_path / "cache", "g++", flags, 300, wait=True)
    assert parts is not None and parts.runtime.is_file()
    src = tmp_path / "h.cpp"
    src.write_text(f'#include "sage_sim/harness.h"\n#include "{ADD / "add_custom.cpp"}"\n')
    proc = subprocess.run(["g++", *parts.flags, *flags, "-H", "-Winvalid-pch", "-fsyntax-only", str(src)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "! " + str(parts.include_dir / "sage_sim" / "harness.h.gch") in proc.stderr, proc.stderr[:2000]
    assert prebuilt(tmp_path / "cache", "g++", flags, 300) == parts  # built once, then reused
    assert list((tmp_path / "cache" / "pch").glob("*/runtime.o")) == [parts.runtime]


@pytest.mark.parametrize("use", [True, False])
def test_the_report_is_the_same_with_or_without_the_prebuilt_parts(tmp_path, use):
    cache = tmp_path / "cache"
    if use:
        prebuilt(cache, "g++", compile_flags(chip_profile("910B2"), "-O0", {}), 300, wait=True)
    sets = sorted(cache.glob("pch/*/runtime.o"))
    settings = EvalSettings(trials=2, cache_dir=cache, prebuilt=use)
    with Evaluator(settings) as ev:
        evaluation = ev.evaluate(ADD)
    assert evaluation.report.status == "correct"
    assert not evaluation.stages.build_cached
    assert sorted(cache.glob("pch/*/runtime.o")) == sets, "the evaluation used the set made before, no other"
    assert bool(sets) == use


def test_a_missing_set_is_made_in_the_background_and_the_build_does_not_wait(tmp_path):
    cache = tmp_path / "cache"
    with Evaluator(EvalSettings(trials=1, cache_dir=cache)) as ev:
        first = ev.evaluate(ADD)
        assert first.report.status == "correct" and not first.stages.build_cached
        deadline = time.monotonic() + 120
        while not any(cache.glob("pch/*/runtime.o")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert any(cache.glob("pch/*/runtime.o")), "the detached process made the set"
        again = ev.evaluate(ADD)  # built before the set existed: still a hit, no second build
        assert again.report.status == "correct" and again.stages.build_cached
