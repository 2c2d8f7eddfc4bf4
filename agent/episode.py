"""What every episode shares, whichever searcher drives it (the offline catalog or a model):
the attempt and result records, when a candidate counts, how a variant is evaluated, and the
suggestion written next to the task (DESIGN sections 6 and 9)."""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from sage_npu.memory.episodes import CreditResult
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Report

MIN_GAIN = 0.02  # a candidate must be at least 2% faster to count as better (estimates are noisy at the margin)


@dataclass
class Attempt:
    turn: int
    transform: str               # the catalog transform, or "model" for an LLM rewrite
    description: str
    status: str                  # the Report status, or "malformed" / "llm_error" when nothing was evaluated
    estimated_us: float | None
    improves: bool               # correct and faster than the base it was applied to
    tags: tuple[str, ...] = ()
    chosen: bool = False         # kept as the next base
    attempt_id: str = ""         # its id in the memory's attempts table
    adopted: tuple[str, ...] = ()  # memory item ids the turn declared it followed


@dataclass
class OptimizeResult:
    task: str
    status: str                  # "improved" | "fixed" | "no_improvement" | "seed_not_correct"
    seed: Report
    best: Report
    speedup: float
    turns: int
    episode_id: str
    attempts: list[Attempt] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)     # descriptions of the accepted changes
    best_files: dict[str, str] = field(default_factory=dict)
    diff: str = ""
    memory: CreditResult | None = None          # the episode's ATU credit, when a memory is used
    best_attempt_id: str = ""                   # the memory's id of the best candidate's attempt
    new_experiences: list[str] = field(default_factory=list)
    model: str = "offline"
    tokens: int = 0                             # LLM tokens the episode used (prompt + completion)
    error: str = ""                             # why the episode stopped early (a dead endpoint, say)

    def to_json(self) -> dict:
        return {"task": self.task, "status": self.status, "seed": self.seed.model_dump(mode="json"),
                "best": self.best.model_dump(mode="json"), "speedup": self.speedup, "turns": self.turns,
                "episode_id": self.episode_id, "applied": self.applied, "model": self.model, "tokens": self.tokens,
                "error": self.error or None,
                "attempts": [a.__dict__ | {"tags": list(a.tags), "adopted": list(a.adopted)} for a in self.attempts],
                "diff": self.diff, "memory": self.memory.model_dump(mode="json") if self.memory else None,
                "new_experiences": self.new_experiences}


def time_of(r: Report) -> float | None:
    return r.timing.estimated_us if r.timing is not None else None


def acceptable(r: Report) -> bool:
    """Correct on every trial, no error finding, and timed: only such a kernel may be suggested."""
    return r.status == "correct" and not r.errors() and r.timing is not None


def faster(r: Report, than_us: float | None) -> bool:
    t = time_of(r)
    return acceptable(r) and t is not None and (than_us is None or t < than_us * (1 - MIN_GAIN))


def digest(files: dict[str, str]) -> str:
    return hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(files.items())).encode()).hexdigest()


def evaluate_variant(evaluator: Evaluator, root: Path, files: dict[str, str], where: Path) -> Report:
    """Evaluate the task with `files` replaced, in a copy: the person's folder is never touched."""
    shutil.copytree(root, where, ignore=shutil.ignore_patterns(".sage", "__pycache__"))
    for name, text in files.items():
        (where / name).write_text(text)
    return evaluator.evaluate(where).report


def unified_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """A patch of the changed files that `patch`/`git apply` (and the editor) can apply: a last line
    without a newline gets the marker diff(1) writes, instead of running into the next line."""
    out = []
    for name in sorted(after):
        if before.get(name) != after[name]:
            for line in difflib.unified_diff(before.get(name, "").splitlines(keepends=True),
                                             after[name].splitlines(keepends=True), f"a/{name}", f"b/{name}"):
                out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_suggestion(result: OptimizeResult) -> Path:
    """The best candidate next to the task: `<task>/.sage/suggestion/` with its files and diff."""
    out = Path(result.task) / ".sage" / "suggestion"
    out.mkdir(parents=True, exist_ok=True)
    for name, text in result.best_files.items():
        (out / name).write_text(text)
    (out / "suggestion.diff").write_text(result.diff)
    return out


def apply_suggestion(result: OptimizeResult) -> list[str]:
    """Replace the task's kernel and host.py, only with a correct candidate."""
    if result.status not in ("improved", "fixed") or not acceptable(result.best):
        return []
    changed = []
    for name, text in result.best_files.items():
        p = Path(result.task) / name
        if p.read_text() != text:
            p.write_text(text)
            changed.append(name)
    return changed
