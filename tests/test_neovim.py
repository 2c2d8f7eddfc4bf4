"""End to end in a real editor: headless Neovim (Debian's 0.7) runs `sage-npu serve` through its
built-in LSP client, the kernel is broken and repaired in the buffer and written with :write,
and what Neovim then shows (vim.diagnostic, code lenses) is checked. One Neovim session per
module (tests/nvim/save_cycle.lua); the tests below read different parts of its record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ADD = REPO / "examples" / "tasks" / "add_custom"
SCRIPT = REPO / "tests" / "nvim" / "save_cycle.lua"
REMOVED = "inQueueX.FreeTensor(xLocal);"  # without it the next inQueueX.AllocTensor deadlocks
WAIT_S = 60  # each wait inside Neovim (initialize, fault shown, fault cleared)


def _tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(none)"


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> dict:
    """Run the save cycle in Neovim once; return its record plus the paths the tests need."""
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("nvim is not on PATH: this end-to-end test needs Neovim >= 0.7. "
                    "Install it with `apt-get update && apt-get install -y neovim` (as .ci/run does), "
                    "or run `bash .ci/run`.", pytrace=False)
    base = tmp_path_factory.mktemp("nvim")
    task = base / "add_custom"
    shutil.copytree(ADD, task)
    kernel = task / "add_custom.cpp"
    original = kernel.read_text()
    result_path = base / "result.json"
    config = {
        "cmd": [sys.executable, "-m", "sage_npu.cli", "serve"],
        "root": str(task),
        "kernel": str(kernel),
        "remove": REMOVED,
        "code": "queue-deadlock",
        "result": str(result_path),
        "timeout_ms": WAIT_S * 1000,
        # Shared with test_server.py's cache: an unchanged kernel is not compiled twice per run.
        "settings": {"sage": {"eval": {"trials": 2, "chip": "910B4",
                                       "cacheDir": str(tmp_path_factory.getbasetemp() / "server-build-cache")},
                              "server": {"debounceS": 0.05}}},
    }
    (base / "config.json").write_text(json.dumps(config))
    # Neovim's own state (its LSP log, shada) stays in the test's folder.
    xdg = {f"XDG_{k}_HOME": str(base / "xdg" / k.lower()) for k in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {**os.environ, **xdg, "SAGE_NVIM_E2E": str(base / "config.json")}
    cmd = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"]
    lsp_log = base / "xdg" / "cache" / "nvim" / "lsp.log"
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, cwd=task, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=3 * WAIT_S + 60)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"Neovim did not quit within {e.timeout} s although every wait in {SCRIPT.name} is bounded.\n"
                    f"stderr: {e.stderr}\nLSP log tail:\n{_tail(lsp_log)}", pytrace=False)
    elapsed = time.monotonic() - start
    if not result_path.exists():
        pytest.fail(f"Neovim exited ({proc.returncode}) without writing {result_path}.\n"
                    f"stdout: {proc.stdout}\nstderr: {proc.stderr}\nLSP log tail:\n{_tail(lsp_log)}", pytrace=False)
    record = json.loads(result_path.read_text())
    record.update(elapsed_s=elapsed, original=original, kernel=str(kernel), lsp_log=_tail(lsp_log))
    print(f"neovim save cycle: {elapsed:.1f} s; phase ends (ms): {record.get('ms')}")
    return record


def _explain(record: dict) -> str:
    return (f"Neovim record: error={record.get('error')!r} steps={record.get('steps')} "
            f"server_exit={record.get('server_exit')} messages={record.get('messages')}\n"
            f"LSP log tail:\n{record['lsp_log']}")


def test_save_of_a_deadlocking_kernel_marks_the_alloc_line_in_neovim(session):
    assert "fault" in session and session["fault"]["seen"], _explain(session)
    broken = [ln for ln in session["original"].splitlines() if REMOVED not in ln]
    alloc_line = 1 + next(i for i, ln in enumerate(broken) if "inQueueX.AllocTensor" in ln)
    deadlocks = [d for d in session["fault"]["diagnostics"] if d["code"] == "queue-deadlock"]
    assert deadlocks, _explain(session)
    d = deadlocks[0]
    assert d["source"] == "sage"
    assert d["line"] == alloc_line, f"{d} should be on line {alloc_line}: {broken[alloc_line - 1].strip()}"
    assert d["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert "inQueueX" in d["message"] or "AllocTensor" in d["message"], d["message"]


def test_repair_clears_the_fault_and_shows_the_summary_lens(session):
    assert session.get("error") is None, _explain(session)
    assert session["fixed"]["cleared"]
    assert not [d for d in session["fixed"]["diagnostics"] if d["source"] == "sage" and d["severity"] == 1]
    titles = [lens["title"] for lens in session["fixed"]["lenses"]]
    summary = next((t for t in titles if t.startswith("SAGE: ")), None)
    assert summary is not None, f"no SAGE lens among {titles}"
    assert summary.startswith("SAGE: correct 2/2 | est. ") and "us (CPU model)" in summary and "bottleneck" in summary
    entry = 1 + next(i for i, ln in enumerate(session["original"].splitlines()) if "__global__" in ln)
    assert next(lens for lens in session["fixed"]["lenses"] if lens["title"] == summary)["line"] == entry
    # The buffer was written back as it started, and the server shut down when asked.
    assert Path(session["kernel"]).read_text() == session["original"]
    assert session["server_exit"] is not None and session["server_exit"]["code"] == 0, _explain(session)
