"""Raw JSON-RPC over stdio to `sage-npu serve`: every request, however malformed its params,
gets an answer (InvalidParams, -32602, with a message), and the server goes on answering;
`shutdown` in the middle of an evaluation or an episode answers null, and `exit` ends the server
and every process it started within 2 s."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

URI = "file:///nowhere/k.asc"
POS = {"line": 0, "character": 0}
RANGE = {"start": POS, "end": POS}

BAD = [
    ("textDocument/hover", None),
    ("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}}),
    ("textDocument/hover", {"textDocument": {"uri": 42}, "position": POS}),
    ("textDocument/hover", {"textDocument": {"uri": URI}, "position": "top"}),
    ("textDocument/codeAction", None),
    ("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": RANGE, "context": None}),
    ("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": {"start": {"line": -3, "character": 0},
                                                                         "end": POS}, "context": {"diagnostics": []}}),
    ("textDocument/codeLens", None),
    ("textDocument/codeLens", {"textDocument": "k.asc"}),
    ("workspace/executeCommand", None),
    ("workspace/executeCommand", {"command": 7}),
    ("workspace/executeCommand", {"command": "sage.evaluate", "arguments": []}),
    ("workspace/executeCommand", {"command": "sage.evaluate", "arguments": [1, 2, 3]}),
    ("workspace/executeCommand", {"command": "sage.optimize", "arguments": [{"uri": URI}]}),
]
FINE = [  # well-formed, about a document the server never saw: an answer, not an error
    ("textDocument/hover", {"textDocument": {"uri": URI}, "position": POS}),
    ("textDocument/codeLens", {"textDocument": {"uri": URI}}),
    ("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": RANGE, "context": {"diagnostics": []}}),
]


def _frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(out) -> dict:
    length = 0
    while True:
        line = out.readline()
        if not line:
            raise EOFError("server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(out.read(length))


def _answers(proc, want: set[int], timeout_s: float = 20) -> dict[int, dict]:
    got: dict[int, dict] = {}
    deadline = time.monotonic() + timeout_s
    while not want <= set(got) and time.monotonic() < deadline:
        msg = _read(proc.stdout)
        if "id" in msg and "method" not in msg:
            got[msg["id"]] = msg
    return got


@pytest.fixture
def serve():
    exe = shutil.which("sage-npu")
    cmd = [exe, "serve"] if exe else [sys.executable, "-m", "sage_npu.cli", "serve"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                             "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
    proc.stdin.flush()
    assert "result" in _answers(proc, {0})[0]
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    yield proc
    proc.kill()
    proc.wait()


def test_every_malformed_request_is_answered_invalid_params(serve):
    msgs = BAD + FINE
    for i, (method, params) in enumerate(msgs, start=1):
        serve.stdin.write(_frame({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
    serve.stdin.write(_frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": None}))
    serve.stdin.flush()
    got = _answers(serve, set(range(1, len(msgs) + 1)))
    missing = [msgs[i - 1] for i in range(1, len(msgs) + 1) if i not in got]
    assert not missing, f"never answered: {missing}"
    for i, (method, params) in enumerate(BAD, start=1):
        err = got[i].get("error")
        assert err and err["code"] == -32602 and err["message"], (method, params, got[i])
    for i in range(len(BAD) + 1, len(msgs) + 1):
        assert "error" not in got[i], (msgs[i - 1], got[i])


# ---- shutdown and exit at any moment ----

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom"
NAIVE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "vadd_naive"


class Session:
    """`sage-npu serve` over stdio with a reader thread: answers the server's own requests (progress
    tokens, lens refreshes) with null as an editor does, and keeps every other message."""

    def __init__(self, tmp_path: Path, capabilities: dict) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "sage_npu.cli", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lock = threading.Lock()
        self.answers: dict[int, dict] = {}
        self.notes: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.request(0, "initialize", {"processId": None, "rootUri": None, "capabilities": capabilities,
                                       "initializationOptions": {"sage": {
                                           "server": {"debounceS": 0},
                                           "eval": {"trials": 2, "cacheDir": str(tmp_path / "cache")},
                                           "agent": {"turns": 3},
                                           "memory": {"db": str(tmp_path / "mem"), "embedder": "hashing"}}}})
        assert "result" in self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, msg: dict) -> None:
        with self.lock:
            self.proc.stdin.write(_frame(msg))
            self.proc.stdin.flush()

    def request(self, i: int, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _read(self) -> None:
        while True:
            try:
                msg = _read(self.proc.stdout)
            except (EOFError, ValueError, OSError):
                return
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "id" in msg:
                self.answers[msg["id"]] = msg
            else:
                self.notes.append(msg)

    def answer(self, i: int, timeout_s: float = 60) -> dict:
        deadline = time.monotonic() + timeout_s
        while i not in self.answers:
            assert time.monotonic() < deadline, f"no answer to request {i} within {timeout_s} s"
            time.sleep(0.02)
        return self.answers[i]

    def wait(self, what, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not what():
            assert time.monotonic() < deadline, "the server never got there"
            time.sleep(0.05)

    def progress_began(self, word: str) -> bool:
        return any(n["method"] == "$/progress" and n["params"]["value"].get("kind") == "begin"
                   and word in n["params"]["value"].get("message", "") for n in list(self.notes))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _compiling(task: Path) -> bool:
    """Whether a compiler is building this task now (its folder is on the command line)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes()
        except OSError:
            continue
        if b"cc1plus" in text and str(task).encode() in text:
            return True
    return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("moment", ["compiling", "optimizing"])
