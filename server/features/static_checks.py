"""Fast findings from the tree-sitter parse of the open buffer, on open and on every change
(no compile, no run): the diagnostics a person sees while typing. The rules live in
sage_npu.npu_eval.analysis; the quick fixes they carry are served by code_actions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from sage_npu.npu_eval.analysis import Finding, analyze
from sage_npu.npu_eval.chips import ChipProfile, chip_profile
from sage_npu.server.features.base import Feature
from sage_npu.server.server import STATIC

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer
    from sage_npu.server.settings import ComposedSettings


class StaticChecks(Feature):
    SOURCE = STATIC

    def __init__(self, server: SageServer) -> None:
        super().__init__(server)
        # uri -> (source, chip, findings): code actions ask on every cursor move, so the
        # findings of an unchanged buffer are reused.
        self._latest: dict[str, tuple[str, ChipProfile, list[Finding]]] = {}

    def chip(self) -> ChipProfile:
        return chip_profile(self.server.settings.eval.chip)

    def findings(self, uri: str) -> list[Finding]:
        """The findings on the document's current text for the configured chip."""
        if not self.server.is_ascendc(uri):
            return []
        source = self.server.workspace.get_text_document(uri).source
        chip = self.chip()
        cached = self._latest.get(uri)
        if cached is not None and cached[0] == source and cached[1] == chip:
            return cached[2]
        found = analyze(source, chip)
        self._latest[uri] = (source, chip, found)
        return found

    def settings_changed(self, settings: ComposedSettings) -> None:
        """The chip sets the UB budget and which fixes exist: re-check the open documents."""
        for uri in list(self._latest):
            self._check(uri)

    def _check(self, uri: str) -> None:
        if not self.server.is_ascendc(uri):
            if self._latest.pop(uri, None) is not None:
                self.server.set_diagnostics(uri, self.SOURCE, [])
            return
        findings = self.findings(uri)
        lines = self.server.workspace.get_text_document(uri).source.splitlines()
        diags = [self.server.lsp_diagnostic(lines, f.line, f.column, f.end_line, f.end_column, f.severity,
                                            f.code, f.message)
                 for f in findings]
        self.server.set_diagnostics(uri, self.SOURCE, diags)

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._check(params.text_document.uri)

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._check(params.text_document.uri)

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._latest.pop(params.text_document.uri, None)
        self.server.set_diagnostics(params.text_document.uri, self.SOURCE, [])
