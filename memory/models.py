"""Records of the four tables (docs/memory.md) and what the agent hands over after an episode.

These pydantic models are the schema: `tables.py` derives the Arrow schemas from them, and every
row read back is validated into one of them, so a torn or foreign row fails loudly.
Bump `SCHEMA_VERSION` (and add a migration in `migrations.py`) whenever a stored field changes.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

SCHEMA_VERSION = 3  # 2: the calibration table (advisor findings, estimated against verified); 3: its `measured`

ItemKind = Literal["experience", "rule"]
ItemStatus = Literal["cold", "resident", "retired"]
AdoptionStatus = Literal["adopted", "not_adopted", "undeclared"]
Actor = Literal["agent", "human"]
EpisodeState = Literal["open", "credited"]
Outcome = Literal["agent", "accepted", "rejected", "timeout"]
VerifiedBy = Literal["editor", "optimizer"]


def now() -> datetime:
    return datetime.now(UTC)


def content_id(prefix: str, *parts: str) -> str:
    """A stable id from content, so adding the same experience twice yields one item."""
    h = hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:12]
    return f"{prefix}-{h}"


class Item(BaseModel):
    """An experience or a rule. Counters and `u` are derived state: `recompute` rebuilds them from
    the adoption log, starting from `u0` (experiences) or from the origin item (rules)."""

    id: str
    kind: ItemKind = "experience"
    title: str
    text: str
    operator: str = Field(default="", description="operator the experience was learned on; empty for general knowledge")
    category: str = ""
    tags: list[str] = Field(default_factory=list)
    source: str = Field(
        default="", description="where the knowledge comes from: a document, a repository path, an attempt"
    )
    vector: list[float] | None = Field(default=None, description="embedding; None when read without vectors")
    u: float = 0.0
    u0: float = Field(default=0.0, description="utility before any episode (replay starts here)")
    n_ret: int = 0
    n_ado: int = 0
    adopted_ops: list[str] = Field(default_factory=list)
    p: float = Field(default=0.0, description="usage of a rule: EMA of adoption")
    status: ItemStatus = "cold"
    status_reason: str = ""
    evidence: list[str] = Field(default_factory=list, description="attempt ids that prove it")
    origin: str = Field(default="", description="for a rule: the item it abstracts")
    origin_seq: int = Field(default=0, description="for a rule: credit sequence number at which it was abstracted")
    tokens: int = Field(default=0, description="L: token length of the rule as shown in prompts (0 for experiences)")
    last_seq: int = Field(default=0, description="credit sequence number of the last episode applied to this item")
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)

    def prompt_text(self) -> str:
        """The text shown to the model (and measured for L)."""
        return f"{self.title}: {self.text}"

    def search_text(self) -> str:
        return " ".join([self.title, self.operator, self.category, " ".join(self.tags), self.text])


class Attempt(BaseModel):
    """One evaluated kernel."""

    id: str
    episode_id: str
    turn: int = Field(ge=0)
    source_hash: str = Field(default="", description="sha256 of the attempt's files; empty when it had no code")
    status: str = Field(description="the evaluation's status; 'correct' is the only correct one")
    time_us: float | None = Field(default=None, description="device or estimated time without launch overhead")
    speedup: float | None = Field(default=None, description="T_first / time_us (T_first: the episode's first "
                                  "correct kernel); 0 for an attempt that is not correct")
    created_at: datetime = Field(default_factory=now)

    @property
    def correct(self) -> bool:
        return self.status == "correct"


class Adoption(BaseModel):
    """What the model (or the person) did with one item shown in one turn. The source of truth."""

    id: str = ""
    episode_id: str
    turn: int = Field(ge=0)
    item_id: str
    status: AdoptionStatus
    rationale: str = ""
    actor: Actor = "agent"
    created_at: datetime = Field(default_factory=now)

    def model_post_init(self, __context) -> None:
        # One record per (episode, turn, item): writing the same episode twice overwrites, never adds.
        if not self.id:
            self.id = f"{self.episode_id}/{self.turn}/{self.item_id}"


class Episode(BaseModel):
    id: str
    operator: str
    model: str = ""
    turns: int = 0
    t_first: float | None = Field(default=None, description="time of the first correct kernel")
    t_best: float | None = Field(default=None, description="time of the best correct kernel")
    reward: float | None = Field(default=None, description="z, once credited")
    correct: bool = False
    state: EpisodeState = "open"
    outcome: Outcome | None = Field(default=None, description="how it was credited")
    accepted_attempt: str = ""
    credited_turns: list[int] = Field(default_factory=list)
    seq: int = Field(default=0, description="credit sequence number (order of crediting; 0 while open)")
    deadline: datetime | None = Field(
        default=None, description="an open editor episode is credited as the agent's after this"
    )
    created_at: datetime = Field(default_factory=now)
    credited_at: datetime | None = None


class EpisodeLog(BaseModel):
    """Everything one episode wrote, handed over in one piece so it is stored in one batch."""

    episode: Episode
    attempts: list[Attempt] = Field(default_factory=list)
    adoptions: list[Adoption] = Field(default_factory=list)


class Calibration(BaseModel):
    """One advisor finding whose change was made and evaluated (docs/advisor.md): the saving it
    estimated beside the one the change delivered, by finding kind (its code)."""

    id: str = ""
    code: str = Field(description="the finding's code: perf-few-cores, perf-small-tiles, ...")
    change: str = ""
    operator: str = ""
    estimated_us: float
    delivered_us: float = Field(description="estimate before the change minus estimate after it (the measured "
                                "times' difference when `measured`)")
    verified_by: VerifiedBy
    measured: bool = Field(default=False, description="delivered_us was measured on a device, not estimated by the "
                           "CPU model")
    created_at: datetime = Field(default_factory=now)

    def model_post_init(self, __context) -> None:
        # The same verification recorded twice (a re-save of an unchanged file) is one record.
        if not self.id:
            self.id = content_id("cal", self.code, self.operator, self.change, f"{self.estimated_us:.4f}",
                                 f"{self.delivered_us:.4f}", self.verified_by, *(["device"] if self.measured else []))

    @property
    def ratio(self) -> float:
        """Delivered over estimated (1.0: the estimate held exactly)."""
        return self.delivered_us / self.estimated_us if self.estimated_us else 0.0


TABLES: dict[str, type[BaseModel]] = {"items": Item, "attempts": Attempt, "adoptions": Adoption, "episodes": Episode,
                                      "calibration": Calibration}
