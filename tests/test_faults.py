"""Every runtime fault check of the emulator (DESIGN section 4, "Faults"), proven on a kernel
that makes the mistake the way a kernel engineer makes it, and correct kernels that must pass
clean. Each case is generated from a base task and a patch in tests/faults/ (the `fault_tasks`
fixture); its kernel marks the line where the fault must be reported with a trailing
`// expect: <code>`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sage_npu.npu_eval.build import SIM_INCLUDE
from sage_npu.npu_eval.chips import chip_profile

_EXPECT = re.compile(r"//\s*expect:\s*([a-z-]+)")


@pytest.fixture(scope="module")
def ev():
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    # The default build cache (not a per-session one): reruns skip the compiles.
    with Evaluator(EvalSettings(trials=2)) as e:
        yield e


def kernel_of(task: Path) -> Path:
    (kernel,) = [p for p in task.iterdir() if p.suffix == ".cpp"]
    return kernel


def expected_marks(task: Path) -> list[tuple[str, Path, int]]:
    kernel = kernel_of(task)
    marks = [(m.group(1), kernel, i) for i, text in enumerate(kernel.read_text().splitlines(), 1)
             if (m := _EXPECT.search(text))]
    assert marks, f"{kernel} marks no line with // expect: <code>"
    return marks


def diagnostic_at(report, code: str, file: Path, line: int):
    found = [d for d in report.diagnostics if d.code == code and Path(d.file) == file and d.line == line]
    got = [(d.code, Path(d.file).name, d.line) for d in report.diagnostics]
    assert found, f"no {code} at {file.name}:{line}; got {got}"
    return found[0]


def assert_no_header_lines(report) -> None:
    for d in report.diagnostics:
        assert not Path(d.file).resolve().is_relative_to(SIM_INCLUDE), f"{d.code} points into the emulator: {d}"


@dataclass
class Fault:
    case: str
    status: str              # the report's status
    block: int               # the block the fault is reported in
    words: list[str] = field(default_factory=list)  # what the message must name (sizes, buffers, the fix)
    severity: str = "error"


FAULT_CASES = [
    Fault("ub_overflow", "runtime_error", 0,
          ["2 x 36864", "147456", "line 24", "line 25", "221184", str(chip_profile("910B2").ub_bytes), "910B2",
           "Shrink the tile"]),
    # An error-severity fault that explains the wrong output makes the run a runtime_error.
    Fault("unaligned_count", "runtime_error", 0, ["62", "124 bytes", "48 elements", "multiple of 16", "DataCopyPad"]),
    Fault("unaligned_ub_address", "runtime_error", 0,
          ["Sub", "2 bytes past a 32-byte boundary", "element 1", "InitBuffer at line 18", "multiples of 16"]),
    Fault("gm_out_of_bounds_tail", "runtime_error", 7,
          ["DataCopy reads 128 elements", "element 16256", "'x'", "16284 elements", "100 elements past its end",
           "DataCopyPad"]),
    Fault("ub_out_of_bounds_count", "runtime_error", 0,
          ["Add touches 2048 elements", "InitBuffer at line 23", "holds 128 elements", "1920 elements past its end"]),
    Fault("ub_out_of_bounds_tbuf", "runtime_error", 0,
          ["TBuf::Get(256)", "512 bytes", "holds 256 bytes", "InitBuffer at line 22",
           "InitBuffer takes a length in bytes"]),
    Fault("ub_out_of_bounds_tmp", "runtime_error", 0,
          ["Gelu's sharedTmpBuffer holds 512 bytes", "at least 768", "GetGeluMinTmpSize"]),
    Fault("queue_deadlock_deque", "runtime_error", 0,
          ["DeQue", "InitBuffer at line 24", "holds no tensor", "AllocTensor at line 41", "never EnQue'd"]),
    Fault("queue_deadlock_alloc", "runtime_error", 0,
          ["AllocTensor", "InitBuffer at line 24", "all 2 of its buffers are in use", "DeQue at line 50",
           "FreeTensor"]),
    Fault("flag_deadlock", "runtime_error", 0,
          ["WaitFlag<HardEvent::MTE3_MTE2>(0)", "SetFlag<HardEvent::MTE3_MTE2>(0)", "MTE2 pipe hangs",
           "one SetFlag before the loop"]),
    Fault("use_after_free", "runtime_error", 0,
          ["DataCopy", "FreeTensor at line 60", "VECOUT queue from InitBuffer at line 25", "before its FreeTensor"]),
    Fault("uninitialized_read", "mismatch", 0,
          ["Add reads", "AllocTensor at line 41", "VECIN queue from InitBuffer at line 24", "stale data"],
          severity="warning"),
    Fault("gm_race", "runtime_error", 1,
          ["block 1 writes z[128..255]", "block 0 already wrote z[128]", "line 60", "SetGlobalBuffer",
           "SetAtomicAdd"]),
    # The mixed attention kernel (examples/tasks/attention_fwd_mix), one cube or cross-core mistake each.
    Fault("attention_flag_deadlock", "runtime_error", 0,
          ["AIC 0 waits at CrossCoreWaitFlag(0)", "no core sets for it any more", "its AIVs in mode 2",
           "waits here forever"]),
    Fault("attention_uninitialized_read", "runtime_error", 0,
          ["Mmad accumulates onto L0C", "cmatrixInitVal false", "no Mmad wrote", "cmatrixInitVal = true"]),
    Fault("attention_cube_buffer_overflow", "runtime_error", 0,
          ["InitBuffer of 2 x 65536 bytes", "131072 bytes of L0B Buffer", "65536 bytes (64 KB)", "910B2",
           "fewer buffers"]),
    Fault("attention_gm_race", "runtime_error", 0,
          ["AIV 0 (AI Core 0, sub-block 0) reads sWs[0..2047] with DataCopy", "AIC 0 stored sWs[0] (at line 158)",
           "no cross-core flag orders that store", "CrossCoreWaitFlag"]),
]


@pytest.mark.parametrize("fault", FAULT_CASES, ids=lambda f: f.case)
def test_fault_is_reported_at_its_line(ev, fault_tasks, fault: Fault):
    task = fault_tasks[fault.case]
    report = ev.evaluate(task).report
    assert report.status == fault.status, report.diagnostics
    assert_no_header_lines(report)
    for code, file, line in expected_marks(task):
        d = diagnostic_at(report, code, file, line)
        assert d.severity == fault.severity
        assert d.block == fault.block, d.message
        for word in fault.words:
            assert word in d.message, f"{word!r} not in: {d.message}"


def test_a_fault_names_the_status_and_the_wrong_output_stays_as_its_symptom(ev, fault_tasks):
    report = ev.evaluate(fault_tasks["gm_race"]).report
    assert report.status == "runtime_error"
    assert {d.code for d in report.diagnostics} >= {"gm-race", "mismatch"}
    assert report.correctness.first_mismatch is not None


def test_out_of_bounds_shows_only_on_the_tail_shape(ev, fault_tasks):
    report = ev.evaluate(fault_tasks["gm_out_of_bounds_tail"]).report
    # Trial 0 is the aligned shape and passes; trial 1 (the tail) stops at the fault.
    assert report.correctness.trials == 2 and report.correctness.passed == 1
    assert [d.code for d in report.diagnostics] == ["gm-out-of-bounds"]


def test_ub_overflow_depends_on_the_chip(fault_tasks):
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    need = 6 * 36864  # three double-buffered queues of 18432 halves
    assert chip_profile("910B2").ub_bytes < need <= chip_profile("310P3").ub_bytes
    with Evaluator(EvalSettings(chip="310P3", trials=1)) as e310:
        report = e310.evaluate(fault_tasks["ub_overflow"]).report
    assert report.chip == "310P3"
    assert report.status == "correct", report.diagnostics
    assert report.diagnostics == []


def test_mismatch_names_index_values_block_and_the_copy_that_wrote_it(ev, fault_tasks):
    task = fault_tasks["mismatch_tail"]
    report = ev.evaluate(task).report
    assert report.status == "mismatch"
    assert_no_header_lines(report)
    (mark,) = expected_marks(task)
    _, kernel, line = mark
    # The tail shape: 8 blocks of ceil(n / 8) rounded up to 16, tiles of 128; the last block's
    # partial tile starts the wrong elements.
    n, blocks, tile = 8 * 2048 - 100, 8, 128
    per_block = (n + blocks - 1) // blocks
    per_block = (per_block + 15) // 16 * 16
    last = blocks - 1
    index = last * per_block + (n - last * per_block) // tile * tile
    x, y = ((index % 13) - 6) * 0.25, ((index % 7) + 1) * 0.125  # reference.py's inputs, exact in half
    m = report.correctness.first_mismatch
    assert (m.index, m.block, m.line, m.trial) == (index, last, line, 1)
    assert m.expected == x + y and m.got == x - y
    assert report.correctness.passed == 1  # the aligned shape has no tail and passes
    d = diagnostic_at(report, "mismatch", kernel, line)
    assert d.block == last
    assert f"index {index}" in d.message and f"block {last}" in d.message


@pytest.mark.parametrize("case", ["correct_add_pad_tail", "correct_tbuf_flags"])
def test_correct_kernel_is_not_flagged(ev, fault_tasks, case: str):
    report = ev.evaluate(fault_tasks[case]).report
    assert report.status == "correct", report.diagnostics
    assert report.diagnostics == []
    assert report.correctness.passed == report.correctness.trials >= 2
