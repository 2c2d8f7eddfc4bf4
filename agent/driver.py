"""The one episode loop, whichever searcher proposes the candidates (docs/architecture.md, The agent).

The driver starts from the task's kernel (or, with none, an empty draft for the searcher to
write), evaluates the seed, and then, turn by turn, asks the searcher for candidates, evaluates
each in a copy of the task, records the attempt (with the adoption statuses it declared) in the
memory episode, and tracks the base and the best. A searcher (`Searcher`) only proposes: the
catalog of transforms (`agent/offline.py`) or a model (`agent/llm_loop.py`).

The rules, one place for both searchers:
- **Kept**: a candidate is kept when it is correct on every trial, has no error finding, and is at
  least `MIN_GAIN` faster than the best so far; with no correct kernel yet, the first correct one.
  A searcher proposes a round (the catalog: every neighbour of the base; a model: one rewrite);
  the fastest kept-worthy candidate of the round is kept.
- **Base**: the best correct kernel; until one exists, the latest evaluated candidate (a model
  iterates on its own fix).
- **Turns**: a turn is one proposed candidate, or one failed proposal (an unusable answer, a dead
  endpoint, a cancelled request). A candidate whose files were evaluated already is not evaluated
  again: it takes the earlier report, costs its turn and cannot be kept. The catalog proposes only
  files not evaluated yet (`SearchState.evaluated`), so for it a turn is an evaluation.
- **Stop**: at the turn budget, on cancel, when a failed proposal is `llm_error` (the endpoint
  stays down: `OptimizeResult.error` says why) or `cancelled`, or when the searcher is exhausted.
- **Hold or credit**: with `hold` (the editor), an episode that leaves a suggestion (`improved`,
  `fixed`) is recorded open for the person's accept/reject; any other episode is credited at once.
- **Reflect**: when some kept candidate beat an earlier correct kernel (a `Proof`), whether the
  episode is held or credited; the searcher writes the lessons (the model's, or the offline text).
"""

from __future__ import annotations

import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sage_npu.agent.episode import (
    SUGGESTING,
    Attempt,
    Candidate,
    FailedStatus,
    OptimizeResult,
    Proof,
    acceptable,
    digest,
    faster,
    no_kernel_report,
    stage_variant,
    time_of,
    unified_diff,
)
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.suites import has_kernel
from sage_npu.memory.experience_memory import NewExperience
from sage_npu.memory.retrieval import Retrieval
from sage_npu.npu_eval.chips import ChipProfile, chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.report import Report
from sage_npu.npu_eval.task import load_task

NO_CHECK = "the task has no host.py or reference.py: nothing to check a rewrite against"


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

    def lessons(self, operator: str, proofs: list[Proof], diff: str) -> list[NewExperience]: ...


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
    first_ok_us: float | None
    used: int = 0
    shown: Retrieval | None = None
    proofs: list[Proof] = field(default_factory=list)


