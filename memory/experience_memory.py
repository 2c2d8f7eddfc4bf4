"""`ExperienceMemory`: the one object the agent, the server and the CLI hold.

It ties the store to the embedder (loaded lazily: only retrieval, new items and consolidation
need it) and to the token counter, and exposes the memory's verbs: add experiences, retrieve,
credit an episode (or record an editor episode and decide it later), consolidate, explain,
recompute, export and import. Every write goes through the store's lock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from sage_npu.memory import episodes, explain, models, retrieval, ugc
from sage_npu.memory.embeddings import Embedder, make_embedder
from sage_npu.memory.models import TABLES, Calibration, EpisodeLog, Item, content_id
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.starter import starter_items
from sage_npu.memory.store import META_FILE, Store, StoreError, StoreNotFound, default_db_path, sql_str
from sage_npu.memory.tokens import TokenCounter

EXPORT_FORMAT = "sage-npu-memory"
EMBED_BATCH = 256
CALIBRATION_WITHIN = 0.25  # the advisor's bar; tests/test_advice_calibration.py checks it equals advisor.WITHIN


class NewExperience(BaseModel):
    """An experience the agent's reflection (or a person) wants remembered."""

    title: str
    text: str
    operator: str = ""
    category: str = ""
    tags: list[str] = Field(default_factory=list)
    source: str = ""
    evidence: list[str] = Field(default_factory=list, description="attempt ids that prove it")
    id: str | None = Field(default=None, description="default: derived from title and text, so duplicates merge")

    def item_id(self) -> str:
        """The id its item gets (known before it is stored: the bench's workers report it)."""
        return self.id or content_id("exp", self.title, self.text)


class KindCalibration(BaseModel):
    """How well one kind of advisor finding's estimates held when verified (docs/advisor.md)."""

    code: str
    measured: bool = Field(default=False, description="these deliveries were measured on a device (a kind's device "
                           "and CPU-model verifications are counted apart)")
    n: int
    median_ratio: float = Field(description="median of delivered / estimated saving")
    within: float = Field(description="share of verifications whose estimate was within 25% of the delivered")


def calibration_by_kind(records: Iterable[Calibration]) -> list[KindCalibration]:
    """Per finding kind: how many were verified, their median delivered/estimated and the share
    within 25% (the advisor's bar, npu_eval/advisor.py WITHIN; 0.25 here: memory imports no npu_eval)."""
    by: dict[tuple[str, bool], list[Calibration]] = {}
    for r in records:
        by.setdefault((r.code, r.measured), []).append(r)
    out = []
    for (code, measured), rs in sorted(by.items()):
        ratios = sorted(r.ratio for r in rs)
        mid = len(ratios) // 2
        median = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
        within = sum(r.delivered_us > 0 and abs(r.estimated_us - r.delivered_us) <= CALIBRATION_WITHIN * r.delivered_us
                     for r in rs) / len(rs)
        out.append(KindCalibration(code=code, measured=measured, n=len(rs), median_ratio=round(median, 4),
                                   within=round(within, 4)))
    return out


class Stats(BaseModel):
    path: str
    schema_version: int
    embedder: str
    dim: int
    items: int
    experiences: int
    rules: int
    by_status: dict[str, int]
    resident_tokens: int
    episodes: int
    open_episodes: int
    adoptions: int
    attempts: int
    calibration: list[KindCalibration] = Field(default_factory=list)


class ImportReport(BaseModel):
    items: int
    episodes: int
    attempts: int
    adoptions: int
    skipped_existing: int
    recomputed: list[str]


class ImportFileError(StoreError):
    pass


def memory_path(settings: MemorySettings) -> Path:
    return Path(settings.db) if settings.db is not None else default_db_path()


