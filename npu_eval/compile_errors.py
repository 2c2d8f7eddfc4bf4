"""Turn the compiler's text output into one actionable diagnostic per error, on the user's
line: an error inside the emulator's headers is moved to the user frame that led there (the
call in the user's code), and a template wall is condensed to its first line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_LOC = re.compile(r"^(?P<file>[^:\n]+?):(?P<line>\d+):(?P<col>\d+):\s+(?P<rest>.*)$")
_KIND = re.compile(r"^(?P<kind>fatal error|error|warning|note):\s*(?P<msg>.*)$")
_TAG = re.compile(r"\[(?P<code>[a-z-]+)\]\s*(?P<msg>.*)")
_LINKER = re.compile(r"undefined reference to [`'](?P<sym>[^'`]+)'")


@dataclass
class CompileDiagnostic:
    file: str
    line: int
    column: int
    severity: str
    code: str
    message: str


def _condense(msg: str) -> str:
    msg = msg.replace("sage::sim::", "")
    msg = re.sub(r"\s+", " ", msg).strip()
    # Shorten deeply nested template argument lists: keep the outer name.
    for _ in range(3):
        msg = re.sub(r"<[^<>]{60,}>", "<...>", msg)
    return msg if len(msg) <= 240 else msg[:237] + "..."


def _char_column(path: str, line: int, byte_col: int) -> int:
    """The compiler counts bytes (-fdiagnostics-column-unit=byte); reports count characters."""
    try:
        with open(path, "rb") as f:
            for i, text in enumerate(f, 1):
                if i == line:
                    return len(text[: byte_col - 1].decode("utf-8", errors="ignore")) + 1
    except OSError:
        pass
    return byte_col


def parse(output: str, user_files: set[str], fallback: tuple[str, int]) -> list[CompileDiagnostic]:
    """`user_files` are resolved paths the user owns (kernel, its headers, host.py); errors
    elsewhere move to the nearest user frame of their context, or to `fallback`."""

    def is_user(path: str) -> bool:
        try:
            return str(Path(path).resolve()) in user_files
        except OSError:
            return False

    diags: list[CompileDiagnostic] = []
    context: list[tuple[str, int, int]] = []  # user frames seen since the last error
    seen = set()
    for raw in output.splitlines():
        m = _LOC.match(raw)
        if not m:
            if raw.startswith("In file included from") or raw.endswith(":") and "In " in raw:
                pass
            lm = _LINKER.search(raw)
            if lm:
                d = CompileDiagnostic(fallback[0], fallback[1], 1, "error", "compile-error",
                                      f"undefined reference to {_condense(lm.group('sym'))}: declared but "
                                      "never defined (a missing function body, or an API the emulator lacks)")
                if (d.file, d.line, d.message) not in seen:
                    seen.add((d.file, d.line, d.message))
                    diags.append(d)
            continue
        file, line, col, rest = m.group("file"), int(m.group("line")), int(m.group("col")), m.group("rest")
        k = _KIND.match(rest)
        if not k:
            # "required from here", "required from 'void f()'", "In instantiation of": a frame.
            if is_user(file):
                context.append((file, line, col))
            continue
        kind, msg = k.group("kind"), k.group("msg")
        if kind == "note":
            continue
        if kind == "warning":
            context.clear()
            continue
        if is_user(file):
            where = (file, line, col)
        elif context:
            where = context[0]
        else:
            where = (fallback[0], fallback[1], 1)
        context.clear()
        code = "compile-error"
        t = _TAG.search(msg)
        if t and "static assert" in msg:
            code, msg = t.group("code"), t.group("msg")
        msg = _condense(msg)
        key = (where[0], where[1], msg)
        if key in seen:
            continue
        seen.add(key)
        diags.append(CompileDiagnostic(where[0], where[1], _char_column(where[0], where[1], where[2]), "error",
                                       code, msg))
    return diags
