"""Confinement of everything a task runs (README "Security"): hostile reference.py, host.py and
kernels, generated from the add example, must leave nothing outside their scratch directory, no
process behind, and no trace in the interpreter state the next task sees.

With SAGE_REQUIRE_CONFINEMENT=1 (as .ci/run sets), a test whose layer this machine cannot
provide (not root, no namespaces, no seccomp table) fails instead of skipping: CI must prove
the confinement, not quietly skip it."""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from sage_npu.npu_eval import sandbox, scratch, syscall_numbers
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.launch_plan import PlanAnswer, PlanRequest
from sage_npu.npu_eval.settings import EvalSettings

REPO = Path(__file__).resolve().parents[1]
ADD = REPO / "examples" / "tasks" / "add_custom"
SANDBOX_H = REPO / "npu_eval" / "sim" / "include" / "sage_sim" / "sandbox.h"
TOKEN = secrets.token_hex(8)  # in every file name a hostile task writes, so leftovers are ours


def require(ok: bool, why: str) -> None:
    """Skip a test this machine cannot run, or fail it when CI requires confinement."""
    if ok:
        return
    if os.environ.get("SAGE_REQUIRE_CONFINEMENT") == "1":
        pytest.fail(f"confinement required (SAGE_REQUIRE_CONFINEMENT=1) but unavailable: {why}")
    pytest.skip(why)


def require_full_confinement() -> None:
    require(os.geteuid() == 0, "not root: no unprivileged user to drop to, no namespaces")
    reason = sandbox.namespaces_unavailable()
    require(reason is None, f"namespaces unavailable: {reason}")
    require(platform.machine() in ("x86_64", "aarch64"), f"no seccomp table for {platform.machine()}")


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    e = Evaluator(EvalSettings(trials=1, plan_timeout_s=20, host_allow_list=False,
                               cache_dir=tmp_path_factory.getbasetemp() / "bc"))
    yield e
    e.close()


def make_task(tmp_path: Path, name: str, *, reference: str | None = None, host: str | None = None,
              kernel_extra: str = "") -> Path:
    d = tmp_path / name
    shutil.copytree(ADD, d)
    if reference is not None:
        (d / "reference.py").write_text(textwrap.dedent(reference))
    if host is not None:
        (d / "host.py").write_text(textwrap.dedent(host))
    if kernel_extra:
        k = d / "add_custom.cpp"
        k.write_text(textwrap.dedent(kernel_extra) + k.read_text())
    return d


def outside_targets(task: Path, who: str) -> list[Path]:
    """Where a hostile task tries to write outside its scratch directory."""
    return [task / f"{who}-wrote-{TOKEN}.txt", Path.home() / f"sage-{who}-{TOKEN}.txt",
            Path(tempfile.gettempdir()) / f"sage-{who}-{TOKEN}.txt", Path("/dev/shm") / f"sage-{who}-{TOKEN}.txt"]


WRITER = """
def _write_everywhere(paths):
    for p in paths:
        try:
            with open(p, "w") as f:
                f.write("left behind")
            print("wrote", p)
        except OSError as e:
            print("refused", p, e)
"""


def _status(ev: Evaluator, task: Path) -> str:
    return ev.evaluate(task).report.status


# ---- reference.py and host.py ----

def test_reference_writes_nowhere_outside_its_scratch(ev, tmp_path):
    require_full_confinement()
    task = tmp_path / "ref_writes"
    targets = outside_targets(task, "reference")
    make_task(tmp_path, "ref_writes", reference=WRITER + f"""
import torch

_write_everywhere({[str(p) for p in targets]!r})


class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def get_inputs():
    return [torch.randn(8 * 2048, dtype=torch.float16), torch.randn(8 * 2048, dtype=torch.float16)]
""")
    assert _status(ev, task) == "correct"
    assert [p for p in targets if p.exists()] == []


def test_host_writes_nowhere_outside_its_scratch(ev, tmp_path):
    require_full_confinement()
    task = tmp_path / "host_writes"
    targets = outside_targets(task, "host")
    make_task(tmp_path, "host_writes", host=WRITER + f"""
import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x, y):
    _write_everywhere({[str(p) for p in targets]!r})
    z = torch.empty_like(x)
    return Launch(kernel="add_custom", block_dim=8, args=[x, y, z, Tiling(totalLength=x.numel(), tileNum=8)],
                  outputs=[z])
""")
    assert _status(ev, task) == "correct"
    assert [p for p in targets if p.exists()] == []


