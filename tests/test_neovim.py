"""End to end in a real editor: headless Neovim (Debian's 0.7) runs `sage-npu serve` through its
built-in LSP client and what Neovim then shows or does is checked. Two Neovim sessions per module,
each a script under tests/nvim/ that writes a JSON record the tests below read:

- save_cycle.lua: the kernel is broken and repaired in the buffer and written with :write; the
  diagnostic and the code lens Neovim shows (drawn when the verdict arrives, not asked for) are
  checked; then host.py is broken and written, and the evaluation's diagnostic lands in it.
- code_actions.lua: a quick fix is requested for a static finding and its edit applied; then
  "Optimize with SAGE" runs an episode, a message says how it ended, its diff is opened, its
  verified rewrite is applied (nothing logged yet) and written (the acceptance is logged)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

# A real editor under time limits: .ci/run runs these alone, after the parallel rest of the suite.
pytestmark = pytest.mark.serial

REPO = Path(__file__).resolve().parents[1]
ADD = REPO / "examples" / "tasks" / "add_custom"
NAIVE = REPO / "examples" / "tasks" / "vadd_naive"
SCRIPTS = REPO / "tests" / "nvim"
REMOVED = "inQueueX.FreeTensor(xLocal);"  # without it the next inQueueX.AllocTensor deadlocks
DOUBLE = "constexpr int32_t BUFFER_NUM = 2;"
SINGLE = "constexpr int32_t BUFFER_NUM = 1;"
WAIT_S = 60  # each wait inside Neovim (initialize, fault shown, fault cleared, finding shown, ...)
OPTIMIZE_S = 180  # the whole "Optimize with SAGE" episode (about 15 s here)


def _tail(path: Path, n: int = 40) -> str:
    """The log's last n distinct lines (the server's stderr repeats one warning per fork)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(none)"
    seen: set[str] = set()
    out = []
    for ln in reversed(lines):
        key = re.sub(r"^\[\w+\]\[[^]]*\]", "", ln)  # without the level and timestamp
        if key not in seen:
            seen.add(key)
            out.append(ln)
    return "\n".join(reversed(out[:n]))


def _nvim() -> str:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("nvim is not on PATH: this end-to-end test needs Neovim >= 0.7. "
                    "Install it with `apt-get update && apt-get install -y neovim` (as .ci/run does), "
                    "or run `bash .ci/run`.", pytrace=False)
    return nvim


def _settings(tmp_path_factory, **extra) -> dict:
    # The build cache is shared by every server test in a run: an unchanged kernel is compiled once.
    cache = tmp_path_factory.getbasetemp() / "server-build-cache"
    return {"sage": {"eval": {"trials": 2, "chip": "910B4", "cacheDir": str(cache)},
                     "server": {"debounceS": 0.05}, **extra}}


def _run_nvim(script: str, base: Path, cwd: Path, config: dict, timeout_s: float) -> dict:
    """Run one tests/nvim script in headless Neovim; return its JSON record (plus timing, LSP log)."""
    result_path = base / "result.json"
    config = {**config, "cmd": [sys.executable, "-m", "sage_npu.cli", "serve"], "result": str(result_path),
              "timeout_ms": WAIT_S * 1000}
    (base / "config.json").write_text(json.dumps(config))
    # Neovim's own state (its LSP log, shada) stays in the test's folder.
    xdg = {f"XDG_{k}_HOME": str(base / "xdg" / k.lower()) for k in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {**os.environ, **xdg, "SAGE_NVIM_E2E": str(base / "config.json")}
    # The script quits Neovim itself; `cquit` only runs if it could not even load (a Lua syntax error).
    cmd = [_nvim(), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPTS / script}", "-c", "cquit"]
    lsp_log = base / "xdg" / "cache" / "nvim" / "lsp.log"
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"Neovim did not quit within {e.timeout} s although every wait in {script} is bounded.\n"
                    f"stderr: {e.stderr}\nLSP log tail:\n{_tail(lsp_log)}", pytrace=False)
    elapsed = time.monotonic() - start
    if not result_path.exists():
        pytest.fail(f"Neovim exited ({proc.returncode}) without writing {result_path}.\n"
                    f"stdout: {proc.stdout}\nstderr: {proc.stderr}\nLSP log tail:\n{_tail(lsp_log)}", pytrace=False)
    record = json.loads(result_path.read_text())
    record.update(elapsed_s=elapsed, lsp_log=_tail(lsp_log), stderr=proc.stderr[-2000:])
    print(f"neovim {script}: {elapsed:.1f} s; steps end (ms): {record.get('ms')}")
    return record


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> dict:
    """Run the save cycle in Neovim once; return its record plus the paths the tests need."""
    base = tmp_path_factory.mktemp("nvim")
    task = base / "add_custom"
    shutil.copytree(ADD, task)
    kernel = task / "add_custom.cpp"
    original = kernel.read_text()
    config = {"root": str(task), "kernel": str(kernel), "remove": REMOVED, "code": "queue-deadlock",
              "host": {"path": str(task / "host.py"), "good": "tileNum=8", "bad": "tileCount=8",
                       "code": "compile-error"},
              "settings": _settings(tmp_path_factory)}
    host_original = (task / "host.py").read_text()
    record = _run_nvim("save_cycle.lua", base, task, config, timeout_s=5 * WAIT_S + 60)
    record.update(original=original, kernel=str(kernel), host_path=str(task / "host.py"), host_original=host_original)
    return record


