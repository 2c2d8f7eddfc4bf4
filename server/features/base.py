"""The hooks a feature may implement. Every hook is optional; the server calls them for each
event and contains a failing feature (logged, the others still run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer


class Feature:
    def __init__(self, server: SageServer) -> None:
        self.server = server

    def initialized(self, params: types.InitializedParams) -> None: ...

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None: ...

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None: ...

    def document_save(self, params: types.DidSaveTextDocumentParams) -> None: ...

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None: ...

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        return []

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        return []

    def hover(self, params: types.HoverParams) -> list[types.Hover]:
        return []
