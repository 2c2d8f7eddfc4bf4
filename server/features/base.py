"""The hooks a feature may implement, all no-ops here. The registration site (server.py) fans
each event out to every feature, each call contained: a failing feature is logged and the
others, and the server, go on.

A feature receives the server (for the LSP side: workspace, diagnostics, notifications) and
its collaborators in its constructor; it never reads another feature's attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer
    from sage_npu.server.settings import ComposedSettings


class Feature:
    def __init__(self, server: SageServer) -> None:
        self.server = server

    def commands(self) -> dict[str, Callable[..., Any]]:
        """The `workspace/executeCommand` commands this feature owns: name -> handler (sync or
        async), called with the command's arguments spread."""
        return {}

    def initialized(self, params: types.InitializedParams) -> None: ...

    def settings_changed(self, settings: ComposedSettings) -> None:
        """The editor's settings changed (also once at initialize); `settings` are the new ones."""

    def shutdown(self) -> None:
        """The client asked the server to shut down: stop workers and processes."""

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
