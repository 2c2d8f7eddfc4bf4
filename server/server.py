"""The language server (pygls 2): the LSP side the features share (settings, documents,
diagnostics, client capabilities) and the fan-out of an event to every feature, each call
contained so a failing feature is logged and the others, and the server, go on. The handlers
that call the fan-out are registered in one place, `setup.py`.

The event loop only routes messages: evaluation (plan worker with torch, compiler, sandboxed
kernel runs) happens in worker processes driven from a thread, and optimizer episodes and the
experience memory in the agent process (`agent/worker.py`), so hovers and code lenses answer
while a kernel is being evaluated or optimized.

Ending: `shutdown` stops the work (each feature's `shutdown` hook, run off the event loop so the
answer does not wait for a process to wind down) and answers null; `exit` then kills every
process the server started, gives the threads that waited on them a moment to clean up, and
ends, within about a second whatever was running.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from sage_npu.server.features.base import Feature
from sage_npu.server.positions import to_range
from sage_npu.server.processes import kill_descendants
from sage_npu.server.protocol import SageProtocol
from sage_npu.server.settings import ComposedSettings

log = logging.getLogger("sage_npu.server")

_ASCENDC_MARK = re.compile(r"kernel_operator\.h|__aicore__")  # CUDA has __global__ too: look for Ascend C's own
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}
# The diagnostics' sources (`set_diagnostics`): what the static checks find in the buffer, and
# what the evaluation of the task reports.
STATIC = "static"
EVALUATED = "eval"
# At `exit`: how long the shutdown hooks and then the off-loop work may take before the server ends.
_EXIT_GRACE_S = (0.8, 0.6)
T = TypeVar("T")


class SageServer(LanguageServer):
    """The LSP side the features share: settings, documents, diagnostics, client capabilities."""

    def __init__(self, settings: ComposedSettings, version: str) -> None:
        super().__init__("sage-npu", version, protocol_cls=SageProtocol)
        self.defaults = settings
        self.settings = settings
        self.features: list[Feature] = []
        self._diagnostics: dict[str, dict[str, list[types.Diagnostic]]] = {}
        self.stopping = False                       # shutdown came: start no new work, publish nothing
        self._stopper: threading.Thread | None = None
        self._off_loop: set[threading.Thread] = set()
        self.loop: asyncio.AbstractEventLoop | None = None   # set at initialize; the log needs it

    def connected(self) -> None:
        """Called at initialize, on the event loop: the client can now be sent messages."""
        self.loop = asyncio.get_running_loop()

    # ---- settings ----

    def apply_settings(self, raw: Any) -> None:
        """Editor settings over the server's defaults; a bad value gets a message and the default."""
        self.settings, problems = self.defaults.with_editor_values(raw)
        self.fan_out("settings_changed", self.settings)
        for p in problems:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=p))

    # ---- documents ----

    def is_ascendc(self, uri: str) -> bool:
        path = to_fs_path(uri) or ""
        if path.endswith(".asc"):
            return True
        if not path.endswith((".cpp", ".h", ".hpp", ".cc", ".cce")):
            return False
        try:
            text = self.workspace.get_text_document(uri).source
        except Exception:  # noqa: BLE001 - a document we cannot read is not ours
            return False
        return bool(_ASCENDC_MARK.search(text))

    def lines_of(self, path: str) -> list[str]:
        uri = Path(path).resolve().as_uri()
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.source.splitlines()
        try:
            return Path(path).read_text(errors="replace").splitlines()
        except OSError:
            return []

    def lsp_diagnostic(self, lines: list[str], line: int, column: int, end_line: int, end_column: int,
                       severity: str, code: str, message: str) -> types.Diagnostic:
        enc = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return types.Diagnostic(range=to_range(lines, line, column, end_line, end_column, enc), message=message,
                                severity=_SEVERITY.get(severity, types.DiagnosticSeverity.Error), code=code,
                                source="sage")

    def set_diagnostics(self, uri: str, source: str, diags: list[types.Diagnostic]) -> None:
        """Diagnostics come from several features (static checks, evaluation); publish their union,
        one diagnostic per problem (`one_per_problem`)."""
        if self.stopping:
            return
        per = self._diagnostics.setdefault(uri, {})
        per[source] = diags
        everything = one_per_problem(per)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=everything))

    def diagnostics_of(self, uri: str, source: str) -> list[types.Diagnostic]:
        """What `source` last set on `uri` (before merging)."""
        return list(self._diagnostics.get(uri, {}).get(source, []))

    # ---- client capabilities ----

    def refresh_code_lenses(self) -> None:
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def supports_progress(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.window and caps.window.work_done_progress)

    # ---- work off the event loop, and the end ----

    def off_loop(self, fn: Callable[[], T], name: str) -> asyncio.Future[T]:
        """Run `fn` in a thread of its own; its result (or exception) as a future of this loop.
        The thread is a daemon so `exit` never waits on it longer than its grace."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()

        def settle(ok: bool, value: Any) -> None:
            if not fut.done():
                fut.set_result(value) if ok else fut.set_exception(value)

        def run() -> None:
            try:
                value, ok = fn(), True
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting coroutine
                value, ok = e, False
            finally:
                self._off_loop.discard(threading.current_thread())
            if not loop.is_closed():
                loop.call_soon_threadsafe(settle, ok, value)

        t = threading.Thread(target=run, name=name, daemon=True)
        self._off_loop.add(t)
        t.start()
        return fut

    def stop_work(self) -> None:
        """The client asked to shut down: no new work, and every feature's `shutdown` hook, in a
        thread (a worker process may take seconds to wind down; the answer does not wait)."""
        if self._stopper is not None:
            return
        self.stopping = True
        self._stopper = threading.Thread(target=self.fan_out, args=("shutdown",), name="sage-shutdown", daemon=True)
        self._stopper.start()

    def end(self, code: int) -> None:
        """`exit`: stop the work if shutdown did not, kill the processes it runs (so threads that
        wait on them return and remove their scratch folders), give those threads a moment, and
        end the process with `code`. Directly: the interpreter's own teardown of a server that
        loaded the agent's libraries takes another second or more on a busy machine, and has
        nothing left to do."""
        self.stop_work()
        first, then = _EXIT_GRACE_S
        if self._stopper is not None:
            self._stopper.join(first)
        killed = kill_descendants()
        deadline = time.monotonic() + then
        for t in list(self._off_loop):
            t.join(max(deadline - time.monotonic(), 0))
        killed += kill_descendants()  # anything a stage started after the first sweep
        if killed:
            log.info("exit: ended %d process(es) the server had started", killed)
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass   # the client closed it
        os._exit(code)

    # ---- fan-out ----

    def fan_out(self, hook: str, *args: Any) -> None:
        """Call a hook that answers nothing (settings_changed, shutdown) on every feature."""
        for f in self.features:
            try:
                getattr(f, hook)(*args)
            except Exception:  # noqa: BLE001 - one feature's bug must not take the server down
                log.exception("feature %s failed in %s", type(f).__name__, hook)

    async def dispatch(self, hook: str, params: Any) -> list:
        """Call an LSP hook on every feature (awaiting the async ones); their answers, concatenated."""
        results = []
        for f in self.features:
            try:
                out = getattr(f, hook)(params)
                if inspect.isawaitable(out):
                    out = await out
                if out:
                    results.extend(out)
            except Exception:  # noqa: BLE001 - one feature's bug must not take the server down
                log.exception("feature %s failed in %s", type(f).__name__, hook)
        return results


def one_per_problem(per_source: dict[str, list[types.Diagnostic]]) -> list[types.Diagnostic]:
    """The union of every source's diagnostics, where an evaluated diagnostic that confirms a
    static finding (same code, same line) is not shown twice: the static one stays (its range is
    the one its quick fixes name, its wording the one seen while typing), marked confirmed when
    the run's own message differs (it did run), and the evaluated one is dropped."""
    static = per_source.get(STATIC, [])
    by_problem = {(d.code, d.range.start.line): d for d in static}
    confirmed: dict[tuple[Any, int], types.Diagnostic] = {}
    out: list[types.Diagnostic] = []
    for source, diags in per_source.items():
        if source == STATIC:
            continue
        for d in diags:
            key = (d.code, d.range.start.line)
            if key in by_problem and source == EVALUATED:
                if d.message != by_problem[key].message:
                    confirmed[key] = d
                continue
            out.append(d)
    merged = []
    for d in static:
        run = confirmed.get((d.code, d.range.start.line))
        if run is not None:
            worst = min(d.severity or types.DiagnosticSeverity.Error, run.severity or types.DiagnosticSeverity.Error)
            d = types.Diagnostic(range=d.range, message=f"{d.message} (confirmed by the evaluation)",
                                 severity=worst, code=d.code, source=d.source, data=d.data)
        merged.append(d)
    return merged + out


