"""Quick fixes for the static findings (textDocument/codeAction, kind quickfix): each fix a
finding carries becomes a code action with its WorkspaceEdit, attached to its diagnostic."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from sage_npu.server.features.base import Feature
from sage_npu.server.positions import to_range

if TYPE_CHECKING:
    from sage_npu.npu_eval.analysis import Finding
    from sage_npu.server.server import SageServer

# The static findings of a document's current text (uri -> findings), as the static checks see them.
FindingsOf = Callable[[str], "list[Finding]"]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return p.line, p.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


class QuickFixes(Feature):
    def __init__(self, server: SageServer, findings: FindingsOf) -> None:
        super().__init__(server)
        self.findings = findings

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        only = params.context.only
        if only and types.CodeActionKind.QuickFix not in only:
            return []
        uri = params.text_document.uri
        findings = self.findings(uri)
        if not any(f.fixes for f in findings):
            return []
        lines = self.server.workspace.get_text_document(uri).source.splitlines()
        encoding = self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        actions = []
        for f in findings:
            if not f.fixes:
                continue
            diag = self.server.lsp_diagnostic(lines, f.line, f.column, f.end_line, f.end_column, f.severity, f.code,
                                              f.message)
            if not _overlaps(diag.range, params.range):
                continue
            # Attach the client's own copy of the diagnostic when it sent one, so it can link them.
            sent = next((d for d in params.context.diagnostics if d.code == f.code and d.range == diag.range), diag)
            for fix in f.fixes:
                edits = [types.TextEdit(range=to_range(lines, e.line, e.column, e.end_line, e.end_column, encoding),
                                        new_text=e.new_text) for e in fix.edits]
                actions.append(types.CodeAction(
                    title=fix.title, kind=types.CodeActionKind.QuickFix, diagnostics=[sent],
                    is_preferred=fix.preferred or None, edit=types.WorkspaceEdit(changes={uri: edits})))
        return actions
