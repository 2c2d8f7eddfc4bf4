"""The agent's side of the experience memory (docs/memory.md): what an episode is
shown, which items it declares it followed, and the episode log that ATU credits.

An episode is recorded in the memory itself, or deferred: `sage-npu bench` runs its episodes
against a read-only view of the memory (a `Retriever`) and has one writer credit their logs and
store their lessons in a fixed order (docs/bench.md)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from sage_npu.agent import adoption_block
from sage_npu.agent.episode import AttemptStatus, DeferredCredit
from sage_npu.memory.episodes import CreditResult
from sage_npu.memory.experience_memory import ExperienceMemory, NewExperience
from sage_npu.memory.models import Adoption, Attempt, Calibration, Episode, EpisodeLog
from sage_npu.memory.retrieval import Retrieval


class Retriever(Protocol):
    """Where an episode's retrievals go: the memory itself, or a read-only view of it."""

    def retrieve_for(self, operator: str, kernel: str = "", diagnostics: Sequence[str] = ()) -> Retrieval: ...


@dataclass
class EpisodeRecorder:
    """Collects one episode's attempts and adoption records, then credits them in one batch.
    Without a `memory` (deferred: only a `retriever`), crediting and learning are kept in
    `deferred` for the one writer instead."""

    memory: ExperienceMemory | None
    operator: str
    model: str = "offline"
    episode_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    attempts: list[Attempt] = field(default_factory=list)
    adoptions: list[Adoption] = field(default_factory=list)
    shown: Retrieval | None = None
    retriever: Retriever | None = None            # default: the memory
    deferred: DeferredCredit | None = None        # a deferred episode's log and lessons, once credited

    def retrieve(self, kernel: str, diagnostics: list[str]) -> Retrieval:
        source = self.retriever if self.retriever is not None else self.memory
        if source is None:
            raise ValueError("an episode recorder needs a memory or a retriever")
        self.shown = source.retrieve_for(self.operator, kernel, diagnostics)
        return self.shown

    def shown_ids(self) -> list[str]:
        """Ids shown this turn, resident rules first (the order the prompt quotes them in)."""
        return self.shown.shown_ids() if self.shown is not None else []

    def calibrate(self, records: list[Calibration]) -> None:
        """Store advisor findings this episode verified (a deferred episode, without a memory to
        write, keeps none: the bench's one writer stores lessons, not calibration)."""
        if records and self.memory is not None:
            self.memory.record_calibration(records)

    def record(self, turn: int, status: AttemptStatus, time_us: float | None,
               declared: Mapping[str, adoption_block.Adoption] | None = None, *, source_hash: str = "",
               speedup: float = 0.0) -> str:
        """Record an evaluated (or failed) turn; its id. With `declared` (the turn's statuses by item
        id), every item the turn was shown gets an adoption record: an id it leaves out is undeclared.
        Without (the seed), no adoption is recorded. `time_us` only for a kernel that can be kept;
        `speedup` is T_first over its time (0 when it cannot be kept)."""
        attempt_id = f"{self.episode_id}/{turn}"
        self.attempts.append(Attempt(id=attempt_id, episode_id=self.episode_id, turn=turn, status=status,
                                     time_us=time_us, source_hash=source_hash, speedup=speedup))
        if declared is not None:
            for item_id in self.shown_ids():
                d = declared.get(item_id)
                self.adoptions.append(Adoption(episode_id=self.episode_id, turn=turn, item_id=item_id,
                                               status=d.status if d is not None else "undeclared",
                                               rationale=d.reason if d is not None else "no status declared"))
        return attempt_id

    def log(self, turns: int) -> EpisodeLog:
        # Every field named: the credit fields start empty (pyright does not read pydantic's
        # positional `Field(None, ...)` defaults).
        episode = Episode(id=self.episode_id, operator=self.operator, model=self.model, turns=turns, t_first=None,
                          t_best=None, reward=None, outcome=None, seq=0, deadline=None)
        return EpisodeLog(episode=episode, attempts=self.attempts, adoptions=self.adoptions)

    def credit(self, turns: int) -> CreditResult | None:
        """Credit the episode now (the agent alone decides: CLI, bench); deferred, keep its log
        for the one writer (None)."""
        if self.memory is None:
            self.deferred = DeferredCredit(self.log(turns))
            return None
        return self.memory.credit(self.log(turns))

    def learn(self, experiences: list[NewExperience]) -> list[str]:
        """Store the reflection's lessons (after the credit); deferred, keep them. Their ids."""
        if self.memory is None:
            if self.deferred is not None:
                self.deferred.lessons.extend(experiences)
            return [e.item_id() for e in experiences]
        return self.memory.add_experiences(experiences)

    def hold(self, turns: int) -> None:
        """Record the episode open: a person decides (editor). accept/reject credit it; no decision
        before the memory's editor timeout credits it as the agent alone would."""
        if self.memory is None:
            raise ValueError("a deferred episode cannot be held open for a person")
        deadline = datetime.now(UTC) + timedelta(seconds=self.memory.settings.editor_timeout_s)
        self.memory.record_open(self.log(turns), deadline)
