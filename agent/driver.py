"""The one episode loop, whichever searcher proposes the candidates (docs/architecture.md, The agent).

The driver starts from the task's kernel (or, with none, an empty draft for the searcher to
write), evaluates the seed, and then, turn by turn, asks the searcher for candidates, evaluates
each in a copy of the task, records the attempt (with the adoption statuses it declared) in the
memory episode, and tracks the base and the best. A searcher (`Searcher`) only proposes: the
catalog of transforms (`agent/offline.py`) or a model (`agent/llm_loop.py`).

The rules, one place for both searchers:
- **Compared with**: every candidate is compared with the best so far, the best of earlier rounds
  and of the earlier candidates of its own round; it is a new best (`improves`) when it is correct on
  every trial, has no error finding, and is at least `MIN_GAIN` faster (with no correct kernel yet:
  the first correct one). A searcher proposes a round (the catalog: every neighbour of the base; a
  model: one rewrite); the round's last new best, its fastest, is kept.
- **Base**: the best correct kernel; until one exists, the latest evaluated candidate (a model
  iterates on its own fix).
- **Turns**: a turn is one evaluated candidate, or one failed proposal (an unusable answer, a round
  that only repeats files evaluated earlier in the episode, a dead endpoint, a cancelled request).
  Files whose source hash already has a verdict are never evaluated again: such candidates are
  dropped from their round, and a round left empty is a `duplicate` failed turn whose reason (the
  earlier turn and its verdict) the searcher is told, so it offers its next idea. The catalog
  proposes only files not evaluated yet (`SearchState.evaluated`).
- **Stop**: at the turn budget, on cancel, when a failed proposal is `llm_error` (the endpoint
  stays down: `OptimizeResult.error` says why) or `cancelled`, after `max_unusable` failed proposals
  in a row (a model that sends no usable candidate), or when the searcher is exhausted.
- **Hold or credit**: with `hold` (the editor), an episode that leaves a suggestion (`improved`,
  `fixed`) is recorded open for the person's accept/reject; any other episode is credited at once.
- **Reflect**: when some kept candidate beat an earlier correct kernel (a `Proof`), whether the
  episode is held or credited; the searcher writes the lessons (the model's, or the offline text).
"""

from __future__ import annotations

import logging
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sage_npu.agent.calibration import calibration_refusal
from sage_npu.agent.episode import (
    MIN_GAIN,
    SUGGESTING,
    Attempt,
    Candidate,
    FailedStatus,
    OptimizeResult,
    Proof,
    acceptable,
    attempt_status,
    digest,
    faster,
    no_kernel_report,
    stage_variant,
    time_of,
    unified_diff,
    why_not_kept,
)
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.reflection import Lessons
from sage_npu.agent.suites import has_kernel
from sage_npu.agent.transforms import Sources, for_finding
from sage_npu.memory.models import Calibration
from sage_npu.memory.retrieval import Retrieval
from sage_npu.npu_eval import scratch as scratch_dirs
from sage_npu.npu_eval.chips import ChipProfile, chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Report
from sage_npu.npu_eval.task import load_task

log = logging.getLogger(__name__)

NO_CHECK = "the task has no host.py or reference.py: nothing to check a rewrite against"
MAX_UNUSABLE = 3   # failed proposals in a row before the episode stops (agent.max_unusable_answers)


@dataclass
class SearchState:
    """What a searcher is shown when asked for candidates. It must not change it."""

    operator: str
    kernel_name: str
    reference: Path | None
    chip: ChipProfile
    turn: int                          # turns used so far
    base_files: dict[str, str]         # what candidates' files replace (empty: no kernel yet)
    base_report: Report
    best: Report | None                # the best correct kernel's report; None: nothing correct yet
    shown: Retrieval | None            # the memory items shown this turn (None without a memory)
    evaluated: frozenset[str]          # digests of every file set evaluated in this episode
    cancel: threading.Event | None = None


