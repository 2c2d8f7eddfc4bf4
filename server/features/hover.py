"""Hover on Ascend C API names: the signatures as the real headers spell them, the constraint
that bites, and the resident rules of the experience memory that mention the API; on InitBuffer,
first the Unified Buffer its class's buffers take against the chip's (server/ub_view.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace.position_codec import ServerTextPosition

from sage_npu.npu_eval.analysis import ub_usage
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.server import api_docs
from sage_npu.server.features.base import Feature
from sage_npu.server.stores import ResidentRules
from sage_npu.server.ub_view import hover_markdown, usage_at

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
        text = api_docs.markdown(entry, self.rules.about(entry.name))
        if entry.name == "InitBuffer":
            usage = usage_at(ub_usage(doc.source, chip_profile(self.server.settings.eval.chip)), pos.line + 1)
            if usage is not None:
                text = f"{hover_markdown(usage)}\n\n---\n\n{text}"
        return [types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                            range=types.Range(start=start, end=end))]