_LEVELS = ((logging.ERROR, types.MessageType.Error), (logging.WARNING, types.MessageType.Warning),
           (logging.INFO, types.MessageType.Info))


class ClientLog(logging.Handler):
    """Log records as `window/logMessage` at their own level (an editor files the server's stderr
    as errors, Neovim's lsp.log among them); `fallback` (stderr) before the client is connected,
    after shutdown, and for pygls's own records, which may be about sending a message failing."""

    def __init__(self, server: SageServer, fallback: logging.Handler) -> None:
        super().__init__(logging.INFO)
        self.server = server
        self.fallback = fallback

    def emit(self, record: logging.LogRecord) -> None:
        loop = self.server.loop
        if loop is None or loop.is_closed() or self.server.stopping or record.name.startswith("pygls"):
            self.fallback.handle(record)
            return
        kind = next((t for level, t in _LEVELS if record.levelno >= level), types.MessageType.Log)
        try:
            text = self.format(record)
            loop.call_soon_threadsafe(self._send, kind, text)
        except Exception:  # noqa: BLE001 - a log line must never take the server down
            self.fallback.handle(record)

    def _send(self, kind: types.MessageType, text: str) -> None:
        if not self.server.stopping:
            self.server.window_log_message(types.LogMessageParams(type=kind, message=text))