DAEMON_REFERENCE = """
import subprocess

import torch

# Leaves the session and outlives this process, unless something ends it.
subprocess.Popen(["setsid", "sh", "-c", "sleep 300; : daemon-TOKEN"], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def get_inputs():
    return [torch.randn(8 * 2048, dtype=torch.float16), torch.randn(8 * 2048, dtype=torch.float16)]
"""


def _processes_with(needle: str) -> list[int]:
    found = []
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                with open(f"/proc/{e.name}/cmdline", "rb") as f:
                    if needle.encode() in f.read():
                        found.append(int(e.name))
            except OSError:
                continue
    return found


def test_a_daemon_started_by_reference_py_ends_with_the_plan(ev, tmp_path):
    require(os.geteuid() == 0 or sandbox.namespaces_unavailable() is None, "no way to contain a daemon here")
    task = make_task(tmp_path, "daemon", reference=DAEMON_REFERENCE.replace("TOKEN", TOKEN))
    assert _status(ev, task) == "correct"
    deadline = time.monotonic() + 5
    while _processes_with(f"daemon-{TOKEN}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(f"daemon-{TOKEN}") == []


def test_without_namespaces_a_daemon_of_reference_py_is_swept(tmp_path):
    # As on a platform that refuses namespaces: the zygote falls back to its session and the sweep.
    task = make_task(tmp_path, "daemon_nons", reference=DAEMON_REFERENCE.replace("TOKEN", f"nons-{TOKEN}"))
    out = Path(tempfile.mkdtemp(prefix="sage-confine-test-"))
    out.chmod(0o711)
    req = PlanRequest(task_root=str(task), reference=str(task / "reference.py"), host=str(task / "host.py"),
                      out_dir=str(out / "plan"), seed=0, trials=1, timeout_s=30)
    code = ("import sage_npu.npu_eval.sandbox as s; s._ns_unavailable = 'refused for the test'; "
            "from sage_npu.npu_eval import zygote; zygote.main()")
    try:
        p = subprocess.run([sys.executable, "-c", code], input=json.dumps({"plan": req.model_dump()}) + "\n",
                           capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    answer = PlanAnswer.model_validate_json(p.stdout.splitlines()[-1])
    assert answer.ok is not None, answer
    assert answer.notes == ["no PID, network or mount namespace (refused for the test)"]
    assert _processes_with(f"daemon-nons-{TOKEN}") == []


def test_monkeypatched_torch_does_not_reach_the_next_task(ev, tmp_path):
    poison = make_task(tmp_path, "poison", reference="""
import sys

import torch

torch.Tensor.__add__ = lambda a, b: torch.sub(a, b)  # every later x + y is wrong...
sys.modules["sage_npu.npu_eval.compare"] = None        # ...and so would be the comparison


class Model(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)


def get_inputs():
    return [torch.randn(8 * 2048, dtype=torch.float16), torch.randn(8 * 2048, dtype=torch.float16)]
""")
    assert _status(ev, poison) == "correct"
    assert _status(ev, ADD) == "correct"  # the same Evaluator, the next task: untouched torch


def test_reference_timeout_is_reported_on_reference_py(tmp_path):
    task = make_task(tmp_path, "slow_ref", reference="""
import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        while True:  # never returns
            pass


def get_inputs():
    return [torch.randn(8 * 2048, dtype=torch.float16), torch.randn(8 * 2048, dtype=torch.float16)]
""")
    with Evaluator(EvalSettings(trials=1, plan_timeout_s=2, cache_dir=tmp_path / "bc")) as e:
        r = e.evaluate(task).report
    assert r.status == "harness_error"
    d = next(d for d in r.diagnostics if d.severity == "error")
    lines = (task / "reference.py").read_text().splitlines()
    loop = [i for i, ln in enumerate(lines, 1) if "while True" in ln or ln.strip() == "pass"]
    assert (d.code, Path(d.file).name) == ("reference-error", "reference.py") and d.line in loop, d
    assert "did not finish within 2 s" in d.message


def test_reference_that_blocks_the_timer_is_still_stopped(tmp_path):
    task = make_task(tmp_path, "deaf_ref", reference="""
import signal

import torch

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # the runner's timer cannot fire
while True:
    pass
""")
    with Evaluator(EvalSettings(trials=1, plan_timeout_s=1, cache_dir=tmp_path / "bc")) as e:
        e.evaluate(ADD)  # the zygote is up: what follows times the plan alone
        t0 = time.monotonic()
        r = e.evaluate(task).report
    assert time.monotonic() - t0 < 15
    assert r.status == "harness_error"
    d = next(d for d in r.diagnostics if d.severity == "error")
    assert "did not finish within 1 s" in d.message, d


# ---- kernels ----

CTOR = r"""
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>
// Runs before main, so before the harness's own filter around the kernel call.
__attribute__((constructor)) static void sage_hostile_ctor()
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    std::printf("ctor socket: %s\n", s < 0 ? std::strerror(errno) : "opened");
    std::printf("ctor uid: %d\n", int(getuid()));
    for (const char* p : {"/tmp/sage-ctor-TOKEN.txt", "/dev/shm/sage-ctor-TOKEN.txt"}) {
        FILE* f = std::fopen(p, "w");
        std::printf("ctor wrote %s: %s\n", p, f ? "yes" : std::strerror(errno));
        if (f) std::fclose(f);
    }
}
""".replace("TOKEN", TOKEN)


def test_a_global_constructor_runs_confined_and_writes_nowhere_outside(ev, tmp_path):
    require_full_confinement()
    task = make_task(tmp_path, "ctor", kernel_extra=CTOR)
    r = ev.evaluate(task).report
    assert r.status == "correct", r.diagnostics
    assert "ctor socket: Operation not permitted" in r.stdout  # the filter was there before main
    assert f"ctor uid: {sandbox.UNPRIVILEGED_UID}" in r.stdout
    assert not Path(f"/tmp/sage-ctor-{TOKEN}.txt").exists()
    assert not Path(f"/dev/shm/sage-ctor-{TOKEN}.txt").exists()


def test_kernel_writes_to_tmp_and_dev_shm_stay_in_the_scratch(tmp_path):
    require_full_confinement()
    d = Path(tempfile.mkdtemp(prefix="sage-confine-test-"))
    try:
        d.chmod(0o711)
        sandbox.prepare_scratch(d)
        script = (f"for p in /tmp /dev/shm $HOME {Path.home()}; do echo x > $p/sage-kernel-{TOKEN}.txt "
                  f"&& echo wrote $p; done; echo x > /etc/sage-kernel-{TOKEN}.txt || echo refused /etc")
        res = sandbox.run_sandboxed(["/bin/sh", "-c", script], d, sandbox.SandboxLimits(timeout_s=10))
        assert "mount-ns" in res.protections and "seccomp-exec" in res.protections, res
        assert "wrote /tmp" in res.stdout and "wrote /dev/shm" in res.stdout and "refused /etc" in res.stdout
        for p in (Path("/tmp"), Path("/dev/shm"), Path.home(), Path("/etc")):
            assert not (p / f"sage-kernel-{TOKEN}.txt").exists(), p
        assert (d / "tmp" / f"sage-kernel-{TOKEN}.txt").exists()  # where /tmp really was
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_pre_exec_filter_names_are_the_harness_filters():
    """The Python table (syscall_numbers.py) is a subset of sandbox.h's list: one list, two filters."""
    header = set(re.findall(r"__NR_(\w+),", SANDBOX_H.read_text()))
    for table in (syscall_numbers.X86_64, syscall_numbers.AARCH64):
        assert set(table) <= header
        assert not {"execve", "clone", "clone3", "fork"} & set(table)  # the harness must still start


# ---- temporary folders ----

def test_an_evaluation_leaves_no_folder_behind(tmp_path):
    # The old plan worker left an empty sage-plan-home-* per Evaluator, hundreds over time.
    root = tmp_path / "tmp"
    root.mkdir()
    with Evaluator(EvalSettings(trials=1, cache_dir=tmp_path / "bc"), scratch_root=root) as e:
        assert e.evaluate(ADD).report.status == "correct"
    assert list(root.iterdir()) == []


def test_folders_of_dead_owners_are_swept(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"sage-eval-{dead.pid}-abc"
    mine = scratch.make("build", tmp_path)
    stale.mkdir()
    (stale / "run").mkdir()
    assert scratch.sweep_stale(tmp_path) == 1
    assert not stale.exists() and mine.exists()


def test_a_killed_evaluation_leaves_nothing_after_the_next_start(tmp_path):
    root = tmp_path / "tmp"
    root.mkdir()
    code = ("import sys; from pathlib import Path; from sage_npu.npu_eval.evaluate import Evaluator; "
            "Evaluator(scratch_root=Path(sys.argv[1])).evaluate(sys.argv[2])")
    p = subprocess.Popen([sys.executable, "-c", code, str(root), str(ADD)])
    deadline = time.monotonic() + 60
    while not list(root.glob("sage-eval-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.kill()
    p.wait()
    assert list(root.glob("sage-eval-*")), "the evaluation never started"
    Evaluator(scratch_root=root).close()  # the next start sweeps what the killed one left
    assert list(root.iterdir()) == []
