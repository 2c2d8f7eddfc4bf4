"""The branches of a source's `#if`/`#ifdef` blocks the build's -D defines select, for the scans
that read a kernel file as text before compiling it (build.coop_define: which kernel type, whether
ASCENDC_CUBE_ONLY is defined). The samples pick their kernel's qualifier by `#if SCENARIO_NUM == 2`;
reading every branch would take the type of a scenario not built.

Only the conditionals are evaluated, with the given defines and the `#define`/`#undef` lines of the
source itself (no includes: a macro from a header is unknown). A condition that cannot be decided
(an unknown macro in an arithmetic test, an expression this evaluator does not read) keeps all its
branches, as the text scans did before: wrong only by being too inclusive.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w+)(.*)$")
_TOKEN = re.compile(r"\s*(defined\s*\(\s*\w+\s*\)|defined\s+\w+|0[xX][0-9a-fA-F]+|\d+|\w+|"
                    r"&&|\|\||==|!=|<=|>=|[<>!()+\-*/%])")
_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.BinOp,
            ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE,
            ast.Gt, ast.GtE, ast.Constant)
_OPS = {"&&": " and ", "||": " or ", "!": " not ", "/": "//"}


def _int(value: str) -> int | None:
    try:
        v = value.strip().rstrip("uUlL")
        return int(v, 8) if re.fullmatch(r"0[0-7]+", v) else int(v, 0)
    except ValueError:
        return None


def evaluate(expr: str, macros: Mapping[str, str]) -> bool | None:
    """An `#if` expression's truth with these macros defined, or None when it cannot be decided."""
    expr = re.sub(r"/[/*].*$", "", expr).strip()
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            return None
        tok, pos = m.group(1), m.end()
        if tok.startswith("defined"):
            out.append("1" if re.sub(r"defined|[\s()]", "", tok) in macros else "0")
        elif tok[0].isalnum() or tok[0] == "_":
            value = _int(tok) if tok[0].isdigit() else (_int(macros[tok]) if tok in macros else None)
            if value is None:
                return None
            out.append(str(value))
        else:
            out.append(_OPS.get(tok, tok))
    try:
        tree = ast.parse(" ".join(out), mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(n, _ALLOWED) for n in ast.walk(tree)):
        return None
    try:
        return bool(eval(compile(tree, "<#if>", "eval"), {"__builtins__": {}}))  # only checked int operators
    except ArithmeticError:
        return None


def _condition(word: bytes, rest: str, macros: Mapping[str, str]) -> bool | None:
    name = rest.split("//")[0].strip()
    if word == b"ifdef":
        return name in macros
    if word == b"ifndef":
        return name not in macros
    return evaluate(rest, macros)


def active_text(src: bytes, defines: Mapping[str, str] | None = None) -> bytes:
    """`src` with the lines of branches the conditionals exclude blanked (line numbers kept)."""
    macros = dict(defines or {})
    # per open #if: (the enclosing branch is live, a branch was taken or None if undecided, this branch's truth)
    stack: list[tuple[bool, bool | None, bool | None]] = []
    lines = src.split(b"\n")
    for i, line in enumerate(lines):
        live = all(s[2] is not False for s in stack)
        m = _DIRECTIVE.match(line)
        word, rest = (m.group(1), m.group(2).decode(errors="replace")) if m else (b"", "")
        if word in (b"if", b"ifdef", b"ifndef"):
            c = _condition(word, rest, macros) if live else False
            stack.append((live, c, c))
        elif word in (b"elif", b"else") and stack:
            outer, taken, _ = stack[-1]
            c = (True if word == b"else" else evaluate(rest, macros)) if outer else False
            now = False if taken is True else (None if taken is None and c is not False else c)
            stack[-1] = (outer, True if taken is True or now is True else (None if None in (taken, now) else False),
                         now)
        elif word == b"endif" and stack:
            stack.pop()
        elif not live:
            lines[i] = b""
        elif word == b"define" and (d := rest.split(None, 1)):
            macros[d[0].split("(")[0]] = d[1].strip() if len(d) > 1 else ""
        elif word == b"undef" and rest.split():
            macros.pop(rest.split()[0], None)
    return b"\n".join(lines)
