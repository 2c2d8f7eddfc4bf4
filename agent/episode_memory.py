"""The agent's side of the experience memory (DESIGN sections 5 and 6): what an episode is
shown, which items it declares it followed, the episode log that ATU credits, and the
reflection that writes what a correct, faster attempt proved."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sage_npu.memory.experience_memory import ExperienceMemory, NewExperience
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

    def attempt(self, turn: int, status: str, time_us: float | None, transform: str | None) -> str:
        """Record an evaluated kernel and, for a turn that followed a transform, the adoption
        status of every item shown (adopted when the transform follows it)."""
        attempt_id = f"{self.episode_id}/{turn}"
        self.attempts.append(Attempt(id=attempt_id, episode_id=self.episode_id, turn=turn, status=status,
                                     time_us=time_us))
        if transform is not None and self.shown is not None:
            items = list(self.shown.resident) + [r.item for r in self.shown.items]
            for item in items:
                adopted = follows(transform, item.tags)
                self.adoptions.append(Adoption(
                    episode_id=self.episode_id, turn=turn, item_id=item.id,
                    status="adopted" if adopted else "not_adopted",
                    rationale=f"{transform} {'follows' if adopted else 'does not use'} this item"))
        return attempt_id

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

    def reflect(self, proofs: list[tuple[str, str, float, list[str]]]) -> list[str]:
        """New experiences from what worked: (attempt id, description, speedup, tags) each."""
        new = [NewExperience(
            title=f"{self.operator}: {description}",
            text=f"On the {self.operator} kernel, {description} made it {speedup:.2f}x faster (estimated by the "
                 "CPU cost model), correct on every trial.",
            operator=self.operator, category="optimization", tags=tags, source="sage-npu offline optimizer",
            evidence=[attempt_id]) for attempt_id, description, speedup, tags in proofs]
        return self.memory.add_experiences(new) if new else []
