"""A tiny OpenAI-compatible HTTP server for tests: replays scripted replies, one per request.

It speaks real HTTP on 127.0.0.1 (port 0) from a background thread, so the code under test
goes through the real `openai` client, its HTTP stack, SSE parsing and error mapping.

    with FakeOpenAI([Reply(status=429, headers={"Retry-After": "1"}), Reply(text="hi")]) as srv:
        client = LLMClient(LLMSettings(base_url=srv.base_url, model="m"))

A script entry may also be a function of the request (`Seen -> Reply`): a scripted model that
reads what it was shown, as a real one does (the memory ids in an agent prompt, say).

A request past the end of the script gets a 500 saying so, which makes a test fail loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0                 # before the status line: a slow or hung server
    chunks: list[str] | None = None      # streamed pieces; default: the text split after spaces
    chunk_delay_s: float = 0.0           # between two streamed chunks
    prompt_tokens: int = 11
    completion_tokens: int = 7
    error_message: str = "scripted error"


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict


def _split(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + " " for p in parts[:-1]] + [parts[-1]] if parts else []


class FakeOpenAI:
    def __init__(self, script: list[Reply | Callable[[Seen], Reply]]) -> None:
        self.script = list(script)
        self.requests: list[Seen] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()   # wakes handlers sleeping in a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, seen: Seen) -> Reply | None:
        with self._lock:
            self.requests.append(seen)
            entry = self.script.pop(0) if self.script else None
        return entry(seen) if callable(entry) else entry

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                reply = fake._next(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if reply is None:
                    reply = Reply(status=500, error_message="fake_openai: script exhausted")
                if reply.delay_s and fake.stopping.wait(reply.delay_s):
                    return
                try:
                    if reply.status != 200:
                        self._error(reply)
                    elif body.get("stream"):
                        self._stream(reply, body)
                    else:
                        self._json(200, self._completion(reply, body), reply.headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up (timeout or cancellation): what the test wanted

            def _json(self, status: int, payload: dict, headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, reply: Reply) -> None:
                err = {"error": {"message": reply.error_message, "type": "server_error", "code": reply.status}}
                self._json(reply.status, err, reply.headers)

            @staticmethod
            def _completion(reply: Reply, body: dict) -> dict:
                return {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.text}}],
                    "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                              "total_tokens": reply.prompt_tokens + reply.completion_tokens},
                }

            def _stream(self, reply: Reply, body: dict) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")   # the body ends when the connection does
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.close_connection = True
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model", "fake")}
                pieces = reply.chunks if reply.chunks is not None else _split(reply.text)
                for i, piece in enumerate(pieces):
                    if i and reply.chunk_delay_s and fake.stopping.wait(reply.chunk_delay_s):
                        return
                    delta = {"content": piece} if i else {"role": "assistant", "content": piece}
                    self._event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                if (body.get("stream_options") or {}).get("include_usage"):
                    self._event({**base, "choices": [], "usage": {
                        "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                        "total_tokens": reply.prompt_tokens + reply.completion_tokens}})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, payload: dict) -> None:
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                self.wfile.flush()

        return Handler