class ExperienceMemory:
    def __init__(self, store: Store, settings: MemorySettings, embedder: Embedder | None = None,
                 tokens: TokenCounter | None = None):
        self.store = store
        self.settings = settings
        self._embedder = embedder
        self.tokens = tokens or TokenCounter()

    # ---- opening
    @classmethod
    def open(cls, settings: MemorySettings, create: bool = True, embedder: Embedder | None = None,
             load_starter: bool | None = None) -> ExperienceMemory:
        """Open the memory at settings.db (default: the user data dir). A missing memory is created
        (with the starter experiences unless told otherwise) when `create`, else StoreNotFound."""
        path = memory_path(settings)
        if (path / META_FILE).exists():
            store = Store.open(path, settings)
            episodes.replay_journal(store, settings)  # events a crashed or timed-out writer left
            return cls(store, settings, embedder)
        if not create:
            return cls(Store.open(path, settings), settings, embedder)  # raises StoreNotFound with the path
        emb = embedder or make_embedder(settings)
        mem = cls(Store.create(path, emb.name, emb.dim, settings), settings, emb)
        if settings.load_starter if load_starter is None else load_starter:
            mem.load_starter()
        return mem

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.settings)
        if self._embedder.name != self.store.meta.embedder:
            self.store.check_embedder(self._embedder.name, self.store.meta.dim)
        return self._embedder

    def _embed(self, texts: Sequence[str]):
        import numpy as np

        parts = [self.embedder.embed(list(texts[i:i + EMBED_BATCH])) for i in range(0, len(texts), EMBED_BATCH)]
        vecs = np.concatenate(parts) if parts else np.zeros((0, self.store.meta.dim), dtype=np.float32)
        if len(texts) and vecs.shape[1] != self.store.meta.dim:
            self.store.check_embedder(self.embedder.name, int(vecs.shape[1]))
        return vecs

    # ---- items
    def load_starter(self) -> list[str]:
        return self._insert(starter_items(self.settings.initial_utility))

    def add_experiences(self, experiences: Iterable[NewExperience]) -> list[str]:
        """Store new experiences (an existing id keeps its learned state); returns their ids."""
        items = []
        for e in experiences:
            items.append(Item(id=e.item_id(), title=e.title, text=e.text, operator=e.operator, category=e.category,
                              tags=e.tags, source=e.source, evidence=e.evidence, u=self.settings.initial_utility,
                              u0=self.settings.initial_utility))
        return self._insert(items)

    def _insert(self, items: list[Item]) -> list[str]:
        vecs = self._embed([it.prompt_text() for it in items])
        for it, v in zip(items, vecs, strict=True):
            it.vector = v.tolist()
        with self.store.lock():
            self.store.upsert("items", items, insert_only=True)
        return [it.id for it in items]

    def item(self, item_id: str) -> Item:
        return self.store.item(item_id)

    def list_items(self, kind: str | None = None, status: str | None = None, limit: int | None = None) -> list[Item]:
        """Items by utility, highest first (ties by id); only the rows shown are read in full."""
        where = " AND ".join(f"{col} = {sql_str(val)}" for col, val in (("kind", kind), ("status", status)) if val)
        arrow = self.store.fetch_arrow("items", where or None, ["id", "u"])
        order = sorted(zip(arrow.column("id").to_pylist(), arrow.column("u").to_pylist(), strict=True),
                       key=lambda r: (-r[1], r[0]))
        ids = [i for i, _ in (order[:limit] if limit is not None else order)]
        rows = self.store.items(ids) if ids else {}
        return [rows[i] for i in ids if i in rows]

    # ---- the agent's turn and episode
    def retrieve(self, query: str, k: int | None = None) -> retrieval.Retrieval:
        return retrieval.retrieve(self.store, self.embedder, query, self.settings, k)

    def retrieve_for(self, operator: str, kernel: str = "", diagnostics: Sequence[str] = (),
                     k: int | None = None) -> retrieval.Retrieval:
        return self.retrieve(retrieval.build_query(operator, kernel, diagnostics), k)

    def credit(self, log: EpisodeLog) -> episodes.CreditResult:
        return episodes.credit_episode(self.store, log, self.settings)

    def record_open(self, log: EpisodeLog, deadline: datetime | None = None) -> None:
        episodes.record_episode(self.store, log, self.settings, deadline)

    def decide(self, episode_id: str, decision: Literal["accept", "reject"], attempt_id: str,
               turns: Iterable[int] | None = None) -> episodes.CreditResult:
        return episodes.decide(self.store, episode_id, decision, attempt_id, self.settings, turns)

    def expire_open(self, at: datetime | None = None) -> list[episodes.CreditResult]:
        return episodes.expire_open_episodes(self.store, self.settings, at)

    # ---- upkeep and inspection
    def consolidate(self, abstractor: ugc.RuleAbstractor | None = None,
                    context_tokens: int | None = None) -> ugc.ConsolidationReport:
        return ugc.consolidate(self.store, self.settings, self.embedder, abstractor, self.tokens, context_tokens)

    def explain(self, item_id: str) -> explain.Explanation:
        return explain.explain(self.store, item_id, self.settings)

    def recompute(self) -> episodes.RecomputeReport:
        return episodes.recompute(self.store, self.settings)

    def optimize(self) -> None:
        self.store.optimize()

    def stats(self) -> Stats:
        s = self.store
        status = s.fetch_arrow("items", columns=["kind", "status", "tokens"]).to_pylist()
        by_status: dict[str, int] = {}
        for r in status:
            by_status[r["status"]] = by_status.get(r["status"], 0) + 1
        return Stats(
            path=str(s.path), schema_version=s.meta.schema_version, embedder=s.meta.embedder, dim=s.meta.dim,
            items=len(status), experiences=sum(r["kind"] == "experience" for r in status),
            rules=sum(r["kind"] == "rule" for r in status), by_status=by_status,
            resident_tokens=sum(r["tokens"] for r in status if r["status"] == "resident"),
            episodes=s.count("episodes"), open_episodes=s.count("episodes", "state = 'open'"),
            adoptions=s.count("adoptions"), attempts=s.count("attempts"),
            calibration=calibration_by_kind(s.fetch("calibration")))

    # ---- calibration of the advisor
    def record_calibration(self, records: Sequence[Calibration]) -> None:
        """Store verified findings (the same verification twice is one record)."""
        if records:
            with self.store.lock():
                self.store.upsert("calibration", list({r.id: r for r in records}.values()))  # one per id

    # ---- export / import
    def export(self, path: Path) -> int:
        """Write every record (without vectors: the importer embeds with its own model) as JSON lines."""
        n = 0
        with open(path, "w", encoding="utf-8") as f:
            head = {"format": EXPORT_FORMAT, "schema_version": self.store.meta.schema_version,
                    "embedder": self.store.meta.embedder}
            f.write(json.dumps(head) + "\n")
            for name in TABLES:
                for row in self.store.fetch(name):
                    f.write(json.dumps({"table": name, "row": row.model_dump(mode="json", exclude={"vector"})}) + "\n")
                    n += 1
        return n

    def import_(self, path: Path) -> ImportReport:
        """Merge an export into this memory: new ids are added (items embedded here), existing ids are
        kept, imported credited episodes are renumbered after this memory's, then every item is
        recomputed from the merged adoption log."""
        rows = read_export(path)
        with self.store.lock():
            have_eps = {e.id for e in self.store.fetch("episodes")}
            seqs = [e.seq for e in self.store.fetch("episodes", "state = 'credited'")]
            offset = max(seqs) if seqs else 0
            have_items = set(self.store.fetch_arrow("items", columns=["id"]).column("id").to_pylist())
            new_items = [it for it in rows["items"] if it.id not in have_items]
            new_eps = [e for e in rows["episodes"] if e.id not in have_eps]
            for e in new_eps:
                if e.state == "credited":
                    e.seq += offset
            for it in new_items:
                if it.kind == "rule" and it.origin:
                    it.origin_seq += offset
            vecs = self._embed([it.prompt_text() for it in new_items])
            for it, v in zip(new_items, vecs, strict=True):
                it.vector = v.tolist()
            self.store.upsert("items", new_items, insert_only=True)
            self.store.upsert("attempts", rows["attempts"], insert_only=True)
            self.store.upsert("adoptions", rows["adoptions"], insert_only=True)
            self.store.upsert("episodes", new_eps, insert_only=True)
            self.store.upsert("calibration", rows["calibration"], insert_only=True)
            fixed = episodes.recompute(self.store, self.settings).fixed
        skipped = len(rows["items"]) - len(new_items) + len(rows["episodes"]) - len(new_eps)
        return ImportReport(items=len(new_items), episodes=len(new_eps), attempts=len(rows["attempts"]),
                            adoptions=len(rows["adoptions"]), skipped_existing=skipped, recomputed=fixed)


