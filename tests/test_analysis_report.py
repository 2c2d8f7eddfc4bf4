"""The static analysis's findings travel in the Report: `evaluate()` adds them (never changing the
status, never twice for what the run already reports), and the CLI and the agent's prompt show
them like any other diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage_npu.agent.prompt import TaskView, turn_messages
from sage_npu.cli import main
from sage_npu.npu_eval.analysis import RULES, analyze

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def deadlock(fault_tasks) -> Path:
    return fault_tasks["queue_deadlock_alloc"]  # AllocTensor with no FreeTensor


@pytest.fixture(scope="module")
def unaligned(fault_tasks) -> Path:
    return fault_tasks["unaligned_ub_address"]  # the run reports the same finding


@pytest.fixture(scope="module")
def deadlock_report(evaluator, deadlock):
    return evaluator.evaluate(deadlock).report


def test_a_static_finding_joins_the_report_without_changing_the_status(deadlock_report, deadlock):
    r = deadlock_report
    assert r.status == "runtime_error"
    static = [d for d in r.diagnostics if d.code == "missing-free"]
    assert len(static) == 1
    assert static[0].severity == "warning" and static[0].file == str(deadlock / "add_custom.cpp")
    assert any(d.code == "queue-deadlock" for d in r.diagnostics)


def test_a_finding_the_run_already_reports_is_not_added_twice(evaluator, unaligned):
    src = (unaligned / "diff_custom.cpp").read_bytes()
    assert [f.code for f in analyze(src)] == ["unaligned-copy"]
    r = evaluator.evaluate(unaligned).report
    assert [(d.code, d.line) for d in r.diagnostics].count(("unaligned-copy", 29)) == 1


def test_editor_only_rules_stay_out_of_the_report():
    src = (REPO / "examples/tasks/vadd_naive/vadd_naive.cpp").read_bytes()
    assert [f.code for f in analyze(src)] == ["single-buffer"]
    assert analyze(src, for_report=True) == []
    assert [r.check.__name__ for r in RULES if not r.in_report] == ["single_buffer"]


def test_the_cli_prints_a_static_finding_like_other_diagnostics(capsys, deadlock):
    code = main(["eval", str(deadlock), "--trials", "1"])
    out = capsys.readouterr().out
    assert code == 1
    line = next(ln for ln in out.splitlines() if ln.endswith("[missing-free]"))
    assert line.startswith(f"{deadlock / 'add_custom.cpp'}:41:") and ": warning: " in line


def test_a_static_finding_reaches_the_agents_prompt(deadlock_report, deadlock):
    view = TaskView(operator="add_custom", kernel_name="add_custom.cpp",
                    reference=(deadlock / "reference.py").read_text(), chip="910B2")
    messages = turn_messages(view, {}, deadlock_report, None, None, "Make it correct.")
    prompt = "\n".join(m["content"] for m in messages)
    assert "warning [missing-free] add_custom.cpp:41:" in prompt


def test_the_analysis_runs_once_per_source(evaluator, deadlock, monkeypatch):
    import sage_npu.npu_eval.evaluate as evaluate_module

    calls: list[int] = []
    real = evaluate_module.analyze

    def counting(source, chip, *, for_report=False):
        calls.append(1)
        return real(source, chip, for_report=for_report)

    monkeypatch.setattr(evaluate_module, "analyze", counting)
    first = evaluator.evaluate(deadlock).report
    again = evaluator.evaluate(deadlock).report
    assert len(calls) <= 1, "an unchanged kernel is analysed once (by source hash), not on every evaluation"
    assert [d.code for d in first.diagnostics] == [d.code for d in again.diagnostics]
