"""Results one feature produces and others read, each in a small object handed to both at the
registration site (server.py): evaluation writes the reports the code lenses show, the
suggestions feature refreshes the resident rules hover shows. No feature reads another's
attributes."""

from __future__ import annotations

import re
from pathlib import Path

from sage_npu.agent.worker import ResidentRule
from sage_npu.npu_eval.report import Report


class ReportStore:
    """The latest evaluation report of each task, and the one before it ("change since last run")."""

    def __init__(self) -> None:
        self._latest: dict[Path, Report] = {}
        self._previous: dict[Path, Report] = {}

    def put(self, task_root: Path, report: Report) -> None:
        if task_root in self._latest:
            self._previous[task_root] = self._latest[task_root]
        self._latest[task_root] = report

    def for_kernel(self, kernel: Path) -> tuple[Report, Report | None] | None:
        """The latest report whose kernel is `kernel` (resolved), with the report before it."""
        kernel = kernel.resolve()
        for root, report in self._latest.items():
            if Path(report.kernel).resolve() == kernel:
                return report, self._previous.get(root)
        return None


class ResidentRules:
    """The experience memory's resident rules, as last read from the agent process."""

    def __init__(self) -> None:
        self._rules: list[ResidentRule] = []

    def replace(self, rules: list[ResidentRule]) -> None:
        self._rules = list(rules)

    def about(self, api: str) -> list[str]:
        """Resident rules that mention the API, one Markdown line each."""
        word = re.compile(rf"\b{re.escape(api)}\b")
        return [f"`{r.id}` {r.title}" for r in self._rules if word.search(f"{r.title} {r.text}")]