class EpisodeDriver:
    """Runs one episode with `searcher` (see the module docstring for the rules)."""

    def __init__(self, evaluator: Evaluator, searcher: Searcher, *, turns: int = 30,
                 recorder: EpisodeRecorder | None = None, hold: bool = False,
                 cancel: threading.Event | None = None,
                 on_attempt: Callable[[Attempt], None] | None = None) -> None:
        self.evaluator = evaluator
        self.searcher = searcher
        self.turns = turns
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
            with tempfile.TemporaryDirectory(prefix="sage-episode-") as tmp:
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
        if self.recorder is not None:
            self.recorder.record(0, seed.status, time_of(seed))
        best = seed if acceptable(seed) else None
        return _Episode(result=result, root=root, kernel_name=kernel_name, reference=reference, seed_files=files,
                        base_files=dict(files), base_report=seed, best=best, best_files=dict(files),
                        reports={digest(files): seed}, first_ok_us=time_of(best))

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
            else:
                r.memory = self.recorder.credit(r.turns)
            if ep.proofs:
                lessons = self.searcher.lessons(self.recorder.operator, ep.proofs, r.diff)
                r.new_experiences = self.recorder.memory.add_experiences(lessons)
        r.tokens = self.searcher.tokens      # reflection included

    # ---- the search

    def _search(self, ep: _Episode, tmp: Path) -> None:
        while ep.used < self.turns and not self._cancelled():
            if self.recorder is not None:
                ep.shown = self.recorder.retrieve(ep.base_files.get(ep.kernel_name, ""),
                                                  [d.message for d in ep.base_report.diagnostics])
            state = self._state(ep)
            proposal = self.searcher.propose(state)
            if isinstance(proposal, SearchStop):
                break
            if isinstance(proposal, FailedTurn):
                ep.used += 1
                self._failed(ep, proposal)
                if proposal.status != "malformed":
                    ep.result.error = "cancelled" if proposal.status == "cancelled" else proposal.reason
                    break
                continue
            self._round(ep, proposal, tmp)

    def _state(self, ep: _Episode) -> SearchState:
        return SearchState(operator=ep.root.name, kernel_name=ep.kernel_name, reference=ep.reference,
                           chip=self.chip, turn=ep.used, base_files=dict(ep.base_files), base_report=ep.base_report,
                           best=ep.best, shown=ep.shown, evaluated=frozenset(ep.reports), cancel=self.cancel)

    def _round(self, ep: _Episode, candidates: list[Candidate], tmp: Path) -> None:
        """Evaluate a round's candidates (within the budget), keep the fastest kept-worthy one."""
        base = dict(ep.base_files)
        best_us = time_of(ep.best)
        turns: list[tuple[Attempt, Report, dict[str, str]]] = []
        for cand in candidates:
            if ep.used >= self.turns or self._cancelled():
                break
            ep.used += 1
            files = {**base, **cand.files}
            key = digest(files)
            report = ep.reports.get(key)
            if report is None:
                report = ep.reports[key] = self._evaluate(stage_variant(ep.root, files, tmp / f"turn{ep.used}"))
            att = Attempt(ep.used, cand.transform, cand.description, report.status, time_of(report),
                          faster(report, best_us), cand.tags, adopted=cand.adopted)
            if self.recorder is not None:
                att.attempt_id = self.recorder.record(ep.used, report.status, att.estimated_us, cand.adoptions)
            self._emit(ep, att)
            turns.append((att, report, files))
        kept = min((t for t in turns if t[0].improves), key=lambda t: time_of(t[1]) or 0.0, default=None)
        if kept is not None:
            self._keep(ep, *kept)
        elif ep.best is None and turns:
            _, ep.base_report, ep.base_files = turns[-1]
        state = self._state(ep)
        for att, report, files in turns:
            self.searcher.observe(Outcome(att, report, att.chosen, base, files), state)

    def _keep(self, ep: _Episode, att: Attempt, report: Report, files: dict[str, str]) -> None:
        att.chosen = True
        after_us = time_of(report)
        before_us = time_of(ep.best)
        if ep.first_ok_us is None:
            ep.first_ok_us = after_us
        if before_us is not None and after_us:
            c, t = report.correctness, report.timing
            ep.proofs.append(Proof(att.attempt_id, att.description, before_us, after_us, att.tags,
                                   trials=c.trials if c is not None else 0,
                                   estimated=t.estimated if t is not None else True))
        ep.best, ep.best_files = report, files
        ep.base_files, ep.base_report = files, report
        ep.result.applied.append(f"turn {att.turn}: {att.description}")

    def _failed(self, ep: _Episode, failed: FailedTurn) -> None:
        att = Attempt(ep.used, failed.transform, failed.reason, failed.status, None, False)
        if self.recorder is not None:
            att.attempt_id = self.recorder.record(ep.used, failed.status, None, {})
        self._emit(ep, att)
        self.searcher.observe(Outcome(att, None, False, ep.base_files, ep.base_files, failed.reason),
                              self._state(ep))

    def _emit(self, ep: _Episode, att: Attempt) -> None:
        ep.result.attempts.append(att)
        if self.on_attempt is not None:
            self.on_attempt(att)


def run_episode(task_path: str | Path, evaluator: Evaluator, searcher: Searcher, *, turns: int = 30,
                recorder: EpisodeRecorder | None = None, hold: bool = False, cancel: threading.Event | None = None,
                on_attempt: Callable[[Attempt], None] | None = None) -> OptimizeResult:
    """One episode on the task with `searcher`; with `recorder`, recorded in the memory and credited
    (or, with `hold`, held open for a person's decision). `optimize()` picks the searcher."""
    return EpisodeDriver(evaluator, searcher, turns=turns, recorder=recorder, hold=hold, cancel=cancel,
                         on_attempt=on_attempt).run(task_path)
