"""A MultiKernelBench Ascend C candidate as an op project: the single-file form of docs/task-format.md.

A candidate (MultiKernelBench's prompts/ascendc_new_model_*.py format) is a Python file whose
top-level string assignments hold the op project's files: `host_tiling_src` (op_host/<op>_tiling.h),
`host_operator_src` (op_host/<op>.cpp) and `kernel_src` (op_kernel/<op>.cpp), with `<op>` the
kernel entry's name (`add_custom`), as that benchmark's pipeline writes them before its build.
The strings are read with `ast` (the file is never run) and written, when changed, under the
candidate's folder in `.sage/msop/<candidate>/`, which then evaluates as any op project. Each
written file starts with a `#line` directive naming the candidate and the line its string starts
on, so the compiler's errors and the emulator's faults name the lines the user edits
(`source_line` maps the other diagnostics); a string whose escapes make or join lines (`\\n`, a
backslash at a line's end) is written without one, as its lines are not the file's.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

# The strings a candidate must assign, and the file of the project each becomes ({op}: the entry).
CANDIDATE_FILES = {"host_tiling_src": "op_host/{tiling}", "host_operator_src": "op_host/{op}.cpp",
                   "kernel_src": "op_kernel/{op}.cpp"}
CANDIDATE_FOLDER = Path(".sage") / "msop"
_ENTRY = re.compile(r"\b__global__\b[^;{(]*?\bvoid\s+(\w+)\s*\(")
_TILING_INCLUDE = re.compile(r'#include\s+"(\w+_tiling\.h)"')


class CandidateError(Exception):
    """A candidate that cannot be laid out; the message says why."""


def candidate_strings(path: Path) -> dict[str, str] | None:
    """The candidate's top-level string literals by name, when it assigns every one of
    CANDIDATE_FILES; None when it is not a candidate."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return None
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value.value if isinstance(node.value, ast.Constant) else None
            text = value if isinstance(value, str) else ""  # "": not a literal
            found[node.targets[0].id] = _with_line(text, node.value, path) if text.strip() else text
    if not all(k in found for k in CANDIDATE_FILES):
        return None
    not_literal = [k for k in CANDIDATE_FILES if not found[k].strip()]
    if not_literal:
        raise CandidateError(f"{path}: {', '.join(not_literal)} must be a string literal holding the file")
    return found


def _with_line(text: str, literal: ast.expr, path: Path) -> str:
    """The string, with a `#line` directive mapping its first line to the candidate's line where
    the literal starts, when its lines are the source's lines (see the module's docstring)."""
    if not isinstance(literal, ast.Constant) or literal.end_lineno is None:
        return text
    if literal.end_lineno - literal.lineno != text.count("\n"):
        return text
    return f"#line {literal.lineno} {json.dumps(str(path.resolve()))}\n{text}"


_LINE_DIRECTIVE = re.compile(r'#line (\d+) (".*")$')


def source_line(file: Path, line: int) -> tuple[str, int]:
    """Where line `line` of a file a candidate's string was written to is in the candidate (the
    file and line as they are when the file has no `#line` directive of ours)."""
    try:
        with file.open(encoding="utf-8", errors="replace") as f:
            first = f.readline().rstrip("\n")
    except OSError:
        return str(file), line
    m = _LINE_DIRECTIVE.match(first)
    if m is None or line < 2:
        return str(file), line
    return json.loads(m.group(2)), int(m.group(1)) + line - 2


def _write_if_changed(path: Path, text: str) -> None:
    """Leave an unchanged file alone, so its build stays cached."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def lay_out(path: Path, strings: dict[str, str]) -> Path:
    """Write the candidate's op project beside it; its folder."""
    entry = _ENTRY.search(strings["kernel_src"])
    if entry is None:
        raise CandidateError(f"{path}: kernel_src has no extern \"C\" __global__ __aicore__ void entry")
    include = _TILING_INCLUDE.search(strings["host_operator_src"])
    op = entry.group(1)
    names = {"op": op, "tiling": include.group(1) if include else f"{op}_tiling.h"}
    folder = path.parent / CANDIDATE_FOLDER / path.stem
    written = {folder / pattern.format(**names) for pattern in CANDIDATE_FILES.values()}
    try:
        for key, pattern in CANDIDATE_FILES.items():
            _write_if_changed(folder / pattern.format(**names), strings[key])
        for old in [*(folder / "op_host").iterdir(), *(folder / "op_kernel").iterdir()]:
            if old not in written and old.is_file():  # an earlier version's op, renamed since
                old.unlink()
    except OSError as e:
        raise CandidateError(f"{path}: cannot write its op project under {folder}: {e.strerror}") from e
    return folder
