"""The language server (pygls 2): the LSP side the features share (settings, documents,
diagnostics, client capabilities) and the fan-out of an event to every feature, each call
contained so a failing feature is logged and the others, and the server, go on. The handlers
that call the fan-out are registered in one place, `setup.py`.

The event loop only routes messages: evaluation (plan worker with torch, compiler, sandboxed
kernel runs) happens in worker processes driven from a thread, and optimizer episodes and the
experience memory in the agent process (`agent/worker.py`), so hovers and code lenses answer
while a kernel is being evaluated or optimized.
"""

from __future__ import annotations

import inspect
import logging
import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from sage_npu.server.features.base import Feature
from sage_npu.server.positions import to_range
from sage_npu.server.protocol import SageProtocol
from sage_npu.server.settings import ComposedSettings

log = logging.getLogger("sage_npu.server")

_ASCENDC_MARK = re.compile(r"kernel_operator\.h|__aicore__")  # CUDA has __global__ too: look for Ascend C's own
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}


class SageServer(LanguageServer):
    """The LSP side the features share: settings, documents, diagnostics, client capabilities."""

    def __init__(self, settings: ComposedSettings, version: str) -> None:
        super().__init__("sage-npu", version, protocol_cls=SageProtocol)
        self.defaults = settings
        self.settings = settings
        self.features: list[Feature] = []
        self._diagnostics: dict[str, dict[str, list[types.Diagnostic]]] = {}

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
        """Diagnostics come from several features (static checks, evaluation); publish their union."""
        per = self._diagnostics.setdefault(uri, {})
        per[source] = diags
        everything = [d for ds in per.values() for d in ds]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=everything))

    # ---- client capabilities ----

    def refresh_code_lenses(self) -> None:
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def supports_progress(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.window and caps.window.work_done_progress)

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
