"""The offline optimizer (DESIGN section 6): with no model configured, a deterministic search
over the transform catalog. Each turn evaluates one candidate; a candidate wins only if it
is correct on every trial, has no error finding, and its estimated (or measured) time beats
the best so far. Greedy: the best candidate of a round becomes the base of the next."""

from __future__ import annotations

import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from sage_npu.agent.episode import (
    Attempt,
    OptimizeResult,
    acceptable,
    digest,
    evaluate_variant,
    faster,
    time_of,
    unified_diff,
)
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.reflection import reflect
from sage_npu.agent.transforms import Candidate, Sources, propose
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Report
from sage_npu.npu_eval.task import load_task


def optimize_offline(task_path: str | Path, evaluator: Evaluator, turns: int = 30,
                     on_attempt: Callable[[Attempt], None] | None = None,
                     recorder: EpisodeRecorder | None = None, hold: bool = False,
                     cancel: threading.Event | None = None) -> OptimizeResult:
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
    seed = evaluator.evaluate(task.root).report
    result = OptimizeResult(task=str(task.root), status="seed_not_correct", seed=seed, best=seed, speedup=1.0,
                            turns=0, episode_id=episode, best_files=dict(files))
    if recorder is not None:
        recorder.attempt(0, seed.status, time_of(seed), None)
    if not acceptable(seed) or task.host is None:
        if recorder is not None:
            result.memory = recorder.credit(0)
        return result
    best_files, best, best_t = dict(files), seed, time_of(seed)
    tried = {digest(files)}
    used = 0
    proofs: list[tuple[str, str, float, list[str]]] = []
    with tempfile.TemporaryDirectory(prefix="sage-opt-") as tmp:
        while used < turns and not (cancel is not None and cancel.is_set()):
            if recorder is not None:
                recorder.retrieve(best_files[task.kernel.name], [d.message for d in best.diagnostics])
            cands = [c for c in propose(Sources(task.kernel.name, best_files[task.kernel.name],
                                                best_files["host.py"]), chip)
                     if digest({**best_files, **c.files}) not in tried]
            if not cands:
                break
            round_best: tuple[float, Candidate, Report, Attempt] | None = None
            for cand in cands:
                if used >= turns or (cancel is not None and cancel.is_set()):
                    break
                used += 1
                trial_files = {**best_files, **cand.files}
                tried.add(digest(trial_files))
                report = evaluate_variant(evaluator, task.root, trial_files, Path(tmp) / f"turn{used}")
                t = time_of(report)
                ok = faster(report, best_t)
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
        result.speedup = time_of(seed) / best_t
        result.diff = unified_diff(files, best_files)
    else:
        result.status = "no_improvement"
    if recorder is not None:
        if hold and result.status == "improved":
            recorder.hold(used)
        else:
            result.memory = recorder.credit(used)
        result.new_experiences = reflect(recorder, proofs) if result.status == "improved" else []
        result.best_attempt_id = next((a.attempt_id for a in reversed(result.attempts) if a.chosen), "")
    return result
