"""Verified advice (docs/advisor.md): after an evaluation, the top advisor finding that the offline
optimizer's catalog can make (agent/transforms.py `for_finding`) is applied to a copy of the task
and evaluated in the background on the configured backend (correctness and the estimate, or on
the device the measured time); only when the copy is correct and faster does the finding get a
code action, titled with the verified gain, whose edit is the transformed file. The edit is
offered while the file still reads as it did when evaluated."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from sage_npu.agent.calibration import calibration_refusal
from sage_npu.agent.episode import Candidate
from sage_npu.agent.transforms import Sources, for_finding
from sage_npu.agent.worker import Calibration
from sage_npu.npu_eval.chips import UnknownChip, chip_profile
from sage_npu.npu_eval.report import AdviceFinding, Report, labelled
from sage_npu.npu_eval.task import Task, TaskError, load_task
from sage_npu.server.features.base import Feature

if TYPE_CHECKING:
    from sage_npu.server.server import SageServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VerifiedChange:
    """A finding's change, verified: the file it edits, its text before and after, and the title."""

    finding: AdviceFinding
    file: Path
    before: str
    after: str
    title: str


def candidate(task: Task, report: Report) -> tuple[AdviceFinding, Candidate] | None:
    """The largest-saving finding the catalog can make, with its candidate."""
    if task.host is None:
        return None
    try:
        chip = chip_profile(report.chip)
        src = Sources(task.kernel.name, task.kernel.read_text(), task.host.read_text())
    except (OSError, UnknownChip):
        return None
    for f in report.advice:
        c = for_finding(f, src, chip)
        if c is not None and c.files:
            return f, c
    return None


def variant(task: Task, files: dict[str, str], dest: Path) -> Task | None:
    """The task copied to `dest` with `files` (name -> text) replaced."""
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for p in (task.kernel, task.host, task.reference):
            if p is not None:
                shutil.copy2(p, dest / p.name)
        for name, text in files.items():
            (dest / name).write_text(text)
        return load_task(dest)
    except (OSError, TaskError):
        return None


def delivered(before: Report, after: Report | None) -> float | None:
    """The time the change saved, when its copy evaluated correct: the estimate before minus after on
    the emulator, the measured time before minus after on the device; None when the two times are
    not of one kind (a model figure against a measurement says nothing)."""
    if after is None or after.status != "correct" or after.timing is None or before.timing is None:
        return None
    if after.timing.estimated != before.timing.estimated:
        return None
    return before.timing.estimated_us - after.timing.estimated_us


def calibration(task: Task, finding: AdviceFinding, before: Report, after: Report | None) -> Calibration | None:
    """The finding's estimated saving beside the delivered one (measured, on the device), when its
    change evaluated correct and agent/calibration.py's guard takes the times."""
    saved = delivered(before, after)
    if saved is None or after is None or after.timing is None or before.timing is None:
        return None
    refused = calibration_refusal(finding.saving_us, before.timing, after.timing)
    if refused is not None:
        log.info("not calibrating %s (%s): %s", finding.code, finding.change, refused)
        return None
    return Calibration(code=finding.code, change=finding.change, operator=task.root.name,
                       estimated_us=finding.saving_us, delivered_us=round(saved, 4), verified_by="editor",
                       measured=not after.timing.estimated)


def verified(task: Task, finding: AdviceFinding, c: Candidate, before: Report, after: Report | None
             ) -> VerifiedChange | None:
    """The change when its evaluation is correct and faster than the one it came from; on the device
    the gain is measured (the device's times of the original and of the copy), beside the CPU
    model's estimate the finding made."""
    gain = delivered(before, after)
    if gain is None or gain <= 0 or after is None or after.timing is None or after.correctness is None:
        return None
    name, text = next(iter(c.files.items()))
    file = task.host if name == "host.py" and task.host is not None else task.kernel
    try:
        old = file.read_text()
    except OSError:
        return None
    trials = f"{after.correctness.passed}/{after.correctness.trials}"
    model = after.timing.estimated
    title = (f"SAGE: {finding.change}: verified {labelled(f'{gain:.2f} us faster', model)}"
             f"{'' if model else ' (device)'}, correct on {trials} trials "
             f"({'estimated' if model else 'the CPU model estimated'} {finding.saving_us:.2f})")
    return VerifiedChange(finding, file.resolve(), old, text, title)


class AdviceActions(Feature):
    """The verified changes (task root -> change), written by the evaluation, offered here."""

    def __init__(self, server: SageServer, changes: dict[Path, VerifiedChange]) -> None:
        super().__init__(server)
        self.changes = changes

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        out = []
        for change in self.changes.values():
            if change.file.as_uri() != uri or Path(change.finding.file).resolve() != change.file:
                continue
            doc = self.server.workspace.text_documents.get(uri)
            if (doc.source if doc is not None else change.before) != change.before:
                continue  # edited since: the verified edit no longer fits
            line = change.finding.line - 1
            if not params.range.start.line <= line <= params.range.end.line:
                continue
            end = types.Position(line=len(change.before.splitlines()) + 1, character=0)
            edit = types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end),
                                  new_text=change.after)
            out.append(types.CodeAction(title=change.title, kind=types.CodeActionKind.QuickFix, is_preferred=True,
                                        edit=types.WorkspaceEdit(changes={uri: [edit]})))
        return out