@pytest.fixture(scope="module")
def actions(tmp_path_factory) -> dict:
    """Run the code-action script in Neovim once (a quick fix, then a suggestion); return its record."""
    base = tmp_path_factory.mktemp("nvim-actions").resolve()  # the server names files by resolved URI
    fixable = base / "add_custom"
    shutil.copytree(ADD, fixable)
    fix_kernel = fixable / "add_custom.cpp"
    assert DOUBLE in fix_kernel.read_text(), f"{ADD / 'add_custom.cpp'} no longer has {DOUBLE!r}: update this test"
    fix_kernel.write_text(fix_kernel.read_text().replace(DOUBLE, SINGLE))
    naive = base / "vadd_naive"
    shutil.copytree(NAIVE, naive)
    memory = base / "mem"
    config = {
        "root": str(base),
        "optimize_timeout_ms": OPTIMIZE_S * 1000,
        "unsaved_ms": 3000,   # how long the applied, unsaved rewrite is watched for a (wrong) decision
        "quickfix": {"kernel": str(fix_kernel), "code": "single-buffer", "title": "Set BUFFER_NUM to 2",
                     "decl": "constexpr int32_t BUFFER_NUM"},
        "suggestion": {"kernel": str(naive / "vadd_naive.cpp")},
        "settings": _settings(tmp_path_factory, agent={"turns": 4},
                              memory={"db": str(memory), "embedder": "hashing"}),
    }
    record = _run_nvim("code_actions.lua", base, base, config, timeout_s=OPTIMIZE_S + 6 * WAIT_S + 60)
    record.update(fix_kernel=str(fix_kernel), naive=str(naive), memory=str(memory))
    return record


def _explain(record: dict, phase: str | None = None) -> str:
    part = f"{phase}: {json.dumps(record.get(phase), indent=1)[:4000]}\n" if phase else ""
    return (f"Neovim record: error={record.get('error')!r} steps={record.get('steps')} "
            f"server_exit={record.get('server_exit')} messages={record.get('messages')}\n{part}"
            f"Neovim stderr: {record.get('stderr')}\nLSP log tail:\n{record['lsp_log']}")


def _phase(record: dict, name: str) -> dict:
    """The phase's record, failing with everything Neovim saw if the phase (or the session) failed."""
    part = record.get(name)
    error = record.get("error") or (part.get("error") if isinstance(part, dict) else f"no {name} record")
    if error:
        pytest.fail(f"the {name} phase in Neovim failed: {error}\n\n{_explain(record, name)}", pytrace=False)
    return part


# ---- save cycle ----

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


def test_lenses_are_drawn_when_the_verdict_arrives(session):
    assert session.get("error") is None, _explain(session)
    drawn = session["fixed"]["drawn"]
    assert any(t.startswith("SAGE: correct 2/2") for t in drawn), f"Neovim drew {drawn}"
    assert any(t.startswith("UB (KernelAdd): ") for t in drawn), f"Neovim drew {drawn}"
    assert session["reports"] >= 2, session["reports"]


def test_saving_host_py_in_neovim_evaluates_the_task(session):
    host = _phase(session, "host")
    assert host["seen"] and host["cleared"], host
    wrong = [d for d in host["diagnostics"] if d["code"] == "compile-error"]
    assert any(d["line"] == host["line"] and "tileCount" in d["message"] for d in wrong), host["diagnostics"]
    assert Path(session["host_path"]).read_text() == session["host_original"]


# ---- code actions ----

