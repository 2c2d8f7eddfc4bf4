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


def test_ascend_backend_without_cann_says_what_is_missing():
    env = {"ASCEND_HOME_PATH": "", "ASCEND_TOOLKIT_HOME": "", "ASCEND_CANN_PACKAGE_PATH": ""}
    p = run_cli("eval", str(ADD), "--backend", "ascend", env=env)
    assert p.returncode == 2
    assert "CANN" in p.stderr and "cannot run here" in p.stderr and "bisheng" in p.stderr
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


def bare_kernel(tmp_path: Path) -> Path:
    """add_custom.cpp alone in a folder: no host.py, no reference.py."""
    d = tmp_path / "bare"
    d.mkdir()
    k = d / "add_custom.cpp"
    k.write_text((ADD / "add_custom.cpp").read_text())
    return k


def test_a_kernel_alone_that_compiles_is_compiled_and_exits_zero(tmp_path, capsys):
    k = bare_kernel(tmp_path)
    code = main(["eval", str(k), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert code == 0 and r["status"] == "compiled"
    assert not [d for d in r["diagnostics"] if d["severity"] == "error"]
    assert main(["eval", str(k)]) == 0
    assert "add_custom.cpp on 910B2 (sim): compiled" in capsys.readouterr().out


def test_a_kernel_alone_with_a_compile_error_exits_one(tmp_path, capsys):
    k = bare_kernel(tmp_path)
    k.write_text(k.read_text().replace("AscendC::Add(zLocal, xLocal, yLocal, tileLength);",
                                       "AscendC::Add(zLocal, xLocal, yLocal, tileLength, 7, 8);"))
    code = main(["eval", str(k), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert code == 1 and r["status"] == "compile_error"
    assert any(d["severity"] == "error" and d["code"] == "compile-error" for d in r["diagnostics"])


@pytest.mark.parametrize("argv", [["eval", "{missing}"], ["optimize", "{missing}"], ["bench", "{missing}"],
                                  ["run", "{missing}.asc"], ["calibrate", "{missing}.csv"], ["advise", "{missing}"],
                                  ["eval", "{empty}"], ["eval", "--trials", "0", "{task}"],
                                  ["memory", "stats", "--db", "{missing}"], ["eval", "--no-such-flag", "{task}"]])
def test_a_usage_error_exits_two_in_every_command(tmp_path, argv):
    (tmp_path / "empty").mkdir()
    where = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty"), "task": str(ADD)}
    p = run_cli(*[a.format(**where) for a in argv], env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() and "Traceback" not in p.stderr and p.stdout == ""


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path):
    k = bare_kernel(tmp_path)
    for argv in (["eval", str(k), "--json"], ["eval", str(k)], ["--help"]):
        proc = subprocess.Popen([sys.executable, "-m", "sage_npu.cli", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # `| head` that has read enough: every write now fails with EPIPE
        err = proc.stderr.read()
        code = proc.wait(timeout=300)
        assert "Traceback" not in err and "BrokenPipeError" not in err, err
        assert code in (0, 141), (argv, code)


def test_calibrate_names_the_missing_task(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("task,measured_us\nadd_custom,1.5\nnot_a_task,2.0\n")
    (tmp_path / "add_custom").mkdir()
    p = run_cli("calibrate", str(csv))
    assert p.returncode == 2
    assert "m.csv:3: task 'not_a_task': no such task folder" in p.stderr, p.stderr
    p = run_cli("calibrate", str(tmp_path / "gone.csv"))
    assert p.returncode == 2 and "gone.csv: no such measurements file" in p.stderr


def test_profile_explains_the_bottleneck(capsys):
    from sage_npu.npu_eval.cost_model import bottleneck_advice

    code = main(["eval", str(ADD), "--trials", "1", "--profile"])
    out = capsys.readouterr().out
    assert code == 0 and "bottleneck: MTE2" in out  # add_custom's copies in, with their pipe head
    assert bottleneck_advice("MTE2") in " ".join(out.split()) and "docs/profile.md" in out
    assert "where the time goes" in out and "MTE2 pipe head" in out
    assert "advice (sage-npu advise)" in out and "tileNum 8 -> 1" in out  # the advisor's findings, ranked


def test_advise_prints_the_ranked_findings_and_their_json(capsys):
    from sage_npu.npu_eval.report import Advice

    assert main(["advise", str(ADD), "--trials", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    # add_custom: tiles too short (tileNum on host.py line 11) first, then the copies off 512-byte
    # boundaries (the kernel's copy), then the blocks (block_dim, line 10)
    assert out[0].startswith(f"{ADD / 'host.py'}:11:1: info: ") and out[0].endswith("[perf-small-tiles]")
    assert out[1].startswith(f"{ADD / 'add_custom.cpp'}:") and out[1].endswith("[perf-unaligned-gm]")
    assert out[2].startswith(f"{ADD / 'host.py'}:10:1: hint: ") and out[2].endswith("[perf-few-cores]")
    assert out[-1].startswith("add_custom.cpp: ") and "top: tileNum 8 -> 1" in out[-1] and "(CPU model)" in out[-1]
    assert main(["advise", str(ADD), "--trials", "1", "--json"]) == 0
    advice = Advice.model_validate_json(capsys.readouterr().out)
    savings = [f.saving_us for f in advice.findings]
    assert advice.status == "correct" and len(savings) >= 2 and savings == sorted(savings, reverse=True)


def test_the_cli_starts_without_the_agent_memory_server_or_numpy():
    # Each command imports what it runs: building the parser must not load the heavy parts.
    code = ("import sys, sage_npu.cli as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'torch', 'lancedb', 'pygls', "
            "'openai') or m.startswith(('sage_npu.npu_eval.evaluate', 'sage_npu.npu_eval.program', "
            "'sage_npu.agent.optimize', 'sage_npu.memory.store', 'sage_npu.server.server', 'sage_npu.settings'))))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"


@pytest.mark.parametrize("argv", [["--json", "eval", str(ADD), "--trials", "1"],
                                  ["--chip=910B4", "--json", "eval", str(ADD), "--trials", "1"],
                                  ["eval", "--json", str(ADD), "--trials", "1"]])
def test_global_flags_go_before_or_after_the_subcommand(argv, capsys):
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "correct"


def test_an_unknown_flag_before_the_subcommand_is_named(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--db", "/tmp/x", "--bogus", "eval", str(ADD)])
    assert e.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_sigterm_mid_evaluation_removes_the_runs_folders(tmp_path):
    """A terminated CLI (a closed terminal, `timeout`) leaves no temporary folder behind."""
    import signal
    import time

    task = Path(__file__).resolve().parent / "hostile" / "endless_loop"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    p = subprocess.Popen([sys.executable, "-c", "import sys; from sage_npu.cli import main; sys.exit(main())",
                          "eval", str(task), "--trials", "1"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(tmp.glob("sage-eval-*")):
        time.sleep(0.05)
    assert any(tmp.glob("sage-eval-*")), "the evaluation never started"
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert not list(tmp.glob("sage-*")), list(tmp.iterdir())
