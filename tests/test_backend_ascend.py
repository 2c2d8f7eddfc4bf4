"""The device backend (`--backend ascend`, `auto`, `sage-npu doctor`) against the fake CANN
install of tests/fake_cann.py: the whole path from `sage-npu eval` to a Report, each missing
part as one clear line, and auto falling back to the emulator. These prove the plumbing (the
flags the tools accept, the files they write, the parsing, the report), not the device."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sage_npu.cli import main
from sage_npu.npu_eval.backends import ascend_env, msprof
from sage_npu.npu_eval.backends.ascend import compile_diagnostics, device_faults, sanitizer_faults
from tests.fake_cann import FakeCann, make_fake_cann

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"
PROFILE = {"duration_us": 12.5, "block_dim": 8, "spelling": "8.0",
           "blocks": [{"aiv_time(us)": 10.0, "aiv_total_cycles": 18000, "aiv_vec_ratio": 0.21, "aiv_scalar_ratio": 0.05,
                       "aiv_mte2_ratio": 0.72, "aiv_mte3_ratio": 0.30},
                      {"aiv_time(us)": 11.5, "aiv_total_cycles": 20700, "aiv_vec_ratio": 0.2, "aiv_scalar_ratio": 0.04,
                       "aiv_mte2_ratio": 0.81, "aiv_mte3_ratio": 0.33}]}


def _no_cann(monkeypatch) -> None:
    for var in ascend_env.HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    if any(p.exists() for p in ascend_env.DEFAULT_HOMES) or shutil.which("bisheng"):
        pytest.skip("this machine has a CANN install")


@pytest.fixture
def fake(tmp_path, monkeypatch) -> FakeCann:
    cann = make_fake_cann(tmp_path / "cann", profile=PROFILE)
    for var in ascend_env.HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    for k, v in cann.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("SAGE_NPU_EVAL__CACHE_DIR", str(tmp_path / "cache"))
    return cann


def _task(tmp_path: Path) -> Path:
    d = tmp_path / "add_custom"
    shutil.copytree(ADD, d, ignore=shutil.ignore_patterns("build", ".sage", "__pycache__"))
    return d


def _eval_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["eval", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


# ---- without CANN ----

def test_ascend_without_cann_exits_two_naming_what_is_missing(monkeypatch, capsys):
    _no_cann(monkeypatch)
    assert main(["eval", str(ADD), "--backend", "ascend"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CANN: not installed" in err[0] and "ASCEND_HOME_PATH" in err[0]
    assert "bisheng" in err[0] and "sage-npu doctor" in err[0]


def test_auto_without_cann_uses_the_emulator_silently(monkeypatch, capsys):
    _no_cann(monkeypatch)
    code, report = _eval_json(capsys, str(ADD), "--backend", "auto", "--trials", "1")
    assert code == 0 and report["backend"] == "sim" and report["timing"]["estimated"] is True
    assert capsys.readouterr().err == ""


def test_doctor_without_cann_lists_each_part(monkeypatch, capsys):
    _no_cann(monkeypatch)
    assert main(["doctor"]) == 1
    lines = capsys.readouterr().out.splitlines()
    names = [ln.split()[0] for ln in lines]
    assert names[:6] == ["CANN", "bisheng", "msprof", "mssanitizer", "npu-smi", "NPU"]
    assert lines[0].split()[1] == "missing" and "not installed" in lines[0]
    assert lines[-1].startswith("--backend auto") and "sim (the CPU emulator)" in lines[-1]


# ---- detection ----

def test_npu_smi_table_gives_soc_arch_and_chip(fake):
    text = subprocess.run([str(fake.driver_bin / "npu-smi"), "info"], capture_output=True, text=True).stdout
    assert ascend_env.parse_npu_smi(text) == [(0, "Ascend910B2", "OK")]
    assert ascend_env.soc_arch("Ascend910B2") == "dav-2201" and ascend_env.soc_chip("Ascend910B2") == "910B2"
    assert ascend_env.soc_arch("Ascend310P3") == "dav-2002" and ascend_env.soc_arch("Ascend999") is None


def test_doctor_with_cann_finds_every_part(fake, capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert f"CANN          found    {fake.home} 8.0.0 (from ASCEND_HOME_PATH)" in out
    assert "Ascend910B2 (NPU 0 of 1): --npu-arch=dav-2201, chip profile 910B2" in out
    assert "--backend auto uses ascend (the NPU)" in out


def test_an_unhealthy_npu_is_missing(fake, monkeypatch):
    fake.configure(health="Alarm")
    setup = ascend_env.detect()
    assert setup.soc is None and "health Alarm" in (setup.reason() or "")


# ---- the fake tools refuse what the documentation does not list ----

def test_fake_tools_reject_undocumented_flags(fake):
    bisheng = subprocess.run([str(fake.home / "bin" / "bisheng"), "--npu-arch=dav-2201", "--fast", "x.cpp"],
                             capture_output=True, text=True)
    assert bisheng.returncode == 1 and "unknown argument: '--fast'" in bisheng.stderr
    prof = subprocess.run([str(fake.home / "tools/profiler/bin/msprof"), "op", "--aic-metrics=Everything", "true"],
                          capture_output=True, text=True)
    assert prof.returncode == 1 and "invalid --aic-metrics" in prof.stderr


# ---- the whole path on the fake device ----

def test_eval_on_the_device_is_a_measured_report(fake, capsys):
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "2")
    assert code == 0, r
    assert r["backend"] == "ascend" and r["status"] == "correct" and r["correctness"]["passed"] == 2
    t = r["timing"]
    assert t["estimated"] is False and t["estimated_us"] == 12.5 and t["launch_overhead_us"] == 0.0
    assert t["pipes"] == {"MTE2": 0.81, "MTE3": 0.33, "S": 0.04, "V": 0.2}  # the slowest block's
    assert t["bottleneck"] == "MTE2"
    # trial 0's output: the fake device's record of the ACL calls, under msprof op
    run = json.loads(next(ln for ln in r["stdout"].splitlines() if ln.startswith("FAKE-ACL "))[len("FAKE-ACL "):])
    assert run["calls"][:3] == ["aclInit", "aclrtSetDevice", "aclrtCreateStream"]
    assert "launch<<<8>>>" in run["calls"] and run["calls"][-1] == "aclFinalize"
    # the launch ran in the sandbox: its marker in the environment, HOME inside the trial's folder
    assert run["sandbox_marker"] and run["home"].endswith("/t0/home")
    assert "Profiling results saved in" in r["stdout"]


def test_auto_with_cann_uses_the_device(fake, capsys):
    code, r = _eval_json(capsys, str(ADD), "--trials", "1")
    assert code == 0 and r["backend"] == "ascend" and r["timing"]["estimated"] is False


def test_both_header_spellings_read_the_same(fake, capsys):
    fake.configure(profile={**PROFILE, "spelling": "8.2"})
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "1")
    assert code == 0 and r["timing"]["estimated_us"] == 12.5 and r["timing"]["bottleneck"] == "MTE2"


def test_profile_says_measured(fake, capsys):
    assert main(["eval", str(ADD), "--backend", "ascend", "--trials", "1", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "measured 12.50 us device time (msprof op on the NPU)" in out
    # the only model figures are the advisor's savings (from the emulator's trace of the kernel)
    model = [ln for ln in out.splitlines() if "CPU model" in ln]
    assert model and all(re.search(r"^\s*\S+:\d+\s+est\. .*\[perf-[a-z-]+\]$", ln) for ln in model), model


def test_compile_error_is_at_its_line(fake, tmp_path, capsys):
    task = _task(tmp_path)
    kernel = task / "add_custom.cpp"
    lines = kernel.read_text().splitlines()
    lines.insert(9, "    #error tileLength must be a multiple of 16")
    kernel.write_text("\n".join(lines) + "\n")
    code, r = _eval_json(capsys, str(task), "--backend", "ascend", "--trials", "1")
    assert code == 1 and r["status"] == "compile_error" and r["backend"] == "ascend"
    d = r["diagnostics"][0]
    assert (d["file"], d["line"], d["column"]) == (str(kernel), 10, 5)
    assert d["message"] == "tileLength must be a multiple of 16" and d["code"] == "compile-error"


def test_device_fault_is_a_runtime_error(fake, capsys):
    fake.configure(device="fault")
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "1")
    assert code == 1 and r["status"] == "runtime_error" and r["timing"] is None
    d = next(d for d in r["diagnostics"] if d["severity"] == "error")
    assert d["file"].endswith("add_custom.cpp") and "EZ9999" in d["message"] and "vector core exception" in d["message"]


def test_wrong_output_on_the_device_is_a_mismatch(fake, capsys):
    fake.configure(device="wrong")
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "1")
    assert code == 1 and r["status"] == "mismatch" and r["correctness"]["first_mismatch"] is not None


def test_sanitize_maps_memcheck_to_lines(fake, capsys):
    fake.configure(sanitizer=["====== ERROR: illegel read of size 100", "====== at 0x124040017f9c on GM",
                              "====== code in add_custom.cpp:52"])
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "1", "--sanitize")
    assert code == 1 and r["status"] == "runtime_error"
    d = next(d for d in r["diagnostics"] if d["code"] == "gm-out-of-bounds")
    assert d["file"].endswith("add_custom.cpp") and d["line"] == 52 and "illegel read of size 100 on GM" in d["message"]


# ---- the parsers alone ----

def test_opprof_folder_in_either_spelling(tmp_path):
    for spelling, dur in (("Task Duration(us)", "7.25"), ("Task Duration(μs)", "7.25")):
        d = tmp_path / spelling / "OPPROF_20261203203000_ABCDEF"
        d.mkdir(parents=True)
        (d / "OpBasicInfo.csv").write_text(f"Op Name,Op Type,{spelling},Block Dim,Device ID,PID,Current Freq\n"
                                           f"add_custom,vector,{dur},40,0,99,1800\n", encoding="utf-8")
        m = msprof.read_opprof(msprof.latest_opprof(d.parent), "add_custom")
        assert (m.duration_us, m.block_dim, m.pipes, m.freq_mhz) == (7.25, 40, {}, 1800.0)


def test_simulator_code_lines_become_hot_lines(tmp_path):
    core = tmp_path / "OPPROF_1_X" / "simulator" / "core0.veccore0"
    core.mkdir(parents=True)
    (core / "core0.veccore0_code_exe.csv").write_text(
        "code,call_count,cycles,running_time(us)\n/k/add.cpp:40,8,1800,1.0\n/k/add.cpp:52,8,5400,3.0\n")
    hot = msprof.code_lines(tmp_path / "OPPROF_1_X")
    assert [(h.file, h.line, h.us) for h in hot] == [("/k/add.cpp", 52, 3.0), ("/k/add.cpp", 40, 1.0)]


def test_parsers_of_compiler_fault_and_sanitizer_text(tmp_path):
    k = tmp_path / "k.cpp"
    k.write_text("a\nb\nc\n")
    diags = compile_diagnostics(f"{k}:2:3: error: use of undeclared identifier 'x'\n/cann/include/a.h:9:1: error: "
                                "boom\n", {str(k)}, (str(k), 1))
    assert [(d.line, d.column, d.message) for d in diags] == [(2, 3, "use of undeclared identifier 'x'"),
                                                              (1, 1, "boom (in a.h:9)")]
    assert device_faults("all fine\n", str(k), 1) == []
    assert device_faults("... retCode=0x31 ...", str(k), 3)[0].line == 3
    race = sanitizer_faults("====== WARNNING: out of bounds of size 256\n====== at 0x1 on GM when writing data\n"
                            "====== code in k.cpp:2\n", {str(k)}, str(k))
    assert [(f.code, f.file, f.line) for f in race] == [("gm-race", str(k), 2)]


# ---- calibration from the device ----

def test_calibrate_from_device_fits_to_msprof_times(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SAGE_NPU_EVAL__CACHE_DIR")  # the emulator's traces: its usual (warm) build cache
    monkeypatch.setenv("SAGE_NPU_EVAL__PROFILE_DIR", str(tmp_path / "profiles"))
    suite = tmp_path / "suite"
    suite.mkdir()
    _task(suite)
    assert main(["calibrate", "--from-device", str(suite), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(t["task"], t["measured_us"]) for t in out["tasks"]] == [("add_custom", 12.5)]


def test_calibrate_reads_an_msprof_output_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SAGE_NPU_EVAL__PROFILE_DIR", str(tmp_path / "profiles"))
    prof = tmp_path / "add_prof" / "OPPROF_20261203203000_ABCDEF"
    prof.mkdir(parents=True)
    (prof / "OpBasicInfo.csv").write_text("Op Name,Op Type,Task Duration(us),Block Dim\nadd_custom,vector,9.5,8\n")
    (tmp_path / "m.csv").write_text(f"task,measured_us\n{ADD},add_prof\n")
    assert main(["calibrate", str(tmp_path / "m.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"][0]["measured_us"] == 9.5


def test_doctor_run_prints_estimate_beside_measurement(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SAGE_NPU_EVAL__CACHE_DIR")  # the emulator's usual (warm) build cache
    suite = tmp_path / "suite"
    suite.mkdir()
    _task(suite)
    assert main(["doctor", "--run", str(suite)]) == 0
    head, row = capsys.readouterr().out.splitlines()
    assert "est. (CPU model)" in head and "measured" in head
    cells = row.split()
    assert cells[0] == "add_custom" and cells[1] == "correct" and cells[3] == "correct" and cells[4] == "12.50"


def test_profile_maps_the_simulators_lines_to_hot_lines(fake, capsys):
    kernel = str(ADD / "add_custom.cpp")
    fake.configure(profile={**PROFILE, "code_lines": [
        {"code": "add_custom.cpp:40", "call_count": 8, "cycles": 1800, "running_time(us)": 1.0},
        {"code": f"{kernel}:52", "call_count": 8, "cycles": 5400, "running_time(us)": 3.0},
        {"code": "/cann/include/kernel_operator.h:10", "call_count": 1, "cycles": 9000, "running_time(us)": 5.0}]})
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "1", "--profile")
    assert code == 0 and r["timing"]["estimated"] is False
    assert [(h["file"], h["line"], h["us"]) for h in r["timing"]["hot_lines"]] == [(kernel, 52, 3.0), (kernel, 40, 1.0)]


def test_profile_without_the_simulator_says_so(fake, capsys):
    shutil.rmtree(fake.home / "tools" / "simulator")
    code, r = _eval_json(capsys, str(ADD), "--backend", "ascend", "--trials", "1", "--profile")
    assert code == 0 and r["timing"]["hot_lines"] == []
    assert any("no per-line device times" in d["message"] for d in r["diagnostics"])


# ---- confinement of the device run ----

@pytest.mark.skipif(os.geteuid() != 0, reason="only root drops to the unprivileged user")
def test_the_sandbox_user_keeps_only_the_groups_asked_for(tmp_path):
    from sage_npu.npu_eval.sandbox import SandboxLimits, prepare_scratch, run_sandboxed

    prepare_scratch(tmp_path)
    tmp_path.chmod(0o777)
    plain = run_sandboxed(["/usr/bin/id", "-G"], tmp_path, SandboxLimits(seccomp=False))
    driver = run_sandboxed(["/usr/bin/id", "-G"], tmp_path, SandboxLimits(seccomp=False, groups=(4242,)))
    assert "4242" not in plain.stdout.split() and "4242" in driver.stdout.split()


# ---- the torch_npu baseline (Fast_1.0) ----

FAKE_TORCH_NPU = '''\
"""A fake torch_npu: `.npu()` keeps tensors on the CPU; NPU events are wall-clock stamps."""
import time
import types

import torch


class _Event:
    def __init__(self, enable_timing=False):
        self.t = 0.0

    def record(self):
        self.t = time.perf_counter()

    def elapsed_time(self, other):  # milliseconds, as torch.npu.Event says
        return (other.t - self.t) * 1000.0


torch.npu = types.SimpleNamespace(Event=_Event, synchronize=lambda: None)
torch.Tensor.npu = lambda self: self
torch.nn.Module.npu = lambda self: self
'''


def test_the_torch_npu_baseline_times_the_reference_in_the_sandbox(fake, tmp_path, monkeypatch):
    from sage_npu.agent.bench import TaskRow, fast_1_0
    from sage_npu.npu_eval.backends.torch_npu_baseline import reference_us
    from sage_npu.npu_eval.settings import EvalSettings
    from sage_npu.npu_eval.task import load_task

    pkg = tmp_path / "site" / "torch_npu"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(FAKE_TORCH_NPU)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    us, why = reference_us(load_task(ADD), EvalSettings(), scratch)
    assert why == "" and us is not None and 0 < us < 10_000
    rows = [TaskRow("a", "a", "improved", correct=True, best_us=us / 2, torch_us=us),
            TaskRow("b", "b", "improved", correct=True, best_us=us * 2, torch_us=us)]
    assert fast_1_0(rows) == 0.5 and fast_1_0([TaskRow("c", "c", "improved", correct=True, best_us=1.0)]) is None


def test_bench_on_the_device_reports_fast_1_0(fake, tmp_path, capsys, monkeypatch):
    pkg = tmp_path / "site" / "torch_npu"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(FAKE_TORCH_NPU)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    monkeypatch.setenv("SAGE_NPU_MEMORY__DB", str(tmp_path / "memory"))
    suite = tmp_path / "suite"
    suite.mkdir()
    _task(suite)
    assert main(["bench", str(suite), "--turns", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"] == "ascend" and out["timing_label"] == "measured"
    row = out["tasks"][0]
    assert row["correct"] and row["torch_us"] is not None and row["seed_us"] == 12.5
    assert out["metrics"]["fast_1_0"] in (0.0, 1.0)


# ---- whole programs on the device (sage-npu run --backend ascend) ----

ASC_PROGRAM = """\
#include "acl/acl.h"
#include "kernel_operator.h"
__global__ __aicore__ void hello() {}
int main(int argc, char** argv)
{
    aclInit(nullptr);
    aclrtStream stream = nullptr;
    hello<<<1, nullptr, stream>>>();
    aclrtSynchronizeStream(stream);
    return 0;
}
"""


def test_run_builds_an_asc_program_with_bisheng_and_runs_it_on_the_device(fake, tmp_path, capfd, monkeypatch):
    src = tmp_path / "hello.asc"
    src.write_text(ASC_PROGRAM)
    monkeypatch.chdir(tmp_path)
    assert main(["--backend", "ascend", "run", str(src), "--json", "--", "8"]) == 0
    r = json.loads(capfd.readouterr().out)
    assert r["backend"] == "ascend" and r["status"] == "ok" and "ran with 1 argument" in r["stdout"]
    assert (tmp_path / "output.txt").read_text() == "written on the device\n"  # mirrored back out


def test_run_on_the_device_reports_compile_errors_and_faults(fake, tmp_path, capfd, monkeypatch):
    src = tmp_path / "hello.asc"
    src.write_text(ASC_PROGRAM.replace("int main(", "#error no main today\nint main("))
    monkeypatch.chdir(tmp_path)
    assert main(["--backend", "ascend", "run", str(src), "--json"]) == 1
    r = json.loads(capfd.readouterr().out)
    assert r["status"] == "compile_error" and r["diagnostics"][0]["line"] == 4
    src.write_text(ASC_PROGRAM)
    fake.configure(device="fault")
    assert main(["--backend", "ascend", "run", str(src), "--json"]) == 1
    r = json.loads(capfd.readouterr().out)
    assert r["status"] == "faulted" and "EZ9999" in r["diagnostics"][0]["message"] and r["diagnostics"][0]["line"] == 4