def test_quick_fix_applied_from_neovim_sets_buffer_num_to_2(actions):
    qf = _phase(actions, "quickfix")
    text = Path(actions["fix_kernel"]).read_text()
    init_line = 1 + next(i for i, ln in enumerate(text.splitlines()) if "InitBuffer(inQueueX" in ln)
    assert qf["finding"]["line"] == init_line, f"single-buffer should mark line {init_line}: {qf['finding']}"
    assert "BUFFER_NUM = 1" in qf["finding"]["message"], qf["finding"]
    fixes = [a for a in qf["actions"] if a["kind"] == "quickfix"]
    assert [a["title"] for a in fixes if a["title"].startswith("Set BUFFER_NUM to 2")] == [qf["applied"]], qf
    # The action is linked to the diagnostic Neovim sent as context.
    assert next(a for a in fixes if a["title"] == qf["applied"])["diagnostics"] == ["single-buffer"], qf["actions"]
    assert qf["decl_after"].strip() == DOUBLE, f"after the quick fix the buffer reads {qf['decl_after']!r}"
    assert qf["modified"], "the edit should be in the buffer, not yet written"
    assert qf["cleared"], f"the single-buffer finding stayed after the fix: {qf['diagnostics']}"
    assert SINGLE in text  # nothing was written: the quick fix changed only the buffer


def test_optimize_from_neovim_offers_an_honestly_titled_rewrite(actions):
    sg = _phase(actions, "suggestion")
    assert "Optimize with SAGE" in [a["title"] for a in sg["before"]], sg["before"]
    assert not any(a["title"].startswith("SAGE rewrite:") for a in sg["before"])
    # The command answers at once; the episode reports when it ends.
    assert sg["optimize"]["started"] is True and sg["optimize_ms"] < 5000, sg["optimize"]
    episode = sg["episode"]
    assert episode["status"] == "improved" and episode["speedup"] > 1, episode
    title = sg["rewrite"]["title"]
    assert title == episode["title"], sg
    assert "(CPU model)" in title and "correct on" in title, title
    assert re.fullmatch(r"SAGE rewrite: est\. \d+\.\d\dx \(CPU model\), correct on \d+ trials", title), title
    # Visible in Neovim: the same line as a window/showMessage, with the verified gain.
    assert episode["message"] in (actions.get("messages") or []), actions.get("messages")
    assert "verified rewrite, est. " in episode["message"] and "(CPU model) faster" in episode["message"]
    assert sg["rewrite"]["kind"] == "refactor.rewrite" and sg["rewrite"]["command"] is None, sg["rewrite"]
    assert "SAGE: reject this rewrite" in [a["title"] for a in sg["after"]], sg["after"]
    # The custom notification reached the handler registered for it, with the diff.
    notes = actions.get("notifications") or []
    assert len(notes) == 1, f"expected one sage/suggestion notification, got {notes}"
    note = notes[0]
    assert note["title"] == title and note["estimated"] is True and note["speedup"] > 1, note
    assert note["diff"].startswith("--- a/") and "\n+++ b/" in note["diff"], note["diff"][:400]
    assert note["uri"].endswith("/vadd_naive/vadd_naive.cpp"), note["uri"]


def test_the_rewrites_diff_opens_in_neovim(actions):
    sg = _phase(actions, "suggestion")
    diff = sg["diff"]
    path = Path(actions["naive"]) / ".sage" / "suggestion.diff"
    assert diff["answer"] == {"shown": True, "path": str(path)}, diff
    assert diff["buffer"] == str(path) and diff["first_line"].startswith("--- a/"), diff
    assert diff["text"] == path.read_text().removesuffix("\n")
    for f in sg["rewrite"]["files"]:
        assert f"+++ b/{Path(f['path']).name}" in diff["text"], diff["text"][:400]


