"""Reading a program's launch folders back: a launch whose folder holds the same files as an earlier
one's gets that report with its own index (program.read_launches), and the reports are the ones
each folder gives read alone."""

from __future__ import annotations

from pathlib import Path

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.build import PathMap
from sage_npu.npu_eval.program import launch_fingerprint, read_launches
from sage_npu.npu_eval.settings import EvalSettings


def _launch(out: Path, index: int, fault_line: int, kernel: str = "mm") -> Path:
    d = out / f"{protocol.LAUNCH_PREFIX}{index}"
    d.mkdir()
    src = str(out.parent / "mm.asc")
    (d / protocol.META).write_text(f"{index}\t{src}\t30\t5\t{kernel}\t2\n")
    (d / protocol.FAULTS).write_text(f"gm-race\terror\t{src}\t{fault_line}\t1\t1\tblock 1 writes c[0..3]\n")
    (d / protocol.CRASH).write_text("")
    (d / protocol.DONE).write_text("0\n")
    return d


def _read(out: Path, reuse: bool):
    src = str(out.parent / "mm.asc")
    return read_launches(out, EvalSettings(), src, {src}, False, PathMap(), reuse=reuse)


def test_identical_launches_share_a_report_with_their_own_index(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "mm.asc").write_text("// kernel\n" * 40)
    for i, line in [(1, 12), (2, 12), (3, 14), (10, 12)]:
        _launch(out, i, line)
    reused, fresh = _read(out, True), _read(out, False)
    assert reused == fresh
    assert [r.index for r in reused] == [1, 2, 3, 10]
    assert [r.diagnostics[0].line for r in reused] == [12, 12, 14, 12]
    assert all(r.status == "runtime_error" for r in reused)


def test_the_fingerprint_leaves_out_the_index_and_nothing_else(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    a, b, c = _launch(out, 1, 12), _launch(out, 2, 12), _launch(out, 3, 12, kernel="other")
    assert launch_fingerprint(a) == launch_fingerprint(b)
    assert launch_fingerprint(a) != launch_fingerprint(c)
    (b / protocol.TRACE).write_text("B\t0\tAIC\t0\n")
    assert launch_fingerprint(a) != launch_fingerprint(b)


def test_an_error_is_not_hidden_by_a_warning_of_its_code_at_its_line(tmp_path):
    # (matmul_leakyrelu_advanced_api: a Matmul's Iterate warned of a ragged ND read, then stopped on
    # a bias read past the buffer, both gm-out-of-bounds at the Iterate's line)
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "mm.asc").write_text("// kernel\n" * 40)
    d = _launch(out, 1, 12)
    src = str(tmp_path / "mm.asc")
    (d / protocol.FAULTS).write_text(f"gm-out-of-bounds\twarning\t{src}\t12\t1\t1\trows past the end\n"
                                     f"gm-out-of-bounds\terror\t{src}\t12\t1\t1\t64 elements past its end\n")
    (d / protocol.DONE).write_text("3\n")
    (report,) = _read(out, False)
    assert report.status == "runtime_error"
    assert sorted((x.severity, x.message) for x in report.diagnostics) == [
        ("error", "64 elements past its end"), ("warning", "rows past the end")]


def test_a_launch_stopped_without_a_finding_still_reports_an_error(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "mm.asc").write_text("// kernel\n" * 40)
    d = _launch(out, 1, 12)
    (d / protocol.FAULTS).write_text("")
    (d / protocol.DONE).write_text("3\n")
    (report,) = _read(out, False)
    assert report.status == "runtime_error"
    assert [(x.severity, x.code, x.line) for x in report.diagnostics] == [("error", "crash", 30)]
    assert "without saying why" in report.diagnostics[0].message


def test_the_text_report_prints_consecutive_alike_launches_once_as_a_range(tmp_path):
    """A timing loop's 10000 launches of one kernel with one warning print 1 warning line and 1
    launch line, not 10000 of each; a launch that differs (another line) or is not consecutive
    breaks the run."""
    from sage_npu.npu_eval.program import ProgramReport, format_program_report

    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "mm.asc").write_text("// kernel\n" * 40)
    for i, line in [(1, 12), (2, 12), (3, 12), (4, 14), (5, 12), (7, 12)]:
        _launch(out, i, line)
    launches = _read(out, True)
    report = ProgramReport(program=str(tmp_path / "mm.asc"), sources=[], status="faulted", exit_code=1,
                           launches=launches)
    text = format_program_report(report).splitlines()
    faults = [ln for ln in text if "[gm-race]" in ln]
    assert [ln.rsplit("(", 1)[1] for ln in faults] == [
        "launches 1-3) [gm-race]", "launch 4) [gm-race]", "launch 5) [gm-race]", "launch 7) [gm-race]"], faults
    heads = [ln.split(":", 1)[0] for ln in text if ln.startswith("launch")]
    assert heads == ["launches 1-3", "launch 4", "launch 5", "launch 7"], text
    assert "each (3 alike)" in next(ln for ln in text if ln.startswith("launches 1-3"))
