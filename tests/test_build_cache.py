"""The build cache: hits while the dependencies hash the same, and a size bound that drops the
least recently used entries (but never one in use right now); task builds keyed on content, so a
faulty task copied to another folder reuses its build and its faults name the copy."""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

from sage_npu.npu_eval.build import BuildCache, BuildCancelled, build, neutral_paths


def _stored(cache: BuildCache, tmp_path: Path, name: str, size: int, age_s: float) -> Path:
    built = tmp_path / f"built-{name}"
    built.write_bytes(b"x" * size)
    dep = tmp_path / f"{name}.cpp"
    dep.write_text(name)
    binary = cache.store(name * 8, built, [str(dep)])
    then = time.time() - age_s
    os.utime(binary, (then, then))
    return binary


def test_least_recently_used_binaries_go_first(tmp_path):
    cache = BuildCache(tmp_path / "cache", limit_bytes=250_000)
    old = _stored(cache, tmp_path, "a", 100_000, age_s=3000)
    mid = _stored(cache, tmp_path, "b", 100_000, age_s=2000)
    assert old.exists() and mid.exists()
    assert cache.lookup("a" * 8) == old   # a hit makes `a` the most recently used
    os.utime(old, (time.time() - 100, time.time() - 100))
    new = _stored(cache, tmp_path, "c", 100_000, age_s=500)
    assert new.exists() and old.exists()
    assert not mid.exists(), "the least recently used binary stays past the bound"
    assert cache.lookup("b" * 8) is None


def test_entries_in_use_are_never_dropped(tmp_path):
    cache = BuildCache(tmp_path / "cache", limit_bytes=50_000)
    a = _stored(cache, tmp_path, "a", 100_000, age_s=0)
    b = _stored(cache, tmp_path, "b", 100_000, age_s=0)
    assert a.exists() and b.exists(), "an entry used within the last minute may be read by a build now"


def test_precompiled_header_sets_count_and_go_as_one(tmp_path):
    cache = BuildCache(tmp_path / "cache", limit_bytes=150_000)
    pch = tmp_path / "cache" / "pch" / "k1"
    (pch / "sage_sim").mkdir(parents=True)
    (pch / "sage_sim" / "harness.h.gch").write_bytes(b"p" * 120_000)
    then = time.time() - 5000
    os.utime(pch, (then, then))
    b = _stored(cache, tmp_path, "b", 100_000, age_s=100)
    assert b.exists() and not pch.exists()


def test_no_bound_keeps_everything(tmp_path):
    cache = BuildCache(tmp_path / "cache")
    kept = [_stored(cache, tmp_path, n, 100_000, age_s=3000) for n in "abc"]
    assert all(p.exists() for p in kept)


def test_half_written_entries_of_a_killed_process_go_once_stale(tmp_path):
    cache = BuildCache(tmp_path / "cache", limit_bytes=50_000)
    left = tmp_path / "cache" / "pch" / "k1.tmpabc"
    left.mkdir(parents=True)
    (left / "runtime.o").write_bytes(b"r" * 100_000)
    writing = tmp_path / "cache" / "pch" / "k2.tmpdef"
    writing.mkdir()
    (writing / "runtime.o").write_bytes(b"r" * 100_000)
    then = time.time() - 7200
    os.utime(left, (then, then))
    _stored(cache, tmp_path, "b", 10_000, age_s=100)
    assert not left.exists() and writing.exists()


def test_dependencies_in_the_users_folder_are_checked_where_the_copy_is(tmp_path):
    cache = BuildCache(tmp_path / "cache")
    first, copy = tmp_path / "a" / "prog.asc", tmp_path / "b" / "c" / "renamed.asc"
    for src in (first, copy):
        src.parent.mkdir(parents=True)
        (src.parent / "data_utils.h").write_text("// the same header\n")
    built = tmp_path / "built"
    built.write_bytes(b"binary")
    mine = neutral_paths([str(first)])
    theirs = neutral_paths([str(copy)])
    assert mine.files[str(first)] == theirs.files[str(copy)] == "/sage-src/0/src0.asc"
    stored = cache.store("k" * 8, built, [str(first.parent / "data_utils.h")], mine)
    assert cache.lookup("k" * 8, theirs) == stored              # the copy's header is the same
    (copy.parent / "data_utils.h").write_text("// changed in the copy\n")
    assert cache.lookup("k" * 8, theirs) is None                # ... until the copy changes it
    assert cache.lookup("k" * 8, mine) == stored
    assert theirs.to_real("/sage-src/0/src0.asc:12") == f"{copy}:12"
    assert theirs.to_real("/sage-src/0/data_utils.h") == str(copy.parent / "data_utils.h")


def test_a_faulty_task_copied_elsewhere_reuses_its_build_and_its_faults_name_the_copy(fault_tasks, tmp_path):
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    first = fault_tasks["gm_out_of_bounds_tail"]
    copy = tmp_path / "elsewhere" / "deeper" / "my_task"
    shutil.copytree(first, copy)
    with Evaluator(EvalSettings(trials=1, cache_dir=tmp_path / "builds")) as ev:
        for task, cached in ((first, False), (copy, True)):
            done = ev.evaluate(task)
            assert done.stages.build_cached is cached, task
            kernel = next(p for p in task.iterdir() if p.suffix == ".cpp")
            line = next(i for i, t in enumerate(kernel.read_text().splitlines(), 1)
                        if re.search(r"//\s*expect:\s*gm-out-of-bounds", t))
            found = [d for d in done.report.diagnostics if d.code == "gm-out-of-bounds"]
            assert found and all(Path(d.file) == kernel for d in found), [(d.code, d.file) for d in found]
            assert found[0].line == line
            if task == copy:  # nothing in the copy's report names the first folder
                assert str(first) not in done.report.model_dump_json()


def _sleeping_compiler(tmp_path: Path) -> Path:
    """A C++ compiler whose compile forks a child (as g++ forks cc1plus) and sleeps a minute."""
    cxx = tmp_path / "slow-c++"
    cxx.write_text(f'#!/bin/sh\ncase "$1" in --version) echo slow-c++ 1; exit 0;; esac\n'
                   f'sleep 60 & echo $! > {tmp_path / "child"}\nwait\n')
    cxx.chmod(0o755)
    return cxx


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except FileNotFoundError:
        return True


def test_a_compile_past_its_timeout_is_killed_with_its_children(tmp_path):
    cxx = _sleeping_compiler(tmp_path)
    t0 = time.monotonic()
    got = build("int main() {}\n", [], str(cxx), BuildCache(tmp_path / "cache", 1 << 20), set(), ("k.cpp", 3), 0.5)
    assert time.monotonic() - t0 < 10 and not got.ok
    assert "ran past" in got.diagnostics[0].message and got.diagnostics[0].line == 3
    assert _gone(int((tmp_path / "child").read_text()))


def test_a_stopped_compile_is_killed_and_raises(tmp_path):
    cxx = _sleeping_compiler(tmp_path)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(BuildCancelled):
        build("int main() {}\n", [], str(cxx), BuildCache(tmp_path / "cache", 1 << 20), set(), ("k.cpp", 3), 120,
              stop=stop)
    assert time.monotonic() - t0 < 10
    assert _gone(int((tmp_path / "child").read_text()))
