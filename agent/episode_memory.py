"""The agent's side of the experience memory (DESIGN sections 5 and 6): what an episode is
shown, which items it declares it followed, and the episode log that ATU credits."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog
from sage_npu.memory.retrieval import Retrieval

# Which memory items a transform follows: an item is adopted when its tags meet these.
TRANSFORM_TAGS = {
    "double-buffering": {"buffer_num", "double-buffering"},
    "all-vector-cores": {"multi-core", "block_dim"},
    "bigger-tiles": {"tiling"},
    "fewer-tile-splits": {"tiling"},
}


def follows(transform: str, item_tags: list[str]) -> bool:
    return bool(TRANSFORM_TAGS.get(transform, set()) & {t.lower() for t in item_tags})


@dataclass
class EpisodeRecorder:
    """Collects one episode's attempts and adoption records, then credits them in one batch."""

    memory: ExperienceMemory
    operator: str
    model: str = "offline"
    episode_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    attempts: list[Attempt] = field(default_factory=list)
    adoptions: list[Adoption] = field(default_factory=list)
    shown: Retrieval | None = None

    def retrieve(self, kernel: str, diagnostics: list[str]) -> Retrieval:
        self.shown = self.memory.retrieve_for(self.operator, kernel, diagnostics)
        return self.shown

    def shown_ids(self) -> list[str]:
        """Ids shown this turn, resident rules first (the order the prompt quotes them in)."""
        return self.shown.shown_ids() if self.shown is not None else []

    def record(self, turn: int, status: str, time_us: float | None,
               statuses: dict[str, tuple[str, str]] | None = None) -> str:
        """Record an evaluated (or failed) turn and the adoption status of every item it was shown:
        `statuses` maps an id to (adopted | not_adopted, reason); an id it leaves out is undeclared."""
        attempt_id = f"{self.episode_id}/{turn}"
        self.attempts.append(Attempt(id=attempt_id, episode_id=self.episode_id, turn=turn, status=status,
                                     time_us=time_us))
        if statuses is not None:
            for item_id in self.shown_ids():
                st, why = statuses.get(item_id, ("undeclared", "no status declared"))
                self.adoptions.append(Adoption(episode_id=self.episode_id, turn=turn, item_id=item_id,
                                               status=st, rationale=why))
        return attempt_id

    def attempt(self, turn: int, status: str, time_us: float | None, transform: str | None) -> str:
        """Record an offline turn: an item is adopted when the transform follows it."""
        if transform is None or self.shown is None:
            return self.record(turn, status, time_us)
        items = list(self.shown.resident) + [r.item for r in self.shown.items]
        statuses = {}
        for item in items:
            adopted = follows(transform, item.tags)
            statuses[item.id] = ("adopted" if adopted else "not_adopted",
                                 f"{transform} {'follows' if adopted else 'does not use'} this item")
        return self.record(turn, status, time_us, statuses)

    def log(self, turns: int) -> EpisodeLog:
        return EpisodeLog(episode=Episode(id=self.episode_id, operator=self.operator, model=self.model, turns=turns),
                          attempts=self.attempts, adoptions=self.adoptions)

    def credit(self, turns: int):
        """Credit the episode now (the agent alone decides: CLI, bench)."""
        return self.memory.credit(self.log(turns))

    def hold(self, turns: int) -> None:
        """Record the episode open: a person decides (editor). accept/reject credit it; no decision
        before the memory's editor timeout credits it as the agent alone would."""
        deadline = datetime.now(UTC) + timedelta(seconds=self.memory.settings.editor_timeout_s)
        self.memory.record_open(self.log(turns), deadline)
