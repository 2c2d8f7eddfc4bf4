"""What a static rule reports: a `Finding` at a span of the source, with optional `Fix`es made of
text `Edit`s, and the `Rule` that produces them.

Positions follow the Report's `Diagnostic`: lines count from 1, columns count characters (not
bytes, not UTF-16 units) from 1, and an end is exclusive. The server converts them to the
client's encoding; the Report takes them as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import tree_sitter as ts

from sage_npu.npu_eval.analysis.model import Function, KernelModel
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.codes import DiagnosticCode
from sage_npu.npu_eval.report import Diagnostic, Severity

BLOCK = 32  # bytes: the unit of DataCopy and of UB operand alignment


@dataclass
class Edit:
    """Replace the text between two (1-based line, 1-based character column) points."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass
class Fix:
    """A quick fix: its title as the editor lists it, and the edits that make it."""

    title: str
    edits: list[Edit]
    preferred: bool = False


@dataclass
class Finding:
    """One static finding: a span (see the module docstring), a severity and code as in the
    Report's diagnostics, a message a user can act on, and the fixes that are safe to offer."""

    line: int
    column: int
    end_line: int
    end_column: int
    severity: Severity
    code: DiagnosticCode
    message: str
    fixes: list[Fix] = field(default_factory=list)

    def diagnostic(self, file: str) -> Diagnostic:
        """The finding as a Report diagnostic on `file` (the fixes stay with the editor)."""
        return Diagnostic(file=file, line=self.line, column=self.column, end_line=self.end_line,
                          end_column=self.end_column, severity=self.severity, code=self.code, message=self.message)


@dataclass(frozen=True)
class Rule:
    """A static rule. `in_report` False keeps its findings to the editor: they are hints too
    noisy or too speculative to sit among an evaluation's diagnostics."""

    check: Callable[[KernelModel, ChipProfile], list[Finding]]
    codes: tuple[str, ...]
    in_report: bool = True


def finding(m: KernelModel, node: ts.Node, severity: Severity, code: DiagnosticCode, message: str,
            fixes: list[Fix] | None = None) -> Finding:
    return Finding(*m.span(node), severity, code, message, fixes or [])


def replace(m: KernelModel, node: ts.Node, text: str) -> Edit:
    line, col, end_line, end_col = m.span(node)
    return Edit(line, col, end_line, end_col, text)


def round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


ScopeKey = tuple[str, str | int]  # ("class", its name) or ("function", its node id)


def scope_key(fn: Function | None) -> ScopeKey | None:
    """Buffers and queues belong to a class (its methods share them), else to their function."""
    if fn is None:
        return None
    return ("class", fn.klass) if fn.klass else ("function", fn.node.id)


def indent(m: KernelModel, n: ts.Node) -> str:
    """The leading whitespace of the line a node starts on."""
    line = m.lines[n.start_point[0]].decode("utf-8", errors="replace")
    return line[:len(line) - len(line.lstrip())]
