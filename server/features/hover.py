"""Hover on Ascend C API names: the signatures as the real headers spell them, the constraint
that bites, and the resident rules of the experience memory that mention the API."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace.position_codec import ServerTextPosition

from sage_npu.server import api_docs
from sage_npu.server.features.base import Feature
from sage_npu.server.stores import ResidentRules

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer

_WORD = re.compile(r"[A-Za-z_]\w*")


class Hovers(Feature):
    def __init__(self, server: SageServer, rules: ResidentRules) -> None:
        super().__init__(server)
        self.rules = rules   # the experience memory's resident rules, kept fresh by the suggestions feature

    def hover(self, params: types.HoverParams) -> list[types.Hover]:
        uri = params.text_document.uri
        if not self.server.is_ascendc(uri):
            return []
        doc = self.server.workspace.get_text_document(uri)
        if params.position.line >= len(doc.lines):
            return []
        pos = doc.position_from_client_units(params.position)
        line = doc.lines[pos.line].rstrip("\r\n")
        word = next((m for m in _WORD.finditer(line) if m.start() <= pos.character <= m.end()), None)
        if word is None:
            return []
        entry = api_docs.lookup(word.group())
        if entry is None:
            return []
        after_member = line[:word.start()].rstrip().endswith((".", "->"))
        if entry.member != after_member:
            return []  # `op.Add(...)` is the user's method, `AllocTensor` alone is not the queue's
        start = doc.position_to_client_units(ServerTextPosition(line=pos.line, character=word.start()))
        end = doc.position_to_client_units(ServerTextPosition(line=pos.line, character=word.end()))
        return [types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                         value=api_docs.markdown(entry, self.rules.about(entry.name))),
            range=types.Range(start=start, end=end))]
