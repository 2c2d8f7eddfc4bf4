"""Raw JSON-RPC over stdio to `sage-npu serve`: every request, however malformed its params,
gets an answer (InvalidParams, -32602, with a message), and the server goes on answering."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

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
