"""`sage-npu calibrate` recovers cost constants from (synthetic) measured times and eval
then uses the calibrated profile."""

from __future__ import annotations

import json

import pytest

from sage_npu.cli import main
from sage_npu.npu_eval.calibrate import CalibrationError, apply_factors, read_measurements
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.cost_model import estimate
from sage_npu.npu_eval.costs import default_costs
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

# The "device": the default table with slower vector units, less bandwidth, more latency.
TRUTH = {"vector": 2.0, "bandwidth": 0.5, "latency": 2.0}


def test_calibration_recovers_the_device_and_eval_uses_it(tmp_path, vadd_task, capsys):
    shapes = [dict(blocks=8, tiles=16, tile=1024), dict(blocks=2, tiles=2, tile=512, scalar=0),
              dict(blocks=48, tiles=2, tile=2048), dict(blocks=4, tiles=1, tile=8192, buffers=1),
              dict(blocks=1, tiles=32, tile=256)]
    cache, profiles = tmp_path / "cache", tmp_path / "profiles"
    chip = chip_profile("910B2")
    truth = apply_factors(default_costs(chip.family), TRUTH)
    rows = ["task,measured_us"]
    before = {}
    with Evaluator(EvalSettings(trials=1, cache_dir=cache, profile_dir=profiles)) as ev:
        for kw in shapes:
            task = vadd_task(tmp_path, **kw)
            evaluation = ev.evaluate(task)
            r = evaluation.report
            assert evaluation.trace is not None
            trace, block_dim = evaluation.trace.trace, evaluation.trace.block_dim
            measured = estimate(trace, chip, truth, block_dim).estimated_us
            rows.append(f"{task.name},{measured:.6f}")
            before[task.name] = (r.timing.estimated_us, measured)
    csv = tmp_path / "measured.csv"
    csv.write_text("\n".join(rows) + "\n")
    cfg = tmp_path / "sage.toml"
    cfg.write_text(f'[eval]\ncache_dir = "{cache}"\nprofile_dir = "{profiles}"\n')

    assert main(["calibrate", str(csv), "--chip", "910B2", "--json", "--config", str(cfg)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["loss_after"] < out["loss_before"] / 20
    for row in out["tasks"]:
        assert row["estimated_us"] == pytest.approx(row["measured_us"], rel=0.1)
    assert (profiles / "910B2.costs.json").is_file()

    # Evaluations on that chip now use the calibrated constants.
    name, (old_est, measured) = next(iter(before.items()))
    with Evaluator(EvalSettings(trials=1, cache_dir=cache, profile_dir=profiles)) as ev:
        new_est = ev.evaluate(tmp_path / name).report.timing.estimated_us
    assert abs(new_est - measured) < abs(old_est - measured)


def test_bad_measurement_files_are_clear_errors(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("kernel,time\nx,1\n")
    with pytest.raises(CalibrationError, match="task,measured_us"):
        read_measurements(p)
    p.write_text("task,measured_us\nx,fast\n")
    with pytest.raises(CalibrationError, match="m.csv:2"):
        read_measurements(p)
    with pytest.raises(CalibrationError, match="missing.csv: no such measurements file"):
        read_measurements(tmp_path / "missing.csv")
    p.write_text("task,measured_us\nnot_here,1.5\n")
    with pytest.raises(CalibrationError, match="m.csv:2: task 'not_here': no such task folder"):
        read_measurements(p)


def test_calibrate_estimate_only_fits_the_traces_of_unchecked_runs(tmp_path, vadd_task, capsys):
    """`calibrate --estimate-only`: each task traced without its values (measurements are taken at
    production shapes); the trace, and so the fit, is the checked run's."""
    cache, profiles = tmp_path / "cache", tmp_path / "profiles"
    task = vadd_task(tmp_path, blocks=4, tiles=4, tile=1024)
    with Evaluator(EvalSettings(trials=1, cache_dir=cache)) as ev:
        checked = ev.evaluate(task).report.timing.estimated_us
    # From here on a real forward would outlast the plan's limit: only a shaped one (on meta) finishes.
    ref = task / "reference.py"
    ref.write_text(ref.read_text().replace("        return x + y", "        if x.device.type != 'meta':\n"
                                           "            import time\n            time.sleep(600)\n"
                                           "        return x + y"))
    (tmp_path / "m.csv").write_text(f"task,measured_us\n{task.name},{2 * checked}\n")
    cfg = tmp_path / "sage.toml"
    cfg.write_text(f'[eval]\ncache_dir = "{cache}"\nprofile_dir = "{profiles}"\nplan_timeout_s = 20\n')
    assert main(["calibrate", str(tmp_path / "m.csv"), "--estimate-only", "--json", "--config", str(cfg)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["loss_after"] < out["loss_before"]
    assert out["tasks"][0]["estimated_us"] == pytest.approx(2 * checked, rel=0.1)
