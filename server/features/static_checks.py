"""Fast findings from the tree-sitter parse of the open buffer, on open and on every change
(no compile, no run): the diagnostics a person sees while typing."""

from __future__ import annotations

from lsprotocol import types

from sage_npu.npu_eval.static_checks import raw_gm_accesses
from sage_npu.server.features.base import Feature


class StaticChecks(Feature):
    SOURCE = "static"

    def _check(self, uri: str) -> None:
        if not self.server.is_ascendc(uri):
            return
        doc = self.server.workspace.get_text_document(uri)
        findings = raw_gm_accesses(doc.source.encode("utf-8"))
        lines = doc.source.splitlines()
        diags = [self.server.lsp_diagnostic(lines, f.line, f.column, f.end_line, f.end_column, f.severity,
                                            f.code, f.message)
                 for f in findings]
        self.server.set_diagnostics(uri, self.SOURCE, diags)

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._check(params.text_document.uri)

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._check(params.text_document.uri)

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self.server.set_diagnostics(params.text_document.uri, self.SOURCE, [])