@dataclass(frozen=True)
class FailedTurn:
    """A proposal that failed: it costs a turn, is recorded with every shown item undeclared."""

    status: FailedStatus
    reason: str
    transform: str = "model"           # what the attempt is labelled (failed proposals come from a model)
    source_hash: str = ""              # a repeat's digest ("" when there was no code)


@dataclass(frozen=True)
class SearchStop:
    """The searcher has nothing more to propose."""

    reason: str


@dataclass(frozen=True)
class Outcome:
    """What became of one turn, for the searcher's next proposal."""

    attempt: Attempt
    report: Report | None              # None: a failed turn
    kept: bool
    base_files: dict[str, str]         # the base the candidate was applied to
    files: dict[str, str]              # the candidate's whole file set (the base's, for a failed turn)
    reason: str = ""                   # a failed turn's reason

    @property
    def change(self) -> str:
        return unified_diff(self.base_files, self.files)


class Searcher(Protocol):
    """Proposes candidates; never evaluates, keeps, records or credits."""

    model: str                         # "offline", or the model's name

    @property
    def tokens(self) -> int: ...       # model tokens used so far (0 offline)

    def propose(self, state: SearchState) -> list[Candidate] | FailedTurn | SearchStop: ...

    def observe(self, outcome: Outcome, state: SearchState) -> None: ...

    def lessons(self, operator: str, proofs: list[Proof], diff: str) -> Lessons: ...


@dataclass
class _Episode:
    """The driver's mutable state over one episode."""

    result: OptimizeResult
    root: Path
    kernel_name: str
    reference: Path | None
    seed_files: dict[str, str]
    base_files: dict[str, str]
    base_report: Report
    best: Report | None
    best_files: dict[str, str]
    reports: dict[str, Report]         # by digest: every file set evaluated
    first_ok_us: float | None          # T_first: the first correct kernel's time (speedups are over it)
    best_turn: int | None              # the turn of `best` (0: the seed)
    base_turn: int | None              # the turn of `base_files` (0: the seed; None: no kernel yet)
    turn_of: dict[str, int]            # by digest: the turn that evaluated it
    used: int = 0
    round: int = 0
    unusable: int = 0                  # failed proposals in a row
    shown: Retrieval | None = None
    proofs: list[Proof] = field(default_factory=list)


def advice_calibration(operator: str, kernel_name: str, base: dict[str, str], before: Report, files: dict[str, str],
                       after: Report, chip: ChipProfile) -> list[Calibration]:
    """The base's advisor findings whose change (`for_finding`) is exactly the evaluated file set,
    with their estimated saving beside the delivered one, when the changed kernel was correct and
    `calibration_refusal` finds nothing wrong with the times (docs/advisor.md: calibration per
    finding kind)."""
    if after.status != "correct" or after.timing is None or before.timing is None or not before.advice:
        return []
    src = Sources(kernel_name, base.get(kernel_name, ""), base.get("host.py", ""))
    out = []
    for f in before.advice:
        c = for_finding(f, src, chip)
        if c is None or not c.files or {**base, **c.files} != files:
            continue
        refused = calibration_refusal(f.saving_us, before.timing, after.timing)
        if refused is not None:
            log.info("not calibrating %s (%s): %s", f.code, f.change, refused)
            continue
        out.append(Calibration(code=f.code, change=f.change, operator=operator, estimated_us=f.saving_us,
                               delivered_us=round(before.timing.estimated_us - after.timing.estimated_us, 4),
                               verified_by="optimizer", measured=not after.timing.estimated))
    return out