def test_shutdown_mid_work_answers_null_and_exit_ends_within_2_s(tmp_path, moment):
    from sage_npu.server.processes import descendants

    task = tmp_path / "task"
    shutil.copytree(ADD if moment == "compiling" else NAIVE, task)
    kernel = next(task.glob("*.cpp"))
    s = Session(tmp_path, {"window": {"workDoneProgress": True}})
    try:
        s.notify("textDocument/didOpen", {"textDocument": {"uri": kernel.as_uri(), "languageId": "cpp", "version": 1,
                                                           "text": kernel.read_text()}})
        if moment == "compiling":
            s.notify("textDocument/didSave", {"textDocument": {"uri": kernel.as_uri()}})
            s.wait(lambda: _compiling(task))
        else:
            s.request(5, "workspace/executeCommand", {"command": "sage.optimize", "arguments": [kernel.as_uri()]})
            s.wait(lambda: s.progress_began("optimizing"))
            time.sleep(2)   # into the episode (the agent process is starting or evaluating the seed)
        started = descendants(s.proc.pid)
        assert started, "the server runs no process: not mid-work"
        s.request(9, "shutdown", None)
        answer = s.answer(9, timeout_s=10)
        assert "error" not in answer and answer["result"] is None, answer
        s.request(10, "textDocument/hover", {"textDocument": {"uri": kernel.as_uri()},
                                             "position": {"line": 0, "character": 0}})
        assert s.answer(10, timeout_s=10)["error"]["code"] == -32600   # InvalidRequest: shutting down
        t0 = time.monotonic()
        s.notify("exit", None)
        code = s.proc.wait(timeout=10)
        took = time.monotonic() - t0
        assert code == 0 and took < 2.0, f"exit took {took:.2f} s (code {code})"
        time.sleep(0.2)
        left = [p for p in started if _alive(p)]
        assert not left, f"processes the server started outlived it: {left}"
    finally:
        s.close()


def test_exit_without_shutdown_ends_with_1_at_once(serve):
    t0 = time.monotonic()
    serve.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
    serve.stdin.flush()
    assert serve.wait(timeout=10) == 1   # LSP: exit before shutdown is an error exit
    assert time.monotonic() - t0 < 2.0
