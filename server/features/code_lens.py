"""Code lenses: on the kernel entry, the Unified Buffer its buffers take against the chip's (from
the source, before any evaluation) and the evaluation summary (status, estimated time,
bottleneck, change since the last run); the estimated cost on hot lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from sage_npu.npu_eval.analysis import ub_usage
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.report import Report, labelled
from sage_npu.npu_eval.signature import find_entries
from sage_npu.server.features.base import Feature
from sage_npu.server.stores import ReportStore
from sage_npu.server.ub_view import lens_title

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer


def summary(report: Report, previous: Report | None) -> str:
    parts = [report.status.replace("_", " ")]
    c = report.correctness
    if c is not None and report.status in ("correct", "mismatch"):
        parts[0] += f" {c.passed}/{c.trials}"
    t = report.timing
    if t is not None:
        parts.append(labelled(f"{t.estimated_us:.2f} us", t.estimated))
        parts.append(f"bottleneck {t.bottleneck}")
        p = previous.timing if previous is not None else None
        if p is not None and p.estimated_us > 0:
            ratio = p.estimated_us / t.estimated_us
            if abs(ratio - 1) >= 0.005:
                parts.append(f"{ratio:.2f}x vs last run")
    if report.advice:
        top = report.advice[0]
        parts.append(f"top finding: {top.change}, {labelled(f'~{top.saving_us:.2f} us', top.estimated)}")
    return "SAGE: " + " | ".join(parts)


class CodeLenses(Feature):
    def __init__(self, server: SageServer, reports: ReportStore) -> None:
        super().__init__(server)
        self.reports = reports

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        if not self.server.settings.server.code_lens or not self.server.is_ascendc(uri):
            return []
        path = Path(to_fs_path(uri) or "").resolve()
        doc = self.server.workspace.get_text_document(uri)
        entries = find_entries(doc.source.encode("utf-8"))
        line = (entries[0].line - 1) if entries else 0

        def at(ln: int, title: str) -> types.CodeLens:
            pos = types.Position(line=ln, character=0)
            return types.CodeLens(range=types.Range(start=pos, end=pos), command=types.Command(title=title, command=""))

        chip = chip_profile(self.server.settings.eval.chip)
        lenses = [at(line, lens_title(u)) for u in ub_usage(doc.source, chip)]
        found = self.reports.for_kernel(path)
        if found is None:
            return lenses
        report, previous = found
        lenses.insert(0, at(line, summary(report, previous)))
        if report.timing is not None:
            for h in report.timing.hot_lines:
                if Path(h.file).resolve() == path:
                    where = report.timing.profiled_core or "the slowest core"
                    lenses.append(at(h.line - 1, f"~{h.us:.3f} us on {where} (estimate)"))
        return lenses
