"""Positions: reports count lines from 1 and columns in characters from 1; LSP counts both
from 0, and columns in the client's encoding (UTF-16 code units unless negotiated)."""

from __future__ import annotations

from lsprotocol import types


def column_to_client(line_text: str, column_chars: int, encoding: str) -> int:
    prefix = line_text[: max(column_chars - 1, 0)]
    if encoding == types.PositionEncodingKind.Utf8:
        return len(prefix.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def to_range(lines: list[str], line: int, column: int, end_line: int, end_column: int, encoding: str
             ) -> types.Range:
    def pos(ln: int, col: int) -> types.Position:
        idx = min(max(ln - 1, 0), max(len(lines) - 1, 0))
        text = lines[idx] if lines else ""
        return types.Position(line=max(ln - 1, 0), character=column_to_client(text, col, encoding))

    return types.Range(start=pos(line, column), end=pos(end_line, end_column))
