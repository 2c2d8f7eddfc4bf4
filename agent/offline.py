"""The offline optimizer (DESIGN section 6): with no model configured, a deterministic search
over the transform catalog. Each turn evaluates one candidate; a candidate wins only if it
is correct on every trial, has no error finding, and its estimated (or measured) time beats
the best so far. Greedy: the best candidate of a round becomes the base of the next."""

from __future__ import annotations

import difflib
import hashlib
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.transforms import Candidate, Sources, propose
from sage_npu.memory.episodes import CreditResult
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Report
from sage_npu.npu_eval.task import load_task

MIN_GAIN = 0.02  # a candidate must be at least 2% faster to count as better (estimates are noisy at the margin)


@dataclass
class Attempt:
    turn: int
    transform: str
    description: str
    status: str
    estimated_us: float | None
    improves: bool               # correct and faster than the base it was applied to
    tags: tuple[str, ...] = ()
    chosen: bool = False         # the round's best, kept as the next base
    attempt_id: str = ""         # its id in the memory's attempts table


@dataclass
class OptimizeResult:
    task: str
    status: str                  # "improved" | "no_improvement" | "seed_not_correct"
    seed: Report
    best: Report
    speedup: float
    turns: int
    episode_id: str
    attempts: list[Attempt] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)     # descriptions of the accepted transforms
    best_files: dict[str, str] = field(default_factory=dict)
    diff: str = ""
    memory: CreditResult | None = None          # the episode's ATU credit, when a memory is used
    best_attempt_id: str = ""                   # the memory's id of the best candidate's attempt
    new_experiences: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"task": self.task, "status": self.status, "seed": self.seed.model_dump(mode="json"),
                "best": self.best.model_dump(mode="json"), "speedup": self.speedup, "turns": self.turns,
                "episode_id": self.episode_id, "applied": self.applied,
                "attempts": [a.__dict__ | {"tags": list(a.tags)} for a in self.attempts], "diff": self.diff,
                "memory": self.memory.model_dump(mode="json") if self.memory else None,
                "new_experiences": self.new_experiences}


def _time(r: Report) -> float | None:
    return r.timing.estimated_us if r.timing is not None else None


def _acceptable(r: Report) -> bool:
    return r.status == "correct" and not r.errors() and r.timing is not None


def _digest(files: dict[str, str]) -> str:
    return hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(files.items())).encode()).hexdigest()


def optimize_offline(task_path: str | Path, evaluator: Evaluator, turns: int = 30,
                     on_attempt: Callable[[Attempt], None] | None = None,
                     recorder: EpisodeRecorder | None = None, hold: bool = False) -> OptimizeResult:
    """Search the catalog for `turns` evaluations at most. With a recorder, each turn is
    shown the memory's items for this operator and declares which it followed; the episode is
    credited (ATU), or with `hold` recorded open for a person's decision, and what proved itself
    is written back as new experiences."""
    task = load_task(task_path)
    episode = recorder.episode_id if recorder is not None else uuid.uuid4().hex
    chip = chip_profile(evaluator.settings.chip)
    files = {task.kernel.name: task.kernel.read_text()}
    if task.host is not None:
        files["host.py"] = task.host.read_text()
    seed = evaluator.evaluate(task.root)
    result = OptimizeResult(task=str(task.root), status="seed_not_correct", seed=seed, best=seed, speedup=1.0,
                            turns=0, episode_id=episode, best_files=dict(files))
    if recorder is not None:
        recorder.attempt(0, seed.status, _time(seed), None)
    if not _acceptable(seed) or task.host is None:
        if recorder is not None:
            result.memory = recorder.credit(0)
        return result
    best_files, best, best_t = dict(files), seed, _time(seed)
    tried = {_digest(files)}
    used = 0
    proofs: list[tuple[str, str, float, list[str]]] = []
    with tempfile.TemporaryDirectory(prefix="sage-opt-") as tmp:
        while used < turns:
            if recorder is not None:
                recorder.retrieve(best_files[task.kernel.name], [d.message for d in best.diagnostics])
            cands = [c for c in propose(Sources(task.kernel.name, best_files[task.kernel.name],
                                                best_files["host.py"]), chip)
                     if _digest({**best_files, **c.files}) not in tried]
            if not cands:
                break
            round_best: tuple[float, Candidate, Report, Attempt] | None = None
            for cand in cands:
                if used >= turns:
                    break
                used += 1
                trial_files = {**best_files, **cand.files}
                tried.add(_digest(trial_files))
                report = _evaluate_variant(evaluator, task.root, trial_files, Path(tmp) / f"turn{used}")
                t = _time(report)
                ok = _acceptable(report) and t is not None and t < best_t * (1 - MIN_GAIN)
                att = Attempt(used, cand.transform, cand.description, report.status, t, ok, cand.tags)
                if recorder is not None:
                    att.attempt_id = recorder.attempt(used, report.status, t, cand.transform)
                if ok and (round_best is None or t < round_best[0]):
                    round_best = (t, cand, report, att)
                result.attempts.append(att)
                if on_attempt:
                    on_attempt(att)
            if round_best is None:
                break
            prev_t = best_t
            best_t, cand, best, att = round_best
            att.chosen = True
            proofs.append((att.attempt_id, cand.description, prev_t / best_t, list(cand.tags)))
            best_files = {**best_files, **cand.files}
            result.applied.append(cand.description)
    result.turns = used
    result.best, result.best_files = best, best_files
    if best is not seed:
        result.status = "improved"
        result.speedup = _time(seed) / best_t
        result.diff = _diff(files, best_files)
    else:
        result.status = "no_improvement"
    if recorder is not None:
        if hold and result.status == "improved":
            recorder.hold(used)
        else:
            result.memory = recorder.credit(used)
        result.new_experiences = recorder.reflect(proofs) if result.status == "improved" else []
        result.best_attempt_id = next((a.attempt_id for a in reversed(result.attempts) if a.chosen), "")
    return result


def _evaluate_variant(evaluator: Evaluator, root: Path, files: dict[str, str], where: Path) -> Report:
    shutil.copytree(root, where, ignore=shutil.ignore_patterns(".sage", "__pycache__"))
    for name, text in files.items():
        (where / name).write_text(text)
    return evaluator.evaluate(where)


def _diff(before: dict[str, str], after: dict[str, str]) -> str:
    out = []
    for name in sorted(after):
        if before.get(name) != after[name]:
            out.extend(difflib.unified_diff(before.get(name, "").splitlines(keepends=True),
                                            after[name].splitlines(keepends=True), f"a/{name}", f"b/{name}"))
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
    """Replace the task's kernel and host.py, only for a correct improvement."""
    if result.status != "improved" or not _acceptable(result.best):
        return []
    changed = []
    for name, text in result.best_files.items():
        p = Path(result.task) / name
        if p.read_text() != text:
            p.write_text(text)
            changed.append(name)
    return changed