class EpisodeDriver:
    """Runs one episode with `searcher` (see the module docstring for the rules)."""

    def __init__(self, evaluator: Evaluator, searcher: Searcher, *, turns: int = 30,
                 recorder: EpisodeRecorder | None = None, hold: bool = False,
                 cancel: threading.Event | None = None,
                 on_attempt: Callable[[Attempt], None] | None = None, max_unusable: int = MAX_UNUSABLE) -> None:
        self.evaluator = evaluator
        self.searcher = searcher
        self.turns = turns
        self.max_unusable = max_unusable
        self.recorder = recorder
        self.hold = hold
        self.cancel = cancel
        self.on_attempt = on_attempt
        self.chip = chip_profile(evaluator.settings.chip)

    def run(self, task_path: str | Path) -> OptimizeResult:
        ep = self._open(task_path)
        if ep.reference is None or not ep.reference.is_file() \
                or (ep.kernel_name in ep.seed_files and "host.py" not in ep.seed_files):
            ep.result.error = NO_CHECK
        else:
            with tempfile.TemporaryDirectory(prefix=scratch_dirs.prefix("episode")) as tmp:
                self._search(ep, Path(tmp))
        self._conclude(ep)
        self._close(ep)
        return ep.result

    def _evaluate(self, where: Path) -> Report:
        """The one evaluator call of an episode (seed and candidates)."""
        return self.evaluator.evaluate(where).report

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    # ---- start and stop

    def _open(self, task_path: str | Path) -> _Episode:
        root = Path(task_path).expanduser().resolve()
        if root.is_dir() and not has_kernel(root):
            # No kernel yet (a benchmark task): the searcher drafts kernel and host.py from the reference.
            kernel_name, reference, files = f"{root.name}.cpp", root / "reference.py", {}
            seed = no_kernel_report(root, self.evaluator.settings.chip)
        else:
            task = load_task(root)
            root, kernel_name, reference = task.root, task.kernel.name, task.reference
            files = {kernel_name: task.kernel.read_text()}
            if task.host is not None:
                files["host.py"] = task.host.read_text()
            seed = self._evaluate(task.root)
        episode_id = self.recorder.episode_id if self.recorder is not None else uuid.uuid4().hex
        result = OptimizeResult(task=str(root), status="seed_not_correct", seed=seed, best=seed, speedup=1.0,
                                turns=0, episode_id=episode_id, best_files=dict(files), model=self.searcher.model)
        best = seed if acceptable(seed) else None
        key = digest(files)
        if self.recorder is not None:
            self.recorder.record(0, attempt_status(seed), time_of(best), source_hash=key if files else "",
                                 speedup=1.0 if best is not None else 0.0)
        return _Episode(result=result, root=root, kernel_name=kernel_name, reference=reference, seed_files=files,
                        base_files=dict(files), base_report=seed, best=best, best_files=dict(files),
                        reports={key: seed}, first_ok_us=time_of(best), best_turn=0 if best is not None else None,
                        base_turn=0 if files else None, turn_of={key: 0})

    def _conclude(self, ep: _Episode) -> None:
        """The episode's status, speedup and diff from its seed and best."""
        r, seed, best = ep.result, ep.result.seed, ep.best
        r.turns = ep.used
        if self._cancelled() and not r.error:
            r.error = "cancelled"
        if best is None:
            return                                   # seed_not_correct, best is the seed
        r.best, r.best_files = best, ep.best_files
        best_us, seed_us = time_of(best), time_of(seed)
        if best is seed:
            r.status = "no_improvement"
        elif acceptable(seed) and seed_us is not None and best_us:
            r.status, r.speedup = "improved", seed_us / best_us
        else:
            r.status = "fixed"
            r.speedup = ep.first_ok_us / best_us if ep.first_ok_us is not None and best_us else 1.0
        r.diff = unified_diff(ep.seed_files, ep.best_files)
        r.best_attempt_id = next((a.attempt_id for a in reversed(r.attempts) if a.chosen), "")

    def _close(self, ep: _Episode) -> None:
        """Hold or credit the memory episode, then reflect (the rules in the module docstring)."""
        r = ep.result
        if self.recorder is not None:
            if self.hold and r.status in SUGGESTING:
                self.recorder.hold(r.turns)
                r.memory_held = True
            else:
                r.memory = self.recorder.credit(r.turns)
            if ep.proofs:
                lessons = self.searcher.lessons(self.recorder.operator, ep.proofs, r.diff)
                r.new_experiences = self.recorder.learn(lessons.experiences)
                r.reflection_note = lessons.note
        r.tokens = self.searcher.tokens      # reflection included

    # ---- the search

    def _search(self, ep: _Episode, tmp: Path) -> None:
        while ep.used < self.turns and not self._cancelled():
            if self.recorder is not None:
                ep.shown = self.recorder.retrieve(ep.base_files.get(ep.kernel_name, ""),
                                                  [d.message for d in ep.base_report.diagnostics])
            proposal = self.searcher.propose(self._state(ep))
            if isinstance(proposal, SearchStop) or proposal == []:
                break
            if isinstance(proposal, list):
                proposal = self._round(ep, proposal, tmp)
            if proposal is None:
                ep.unusable = 0
                continue
            ep.used += 1
            ep.round += 1
            self._failed(ep, proposal)
            ep.unusable += 1
            if proposal.status not in ("malformed", "duplicate"):
                ep.result.error = "cancelled" if proposal.status == "cancelled" else proposal.reason
                break
            if ep.unusable >= self.max_unusable:
                ep.result.error = (f"no usable candidate in {ep.unusable} answers in a row (the last: "
                                   f"{proposal.reason}); stopped early, keeping what was found "
                                   "(agent.max_unusable_answers sets how many)")
                break

    def _state(self, ep: _Episode) -> SearchState:
        return SearchState(operator=ep.root.name, kernel_name=ep.kernel_name, reference=ep.reference,
                           chip=self.chip, turn=ep.used, base_files=dict(ep.base_files), base_report=ep.base_report,
                           best=ep.best, shown=ep.shown, evaluated=frozenset(ep.reports), cancel=self.cancel)

    def _round(self, ep: _Episode, candidates: list[Candidate], tmp: Path) -> FailedTurn | None:
        """Evaluate a round's new candidates (within the budget), each against the best so far; keep
        the last new best. A round with nothing new is a `duplicate` failed turn, returned."""
        base = dict(ep.base_files)
        fresh: dict[str, tuple[Candidate, dict[str, str]]] = {}
        for cand in candidates:
            files = {**base, **cand.files}
            key = digest(files)
            if key not in ep.reports:
                fresh.setdefault(key, (cand, files))
        if not fresh:
            if not candidates:
                return None
            key = digest({**base, **candidates[0].files})
            return FailedTurn("duplicate", self._repeat(ep, key), candidates[0].transform, key)
        ep.round += 1
        turns: list[tuple[Attempt, Report, dict[str, str]]] = []
        for key, (cand, files) in fresh.items():
            if ep.used >= self.turns or self._cancelled():
                break
            ep.used += 1
            report = ep.reports[key] = self._evaluate(stage_variant(ep.root, files, tmp / f"turn{ep.used}"))
            ep.turn_of[key] = ep.used
            att = self._attempt(ep, cand, report, key, turns)
            if self.recorder is not None:
                att.attempt_id = self.recorder.record(ep.used, att.status, att.estimated_us, cand.adoptions,
                                                      source_hash=key, speedup=att.speedup)
                self.recorder.calibrate(advice_calibration(ep.root.name, ep.kernel_name, base, ep.base_report,
                                                           files, report, self.chip))
            self._emit(ep, att)
            turns.append((att, report, files))
        kept = next((t for t in reversed(turns) if t[0].improves), None)
        if kept is not None:
            self._keep(ep, *kept)
        elif ep.best is None and turns:
            _, ep.base_report, ep.base_files = turns[-1]
            ep.base_turn = turns[-1][0].turn
        state = self._state(ep)
        for att, report, files in turns:
            self.searcher.observe(Outcome(att, report, att.chosen, base, files), state)
        return None

    def _attempt(self, ep: _Episode, cand: Candidate, report: Report, key: str,
                 earlier: list[tuple[Attempt, Report, dict[str, str]]]) -> Attempt:
        """The attempt of an evaluated candidate, compared with the best so far (this round's too)."""
        last = next((a for a, _, _ in reversed(earlier) if a.improves), None)
        vs_us, vs_turn = (last.best_us, last.best_turn) if last is not None else (time_of(ep.best), ep.best_turn)
        ok = acceptable(report)
        t = time_of(report) if ok else None
        if ok and ep.first_ok_us is None:
            ep.first_ok_us = t
        improves = faster(report, vs_us)
        reason = why_not_kept(report)
        if ok and not improves and vs_us is not None and t is not None:
            who = "the seed" if vs_turn == 0 else f"turn {vs_turn}"
            reason = (f"not faster than the best so far ({vs_us:.3f} us, {who})" if t >= vs_us else
                      f"only {vs_us / t:.3f}x faster than the best so far; {1 / (1 - MIN_GAIN):.2f}x is needed")
        return Attempt(ep.used, cand.transform, cand.description, attempt_status(report), t, improves, cand.tags,
                       adopted=cand.adopted, round=ep.round, base_turn=ep.base_turn, vs_us=vs_us, vs_turn=vs_turn,
                       best_us=t if improves else vs_us, best_turn=ep.used if improves else vs_turn, reason=reason,
                       source_hash=key, speedup=ep.first_ok_us / t if t and ep.first_ok_us else 0.0)

    def _repeat(self, ep: _Episode, key: str) -> str:
        """Why a repeated candidate is not evaluated again: the turn that did and its verdict."""
        turn, report = ep.turn_of[key], ep.reports[key]
        who = "the seed" if turn == 0 else f"turn {turn}"
        verdict = why_not_kept(report) or f"correct, {time_of(report):.3f} us"
        return f"the same files as {who}, not evaluated again ({verdict}): propose a different change"

    def _keep(self, ep: _Episode, att: Attempt, report: Report, files: dict[str, str]) -> None:
        att.chosen = True
        after_us = time_of(report)
        before_us = time_of(ep.best)
        if before_us is not None and after_us:
            c, t = report.correctness, report.timing
            ep.proofs.append(Proof(att.attempt_id, att.description, before_us, after_us, att.tags,
                                   trials=c.trials if c is not None else 0,
                                   estimated=t.estimated if t is not None else True,
                                   change=unified_diff(ep.best_files, files)))
        ep.best, ep.best_files, ep.best_turn = report, files, att.turn
        ep.base_files, ep.base_report, ep.base_turn = files, report, att.turn
        ep.result.applied.append(f"turn {att.turn}: {att.description}")

    def _failed(self, ep: _Episode, failed: FailedTurn) -> None:
        vs_us, vs_turn = time_of(ep.best), ep.best_turn
        key = failed.source_hash
        att = Attempt(ep.used, failed.transform, failed.reason, failed.status, None, False, round=ep.round,
                      base_turn=ep.base_turn, vs_us=vs_us, vs_turn=vs_turn, best_us=vs_us, best_turn=vs_turn,
                      reason=failed.reason, source_hash=key)
        if self.recorder is not None:
            att.attempt_id = self.recorder.record(ep.used, failed.status, None, {}, source_hash=key, speedup=0.0)
        self._emit(ep, att)
        self.searcher.observe(Outcome(att, None, False, ep.base_files, ep.base_files, failed.reason),
                              self._state(ep))

    def _emit(self, ep: _Episode, att: Attempt) -> None:
        ep.result.attempts.append(att)
        if self.on_attempt is not None:
            self.on_attempt(att)


def run_episode(task_path: str | Path, evaluator: Evaluator, searcher: Searcher, *, turns: int = 30,
                recorder: EpisodeRecorder | None = None, hold: bool = False, cancel: threading.Event | None = None,
                on_attempt: Callable[[Attempt], None] | None = None,
                max_unusable: int = MAX_UNUSABLE) -> OptimizeResult:
    """One episode on the task with `searcher`; with `recorder`, recorded in the memory and credited
    (or, with `hold`, held open for a person's decision). `optimize()` picks the searcher."""
    return EpisodeDriver(evaluator, searcher, turns=turns, recorder=recorder, hold=hold, cancel=cancel,
                         on_attempt=on_attempt, max_unusable=max_unusable).run(task_path)