def read_export(path: Path) -> dict[str, list]:
    """Parse and validate an export file; a bad line raises ImportFileError naming the line."""
    rows: dict[str, list] = {name: [] for name in TABLES}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ImportFileError(f"cannot read {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ImportFileError(f"{path} is not a sage-npu memory export (not UTF-8 text)") from e
    if not lines:
        raise ImportFileError(f"{path} is empty; expected a file written by `sage-npu memory export`")
    try:
        head = json.loads(lines[0])
    except ValueError as e:
        raise ImportFileError(f"{path}:1: not a sage-npu memory export (bad JSON: {e})") from e
    if not isinstance(head, dict) or head.get("format") != EXPORT_FORMAT:
        raise ImportFileError(f"{path}:1: not a sage-npu memory export (missing \"format\": \"{EXPORT_FORMAT}\")")
    if int(head.get("schema_version", 0)) > models.SCHEMA_VERSION:
        raise ImportFileError(f"{path} was exported with memory schema {head['schema_version']}, newer than this "
                              f"sage-npu (schema {models.SCHEMA_VERSION}); upgrade sage-npu")
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            model = TABLES[rec["table"]]
            rows[rec["table"]].append(model.model_validate(rec["row"]))
        except (ValueError, KeyError, TypeError, ValidationError) as e:
            raise ImportFileError(f"{path}:{n}: bad record ({str(e).splitlines()[0]}); the file is damaged") from e
    return rows


__all__ = ["ExperienceMemory", "ImportFileError", "KindCalibration", "NewExperience", "Stats", "StoreError",
           "StoreNotFound", "calibration_by_kind", "memory_path", "read_export"]