def test_accepting_the_rewrite_in_neovim_is_logged_when_it_is_saved(actions):
    sg = _phase(actions, "suggestion")
    naive = Path(actions["naive"])
    files = {Path(f["path"]).name: f for f in sg["rewrite"]["files"]}
    assert files and set(files) <= {"vadd_naive.cpp", "host.py"}, files.keys()
    for name, f in files.items():
        assert f["edits"] == 1, f"{name}: the rewrite replaces the file whole with one edit"
        assert f["buffer"] == f["new_text"].removesuffix("\n"), f"{name}: the buffer after the edit differs"
        assert (naive / name).read_text() == f["new_text"], f"{name} on disk is not the rewrite Neovim applied"
    kernel = (naive / "vadd_naive.cpp").read_text()
    host = (naive / "host.py").read_text()
    assert DOUBLE in kernel or "MAX_CORES = 2\n" not in host, (
        f"the accepted rewrite changed neither BUFFER_NUM nor MAX_CORES:\n{sg['rewrite']['files']}")
    # Applied but not written: no decision, the episode still open, no "accepted" message.
    unsaved = sg["unsaved"]
    assert unsaved["decisions"] == [] and unsaved["open_episodes"] == 1, unsaved
    assert not any("accepted" in m for m in unsaved["messages"]), unsaved["messages"]
    # Written: the acceptance is logged, with its reward, and said so.
    decision = sg["decision"]
    assert decision["decision"] == "accept" and decision["logged"] is True and decision["reward"] > 0, decision
    assert decision["reason"] == "the rewrite was saved"
    assert any(m.startswith("SAGE: rewrite accepted") for m in actions["messages"]), actions["messages"]
    assert sg["open_episodes_after"] == 0
    assert not any(a["title"].startswith("SAGE rewrite:") for a in sg["after_accept"]), sg["after_accept"]
    # Written, the rewrite is evaluated like any save and Neovim shows it correct.
    assert sg["evaluated_correct"], f"no 'SAGE: correct' lens after writing the rewrite: {sg['lenses']}"
    assert not [d for d in sg["diagnostics"] if d["severity"] == 1], sg["diagnostics"]

    from sage_npu.memory.experience_memory import ExperienceMemory
    from sage_npu.memory.settings import MemorySettings

    stats = ExperienceMemory.open(MemorySettings(db=Path(actions["memory"]), embedder="hashing"), create=False).stats()
    assert stats.episodes == 1 and stats.open_episodes == 0, stats
    assert actions["server_exit"] is not None and actions["server_exit"]["code"] == 0, _explain(actions)


def test_the_readme_neovim_07_snippet_attaches_the_server(tmp_path):
    """The setup a reader copies from the README starts one server, attaches it to a kernel and to
    its task's host.py (whose saves evaluate the task), and the verdict's code lens is drawn with
    no refresh asked for by hand (the snippet refreshes when a `sage/report` arrives)."""
    readme = (REPO / "README.md").read_text()
    snippet = re.search(r"Neovim 0\.7 .*?```lua\n(.*?)```", readme, re.S)
    assert snippet, "README lost its Neovim 0.7 snippet"
    init = tmp_path / "init.lua"
    init.write_text(snippet.group(1).replace('"sage-npu"', json.dumps(str(Path(sys.executable).parent / "sage-npu"))))
    task = tmp_path / "add_custom"
    shutil.copytree(ADD, task)
    out = tmp_path / "out.json"
    check = tmp_path / "check.lua"
    check.write_text(f"""
vim.cmd("edit {task / 'host.py'}")
local host = vim.api.nvim_get_current_buf()
vim.cmd("edit {REPO / 'examples' / 'tasks' / 'sub_custom' / 'sub_custom.cpp'}")
vim.cmd("edit {task / 'add_custom.cpp'}")
local kernel = vim.api.nvim_get_current_buf()
local ok = vim.wait({WAIT_S * 1000}, function()
  local c = vim.lsp.get_active_clients()
  return #c == 1 and c[1].initialized
end, 100)
-- The kernel is evaluated on open; its verdict's lens is drawn when the report arrives.
local titles = {{}}
local drawn = vim.wait({WAIT_S * 1000}, function()
  titles = {{}}
  for _, lens in ipairs(vim.lsp.codelens.get(kernel)) do
    table.insert(titles, lens.command and lens.command.title or "")
  end
  for _, t in ipairs(titles) do
    if t:find("SAGE: ", 1, true) == 1 then return true end
  end
  return false
end, 200)
local c = vim.lsp.get_active_clients()
local f = io.open("{out}", "w")
f:write(vim.fn.json_encode({{ok = ok, clients = #c, name = c[1] and c[1].name or "",
  attached = #vim.lsp.buf_get_clients(kernel), host_attached = #vim.lsp.buf_get_clients(host),
  drawn = drawn, titles = titles}}))
f:close()
vim.cmd("qa!")
""")
    subprocess.run([_nvim(), "--headless", "-u", str(init), "-i", "NONE", "-n", "-c", f"luafile {check}"],
                   cwd=tmp_path, timeout=2 * WAIT_S + 30, capture_output=True)
    got = json.loads(out.read_text())
    assert {k: got[k] for k in ("ok", "clients", "name", "attached", "host_attached")} == {
        "ok": True, "clients": 1, "name": "sage", "attached": 1, "host_attached": 1}, got
    assert got["drawn"], f"no SAGE lens drawn without a manual refresh: {got['titles']}"
    assert any(t.startswith("UB (KernelAdd): ") for t in got["titles"]), got["titles"]
