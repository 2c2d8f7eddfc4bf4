"""The host side of a program (program mode): ACL calls used wrongly return the error code CANN
documents and are a diagnostic at the calling line instead of an abort; a crash in host code is
reported at the line that crashed; and the build cache keys on content, so a copy of a program in
another folder (or renamed) reuses its build while its faults name the copy."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from sage_npu.npu_eval.program import ProgramReport, run_program
from sage_npu.npu_eval.settings import EvalSettings

MISUSE = """\
#include <cstdio>
#include <cstdlib>
#include "acl/acl.h"

int main()
{
    void* host = nullptr;
    void* dev = nullptr;
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMallocHost(&host, 64);
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    void* plain = std::malloc(64);
    int onStack[4] = {0, 0, 0, 0};
    std::printf("malloc %d\\n", aclrtFreeHost(plain));  // expect: not from aclrtMallocHost
    std::printf("stack %d\\n", aclrtFreeHost(onStack));  // expect: not from aclrtMallocHost
    std::printf("device %d\\n", aclrtFreeHost(dev));  // expect: free it with aclrtFree
    std::printf("first %d\\n", aclrtFreeHost(host));
    std::printf("double %d\\n", aclrtFreeHost(host));  // expect: a second time
    std::printf("freed-copy %d\\n", aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE));  // expect: freed at
    aclrtEvent event = nullptr;
    std::printf("null-event %d\\n", aclrtRecordEvent(event, nullptr));  // expect: null event
    std::printf("null %d\\n", aclrtFreeHost(nullptr));  // expect: null pointer
    std::printf("hostfree %d\\n", aclrtFree(plain));  // expect: not device memory
    std::printf("destroy-null %d\\n", aclrtDestroyStream(nullptr));  // expect: default stream cannot be destroyed
    std::printf("destroy %d\\n", aclrtDestroyStream(stream));
    std::printf("sync %d\\n", aclrtSynchronizeStream(stream));  // expect: aclrtDestroyStream destroyed
    aclError copied = aclrtMemcpyAsync(dev, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, stream);  // expect: destroyed
    std::printf("memcpy-async %d\\n", copied);
    std::free(plain);
    aclrtFree(dev);
    std::printf("reached the end\\n");
    return 0;
}
"""

CRASH = """\
#include <cstdio>
#include "acl/acl.h"

static int deref(int* p)
{
    return *p;
}

int main()
{
    aclInit(nullptr);
    int* nothing = nullptr;
    std::printf("%d\\n", deref(nothing));
    return 0;
}
"""

# ACL's documented codes: ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID.
CODES = {"malloc": 100000, "stack": 100000, "device": 100000, "first": 0, "double": 100000, "freed-copy": 100000,
         "null-event": 100000, "null": 100000,
         "hostfree": 100000, "destroy-null": 100000, "destroy": 0, "sync": 107000, "memcpy-async": 107000}


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return EvalSettings(cache_dir=tmp_path_factory.mktemp("host-builds"))


def expected(path: Path) -> dict[int, str]:
    return {i: m.group(1) for i, t in enumerate(path.read_text().splitlines(), 1)
            if (m := re.search(r"//\s*expect:\s*(.+)$", t))}


def check_misuse(report: ProgramReport, path: Path) -> None:
    assert report.status == "faulted" and report.program_exit_code == 0, report.stderr
    assert "reached the end" in report.stdout
    printed = dict(line.rsplit(" ", 1) for line in report.stdout.splitlines() if line != "reached the end")
    assert {k: int(v) for k, v in printed.items()} == CODES
    found = {d.line: d for d in report.diagnostics}
    for line, words in expected(path).items():
        d = found.get(line)
        assert d is not None and d.code in ("acl-error", "use-after-free") and words in d.message, (line, words, d)
        assert Path(d.file) == path
    assert set(found) == set(expected(path)), sorted(found)


def test_acl_host_misuse_returns_the_documented_code_and_is_reported_at_the_call(tmp_path, settings):
    path = tmp_path / "first" / "misuse.cpp"
    path.parent.mkdir()
    path.write_text(MISUSE)
    report = run_program(path, [], settings, cwd=path.parent)
    check_misuse(report, path)

    # The same program in another folder, renamed: no compile, and the faults name the copy.
    copy = tmp_path / "elsewhere" / "deeper" / "renamed.cpp"
    copy.parent.mkdir(parents=True)
    shutil.copy(path, copy)
    again = run_program(copy, [], settings, cwd=copy.parent)
    assert again.build_cached, "the copy was compiled again"
    check_misuse(again, copy)


def test_a_crash_in_host_code_is_reported_at_the_line_that_crashed(tmp_path, settings):
    path = tmp_path / "crash.cpp"
    path.write_text(CRASH)
    report = run_program(path, [], settings, cwd=tmp_path)
    assert report.status == "crash" and report.exit_code == 1
    (d,) = [d for d in report.diagnostics if d.code == "crash"]
    assert "SIGSEGV" in d.message and "host code" in d.message
    assert Path(d.file) == path and d.line == 6, d


def test_the_crash_row_carries_the_callers_up_the_frame_chain():
    from sage_npu.npu_eval.symbolize import CrashPc

    pc = CrashPc.parse("1f 10 30 40")
    assert pc == CrashPc(0x1f, 0x10, (0x30, 0x40))
    assert pc.callers() == [CrashPc(0x2f, 0x10), CrashPc(0x3f, 0x10)]
    assert CrashPc.parse("1f 10") == CrashPc(0x1f, 0x10)
