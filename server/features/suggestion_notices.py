"""A suggestion and what the server tells clients about episodes: the wire models of
`sage/suggestion`, `sage/episode` and `sage/decision` (camelCase on the wire) and the lines a
person reads (progress, the end of an episode)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from sage_npu.agent.episode import SUGGESTING, EpisodeStatus
from sage_npu.agent.progress import turn_line
from sage_npu.agent.worker import OptimizeResult, Progress, TokensProgress
from sage_npu.npu_eval.report import labelled
from sage_npu.server.features.decisions import read_disk


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class SuggestedFile(_Wire):
    """One file of a suggestion: where it is and its whole suggested text."""

    path: str   # absolute
    name: str   # relative to the task folder, as the diff names it
    text: str


class SuggestionNotice(_Wire):
    """The `sage/suggestion` notification's parameters (camelCase on the wire); the apply code
    action carries the same as its `data`."""

    uri: str
    task: str
    title: str
    episode_id: str
    attempt_id: str
    speedup: float | None
    estimated: bool   # the speedup comes from the CPU cost model
    files: list[SuggestedFile]
    diff: str         # unified diff of the same change, a/<name> to b/<name>


class EpisodeNotice(_Wire):
    """The `sage/episode` notification: an episode ended (`message` is the line shown with
    window/showMessage too)."""

    uri: str
    task: str
    status: EpisodeStatus | Literal["failed"]   # "failed": the agent process could not run it
    message: str
    episode_id: str | None = None
    speedup: float | None = None    # the verified gain of the suggestion; None when there is none
    estimated: bool = True
    title: str | None = None        # the suggestion's code-action title, when there is one
    turns: int = 0
    model: str = "offline"          # "offline": the catalog optimizer, no model configured
    error: str | None = None        # why it stopped early ("cancelled", a dead endpoint, ...)


class DecisionNotice(_Wire):
    """The `sage/decision` notification: what became of a suggestion, and whether the memory logged it."""

    task: str
    episode_id: str
    decision: Literal["accept", "reject", "timeout"]
    reason: str
    logged: bool
    reward: float | None = None


@dataclass
class Suggestion:
    task_root: Path
    result: OptimizeResult
    files: list[SuggestedFile] = field(default_factory=list)   # the files it changes, whole

    @classmethod
    def of(cls, task_root: Path, result: OptimizeResult) -> Suggestion:
        """The suggestion with the files it changes against their text on disk now."""
        files = []
        for name, text in result.best_files.items():
            path = task_root / name
            if read_disk(path) != text:   # None: a file the suggestion creates
                files.append(SuggestedFile(path=str(path.resolve()), name=name, text=text))
        return cls(task_root, result, files)

    @property
    def gain(self) -> str:
        """The verified gain, labelled as an estimate when it is one."""
        t = self.result.best.timing
        estimated = t is None or t.estimated
        if self.result.status == "fixed" and t is not None:
            return f"now correct ({labelled(f'{t.estimated_us:.2f} us', estimated)})"
        return f"{labelled(f'{self.result.speedup:.2f}x', estimated)} faster"

    @property
    def title(self) -> str:
        c = self.result.best.correctness
        t = self.result.best.timing
        passed = c.passed if c is not None else 0
        estimated = t is None or t.estimated
        if self.result.status == "fixed" and t is not None:
            return f"SAGE fix: correct on {passed} trials ({labelled(f'{t.estimated_us:.2f} us', estimated)})"
        return f"SAGE rewrite: {labelled(f'{self.result.speedup:.2f}x', estimated)}, correct on {passed} trials"

    def notice(self, uri: str) -> SuggestionNotice:
        r = self.result
        return SuggestionNotice(uri=uri, task=str(self.task_root), title=self.title, episode_id=r.episode_id,
                                attempt_id=r.best_attempt_id, speedup=r.speedup, estimated=r.best.backend != "ascend",
                                files=self.files, diff=r.diff)


def progress_message(p: Progress) -> str:
    """One line for the client's progress display."""
    if isinstance(p, TokensProgress):
        return f"the model is answering ({p.chars} characters)"
    # The CLI's turn line (what it was compared with, why a failed candidate failed, the best so
    # far; a wrong kernel gets no time), with its column padding collapsed for a one-line display.
    return " ".join(turn_line(p.attempt).split())


def episode_message(kernel: str, result: OptimizeResult, sug: Suggestion | None) -> str:
    """The line a person sees when an episode ends: the verified gain, or why there is none."""
    who = "offline optimizer, no model configured" if result.model == "offline" else f"model {result.model}"
    turns = f"{result.turns} turn{'s' if result.turns != 1 else ''}, {who}"
    if sug is not None:
        text = (f"SAGE: {kernel}: verified rewrite, {sug.gain}, correct on every trial ({turns}). "
                "Code actions: apply it (saving it logs your acceptance), show its diff, or reject it.")
    elif result.status in SUGGESTING:
        text = f"SAGE: {kernel}: the best kernel found is the one on disk now ({turns}): nothing to suggest."
    elif result.status == "no_improvement":
        text = f"SAGE: {kernel}: no faster correct kernel found ({turns}): no gain to suggest."
    else:
        text = (f"SAGE: {kernel}: no correct kernel found ({turns}): fix the kernel first "
                "(its diagnostics say what fails).")
    if result.error == "cancelled":
        text += " The episode was cancelled."
    elif result.error:
        text += f" It stopped early: {result.error}."
    return text
