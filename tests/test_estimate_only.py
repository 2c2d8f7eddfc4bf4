"""`sage-npu eval --estimate-only` (EvalSettings.check false): the estimate without the values.

The run skips the cube's multiply-accumulate and the reference's arithmetic (its outputs are only
shaped, on torch's meta device), so a production-size matmul can be estimated; everything the
estimate reads (the trace: copies, loads, Mmads, flags, their addresses) is recorded as usual, so
the estimate is the checked run's, to the cycle.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from sage_npu.cli import main
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.launch_plan import PlanRequest
from sage_npu.npu_eval.plan import plan
from sage_npu.npu_eval.settings import EvalSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("estimate-only-cache")


# a Matmul API kernel (its Mmads skipped), a basic-API cube kernel, a vector kernel, a mixed one and an op
# project (its launch built from the reference's outputs, here shaped on meta)
@pytest.mark.parametrize("task", ["matmul_adv", "matmul_basic", "softmax_rows", "attention_fwd_mix", "axpy_op"])
def test_the_estimate_only_run_estimates_what_the_checked_run_does(task, cache):
    with Evaluator(EvalSettings(trials=1, cache_dir=cache)) as checked, \
            Evaluator(EvalSettings(check=False, cache_dir=cache)) as unchecked:
        full = checked.evaluate(EXAMPLES / task).report
        only = unchecked.evaluate(EXAMPLES / task).report
    assert full.status == "correct", full.diagnostics
    assert only.status == "estimated", only.diagnostics
    assert only.timing is not None and full.timing is not None
    assert only.timing.estimated_us == full.timing.estimated_us
    assert only.timing.pipes == full.timing.pipes and only.timing.bottleneck == full.timing.bottleneck
    assert only.correctness is not None and only.correctness.trials == 0 and only.correctness.passed == 0
    assert [a.code for a in only.advice] == [a.code for a in full.advice]  # the advisor reads the same trace


def test_the_estimate_only_run_skips_the_multiply_accumulate(tmp_path, cache):
    """The Mmad's arithmetic is what the run leaves out: C's first element, read back after its
    Fixpipe, is the product when checked and whatever L0C held (the emulator's fill) when not."""
    task = tmp_path / "mm"
    shutil.copytree(EXAMPLES / "matmul_basic", task)
    kernel = task / "matmul_basic.cpp"
    fixpipe = "        Fixpipe(cGm[m0 * tiling.n + n0], c1, out);\n"
    assert fixpipe in kernel.read_text()
    kernel.write_text(kernel.read_text().replace(fixpipe, fixpipe + (
        "        PipeBarrier<PIPE_ALL>();\n"
        "        if (m0 == 0 && n0 == 0) AscendC::printf(\"c00 %f\\n\", cGm.GetValue(0));\n")))
    with Evaluator(EvalSettings(trials=1, cache_dir=cache)) as checked, \
            Evaluator(EvalSettings(check=False, cache_dir=cache)) as unchecked:
        full = checked.evaluate(task).report
        only = unchecked.evaluate(task).report
    assert full.status == "correct" and only.status == "estimated", (full.diagnostics, only.diagnostics)
    def c00(stdout: str) -> float:
        assert "c00 " in stdout, stdout
        return float(stdout.split("c00 ")[1].split()[0])

    sys.path.insert(0, str(task))
    try:
        from reference import get_input_groups  # the first group is the one trial both runs take
    finally:
        sys.path.remove(str(task))
    a, b = get_input_groups()[0]
    product = float(a[0].float() @ b[:, 0].float())
    assert c00(full.stdout) == pytest.approx(product, abs=1e-3)
    assert c00(only.stdout) != pytest.approx(product, abs=1e-3)


def test_the_plan_of_an_estimate_only_run_computes_and_writes_no_reference_output(tmp_path):
    task = tmp_path / "mm"
    shutil.copytree(EXAMPLES / "matmul_adv", task)
    # A reference that would take the whole test's time on real data: only shaped, it costs nothing.
    ref = task / "reference.py"
    ref.write_text(ref.read_text().replace("return ", "import time\n        if a.device.type != 'meta':\n"
                                           "            time.sleep(600)\n        return ", 1))
    req = PlanRequest(task_root=str(task), reference=str(ref), host=str(task / "host.py"), out_dir=str(tmp_path / "p"),
                      seed=0, trials=1, check=False)
    got = plan(req)
    (out,) = got.first.outputs
    assert len(got.trials) == 1  # the first of the reference's three input groups
    assert out.expected == "" and out.dtype == "float32" and out.shape == [128, 128]
    assert not list((tmp_path / "p").rglob("expected_*"))
    assert all(Path(a.path).is_file() for a in got.first.tensors)  # the inputs are real: the kernel reads them


def test_a_reference_that_cannot_run_on_meta_is_computed_for_its_shapes(tmp_path, cache):
    task = tmp_path / "add"
    shutil.copytree(EXAMPLES / "add_custom", task)
    ref = task / "reference.py"
    # .tolist() needs values: the meta device refuses it, so the outputs come from a real forward
    ref.write_text(ref.read_text().replace("return ", "assert x.tolist() is not None\n        return ", 1))
    with Evaluator(EvalSettings(check=False, cache_dir=cache)) as ev:
        r = ev.evaluate(task).report
    assert r.status == "estimated", r.diagnostics


def test_the_cli_says_nothing_was_checked_and_refuses_what_cannot_be(capsys):
    add = str(EXAMPLES / "add_custom")
    assert main(["eval", add, "--estimate-only"]) == 0
    out = capsys.readouterr().out
    assert "estimated: its values were not computed or checked (--estimate-only)" in out
    assert main(["eval", add, "--estimate-only", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["status"] == "estimated" and r["timing"]["estimated_us"] > 0
    assert main(["eval", add, "--estimate-only", "--timeout", "0.001", "--json"]) == 1  # the run's own limit
    r = json.loads(capsys.readouterr().out)
    assert r["status"] == "timeout" and "limit" in r["diagnostics"][0]["message"]
    assert main(["eval", add, "--estimate-only", "--backend", "ascend"]) == 2
    assert "--estimate-only runs on the emulator" in capsys.readouterr().err
    assert main(["advise", add, "--estimate-only"]) == 0  # the findings at a shape that is not checked
    assert "tileNum 8 -> 1" in capsys.readouterr().out
    with Evaluator(EvalSettings(check=False, estimate=False)) as ev:
        r = ev.evaluate(EXAMPLES / "add_custom").report
    assert r.status == "harness_error" and "nothing to report" in r.diagnostics[0].message


def test_the_editor_and_the_optimizer_verify_whatever_a_settings_file_says():
    """`check` false in a settings file must not make the editor show an unchecked verdict, nor let
    the optimizer suggest an unverified rewrite: they evaluate with `verifying()`."""
    from sage_npu.agent import bench_ray
    from sage_npu.agent.bench_pool import InProcessRunner
    from sage_npu.agent.settings import AgentSettings
    from sage_npu.agent.worker import WorkerState

    unchecked = EvalSettings(check=False, trials=3)
    assert unchecked.verifying() == EvalSettings(trials=3)
    assert EvalSettings().verifying() == EvalSettings()
    state = WorkerState()  # the agent process's episode evaluator
    try:
        assert state.get_evaluator(unchecked).settings.check
    finally:
        state.close()
    pool = InProcessRunner(unchecked, AgentSettings(), None)  # sage-npu bench, one job
    try:
        assert pool.evaluator.settings.check
    finally:
        pool.close()
    assert bench_ray.evaluator_for(unchecked).settings.check  # on a Ray node


def test_run_estimate_only_skips_the_programs_matrix_arithmetic_and_keeps_its_estimate(tmp_path, capfd, monkeypatch):
    """`sage-npu run --estimate-only`: a whole program at a production shape. The test program checks its
    C against its own loop (`bad N`): wrong without the Mmad's arithmetic, with the same estimate."""
    from tests.test_sim_cube import PROGRAM

    (tmp_path / "mm.asc").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs = {}
    for flag in ([], ["--estimate-only"]):
        main(["run", "mm.asc", "--json", *flag])
        runs[bool(flag)] = json.loads(capfd.readouterr().out)
    full, quick = runs[False], runs[True]
    assert full["status"] == "ok" and "bad 0" in full["stdout"] and not full["estimate_only"]
    assert quick["estimate_only"] and quick["status"] == "failed" and "bad 0" not in quick["stdout"]
    assert [x["timing"]["estimated_us"] for x in quick["launches"]] == \
        [x["timing"]["estimated_us"] for x in full["launches"]]
    main(["run", "mm.asc", "--estimate-only"])
    assert "estimate only: the cube's multiply-accumulate was skipped" in capfd.readouterr().err
    assert main(["run", "mm.asc", "--estimate-only", "--backend", "ascend"]) == 2
    assert "--estimate-only runs on the emulator" in capfd.readouterr().err
