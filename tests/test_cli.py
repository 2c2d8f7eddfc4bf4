"""`sage-npu eval` as a user runs it: exit codes, human and JSON output, global flags after
the command, settings from a config file and the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sage_npu.cli import main
from sage_npu.settings import SettingsError, load_settings

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sage_npu.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def test_eval_json_correct_exits_zero():
    p = run_cli("eval", str(ADD), "--json", "--trials", "2", "--chip", "910B4")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["status"] == "correct" and r["chip"] == "910B4" and r["schema_version"] == 1


def test_eval_human_output_names_status_and_trials(capsys):
    code = main(["eval", str(ADD), "--trials", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "correct: 2/2 trials pass" in out and "910B2" in out


def test_not_correct_exits_one_and_prints_clickable_diagnostics(tmp_path, capsys):
    d = tmp_path / "bad"
    d.mkdir()
    for f in ADD.iterdir():
        (d / f.name).write_text(f.read_text())
    k = d / "add_custom.cpp"
    k.write_text(k.read_text().replace("AscendC::Add(zLocal, xLocal, yLocal, tileLength);",
                                       "AscendC::Sub(zLocal, xLocal, yLocal, tileLength);"))
    code = main(["eval", str(d), "--trials", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"{k}:" in out and "[mismatch]" in out


def test_ascend_backend_says_it_is_not_available():
    p = run_cli("eval", str(ADD), "--backend", "ascend")
    assert p.returncode == 2
    assert "CANN" in p.stderr and "not available" in p.stderr and "not built yet" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stdout == ""


def test_bad_chip_is_a_usage_error():
    p = run_cli("eval", str(ADD), "--chip", "H100")
    assert p.returncode == 2 and "unknown chip 'H100'" in p.stderr


def test_usage_error_exits_two():
    p = run_cli("eval")
    assert p.returncode == 2


def test_settings_priority_file_env_flags(tmp_path, monkeypatch):
    cfg = tmp_path / "sage.toml"
    cfg.write_text('[eval]\nchip = "910B3"\ntrials = 7\n')
    assert load_settings(cfg).eval.chip == "910B3"
    monkeypatch.setenv("SAGE_NPU_EVAL__CHIP", "310P3")
    s = load_settings(cfg)
    assert s.eval.chip == "310P3" and s.eval.trials == 7  # env over file, file over defaults
    assert load_settings(cfg, {"eval": {"chip": "910B1"}}).eval.chip == "910B1"  # flags over env


def test_bad_config_value_names_the_field(tmp_path):
    cfg = tmp_path / "sage.toml"
    cfg.write_text("[eval]\ntrials = 0\n")
    with pytest.raises(SettingsError, match="eval.trials"):
        load_settings(cfg)
    cfg.write_text("[eval\n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(cfg)
