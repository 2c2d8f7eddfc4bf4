"""Retrieval (docs/memory.md): what the agent shows the model in a turn.

Contract:
1. Embed the query (operator, last diagnostics, kernel: in that order, since the model reads only
   the first 256 word pieces).
2. Candidates: the `candidates` (50) nearest cold items by cosine similarity, joined with up to
   `fts_candidates` full-text hits (exact API names such as `DataCopyPad` that the embedding may
   blur); every candidate is scored by its cosine similarity to the query.
3. Min-max normalise the similarities over the candidates (all equal: all 1), rank by
   `(1-g)*sim_norm + g*u` (g = 0.3), ties by id; return the top k (5).
Resident rules are never retrieved: they are always shown, in id order (a stable prompt prefix).
Retired items are neither.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

from sage_npu.memory.embeddings import Embedder
from sage_npu.memory.models import Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store, sql_in
from sage_npu.memory.tables import from_arrow

POOL = "status = 'cold'"
FTS_QUERY_WORDS = 24


# How an item was found: nearest vectors, full-text hits, or both.
Via = Literal["vector", "text", "both"]

class Retrieved(BaseModel):
    item: Item
    sim: float
    sim_norm: float
    score: float
    via: Via


class Retrieval(BaseModel):
    resident: list[Item]
    items: list[Retrieved]

    def shown_ids(self) -> list[str]:
        """Every id the model sees this turn: each needs an adoption status afterwards."""
        return [r.id for r in self.resident] + [r.item.id for r in self.items]


def build_query(operator: str, kernel: str = "", diagnostics: Sequence[str] = ()) -> str:
    parts = [f"operator: {operator}"] + [f"diagnostic: {d}" for d in diagnostics]
    if kernel:
        parts.append(kernel)
    return "\n".join(parts)


def rank(candidates: list[tuple[str, float, float]], g: float, k: int) -> list[tuple[str, float, float, float]]:
    """(id, sim, u) -> top k of (id, sim, sim_norm, score) by (1-g)*sim_norm + g*u."""
    if not candidates:
        return []
    sims = np.array([c[1] for c in candidates], dtype=np.float64)
    lo, hi = float(sims.min()), float(sims.max())
    span = hi - lo
    out = []
    for (item_id, sim, u) in candidates:
        norm = (sim - lo) / span if span > 1e-12 else 1.0
        out.append((item_id, sim, norm, (1.0 - g) * norm + g * u))
    out.sort(key=lambda r: (-r[3], r[0]))
    return out[:k]


def _fts_text(query: str) -> str:
    # Words only (the full-text parser must not see code punctuation), distinct, the first
    # FTS_QUERY_WORDS of them: the operator and diagnostics come first, a whole kernel would make
    # every posting list part of the query.
    words = dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+", query))
    return " ".join(list(words)[:FTS_QUERY_WORDS])


def resident_rules(store: Store) -> list[Item]:
    """Resident rules in id order. Cached per items-table version: only consolidation changes the
    set, and the turns of one episode retrieve without writing in between."""
    version = store.table("items").version
    cached = store.cache.get("resident")
    if cached is None or cached[0] != version:
        cached = store.cache["resident"] = (version, sorted(store.fetch("items", "status = 'resident'"),
                                                            key=lambda it: it.id))
    return list(cached[1])


def retrieve(store: Store, embedder: Embedder, query: str, settings: MemorySettings, k: int | None = None,
             query_vector: np.ndarray | None = None) -> Retrieval:
    """Resident rules plus the top k cold items for `query` (see the module contract)."""
    k = settings.top_k if k is None else k
    qv = embedder.embed([query])[0] if query_vector is None else np.asarray(query_vector, dtype=np.float32)
    return Retrieval(resident=resident_rules(store), items=search_items(store, qv, query, settings, k))


class _Pool:
    """The cold items of one items-table version, for the flat search: ids, utilities, unit vectors
    and the rows without vectors. Below the index threshold a numpy scan over this beats a LanceDB
    flat scan several times over (it is one matrix product), and a whole refresh costs about one
    LanceDB scan; any write (credit, consolidation, new items) makes a new version, so a stale
    pool is never used."""

    def __init__(self, version: int, arrow) -> None:
        self.ids: list[str] = arrow.column("id").to_pylist()
        self.pos = {i: n for n, i in enumerate(self.ids)}
        self.u = arrow.column("u").to_numpy().astype(np.float64)
        # The fixed-size list column's values as one flat array: no per-row Python lists.
        flat = arrow.column("vector").combine_chunks().flatten().to_numpy()
        vecs = flat.astype(np.float32, copy=False).reshape(len(self.ids), -1) if self.ids else np.zeros((0, 1))
        self.unit = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        self.rows = arrow.drop_columns(["vector"])

    def items(self, ids: list[str]) -> dict[str, Item]:
        if not ids:
            return {}
        return {it.id: it for it in from_arrow(self.rows.take([self.pos[i] for i in ids]), Item)}


def _pool(store: Store, settings: MemorySettings) -> _Pool | None:
    """The cached pool, refreshed when the table moved on; None when a vector index serves search,
    or the table is past the index threshold (its index comes with the next compaction)."""
    if store.has_vector_index():
        return None
    table = store.table("items")
    version = table.version
    cached = store.cache.get("pool")
    if cached is None or cached[0] != version:
        rows = table.count_rows()
        pool = None
        if rows < settings.index_threshold:
            pool = _Pool(version, table.search().where(POOL).limit(max(rows, 1)).to_arrow())
        cached = store.cache["pool"] = (version, pool)
    return cached[1]


def search_items(store: Store, qv: np.ndarray, query: str, settings: MemorySettings, k: int) -> list[Retrieved]:
    # Opened here, not in the coroutine: that runs on LanceDB's loop and must not wait on it.
    table = store.async_table("items")
    pool = _pool(store, settings)
    if pool is not None:
        return _search_flat(store, table, pool, qv, _fts_text(query), settings, k)
    return store.run(_search(table, qv, _fts_text(query), settings, k, store.has_vector_index()))


def _search_flat(store: Store, table, pool: _Pool, qv: np.ndarray, words: str, settings: MemorySettings,
                 k: int) -> list[Retrieved]:
    """The vector candidates from the pool in memory, the text hits from LanceDB's full-text index."""
    q = qv / max(float(np.linalg.norm(qv)), 1e-12)
    sims = pool.unit @ q if len(pool.ids) else np.zeros(0)
    cands: dict[str, tuple[float, float, Via]] = {}
    if settings.candidates > 0 and len(sims):
        n = min(settings.candidates, len(sims))
        for j in np.argpartition(-sims, n - 1)[:n]:
            cands[pool.ids[j]] = (float(sims[j]), float(pool.u[j]), "vector")
    if settings.fts_candidates > 0 and words:
        hits = store.run(table.query().nearest_to_text(words).where(POOL).select(["id"])
                         .limit(settings.fts_candidates).to_arrow())
        for i in hits.column("id").to_pylist():
            if i in cands:
                cands[i] = (cands[i][0], cands[i][1], "both")
            elif i in pool.pos:
                j = pool.pos[i]
                cands[i] = (float(sims[j]), float(pool.u[j]), "text")
    ranked = rank([(i, sim, u) for i, (sim, u, _) in cands.items()], settings.utility_weight, k)
    rows = pool.items([r[0] for r in ranked])
    return [Retrieved(item=rows[i], sim=sim, sim_norm=norm, score=score, via=cands[i][2])
            for i, sim, norm, score in ranked if i in rows]


async def _search(t, qv: np.ndarray, words: str, settings: MemorySettings, k: int, indexed: bool) -> list[Retrieved]:
    # The vector and the text query run concurrently and bring only (id, u, similarity); full rows
    # are read for the k winners alone (reading 60 rows' text costs more than a keyed read of 5).
    jobs = []
    if settings.candidates > 0:
        # A flat scan reports exact cosine distances; an index may use another scale (squared L2 of
        # normalised vectors), so with an index the similarity is computed from the vectors.
        q = t.vector_search(qv.tolist()).column("vector").distance_type("cosine").where(POOL)
        if indexed and settings.ann_ef:
            q = q.ef(max(settings.ann_ef, settings.candidates))
        jobs.append(q.select(["id", "u", "vector" if indexed else "_distance"]).limit(settings.candidates).to_arrow())
    if settings.fts_candidates > 0 and words:
        jobs.append(t.query().nearest_to_text(words).where(POOL).select(["id", "u", "vector"])
                    .limit(settings.fts_candidates).to_arrow())
    results = await asyncio.gather(*jobs)
    cands: dict[str, tuple[float, float, Via]] = {}
    for n, arrow in enumerate(results):
        if not arrow.num_rows:
            continue
        via: Via = "vector" if n == 0 and settings.candidates > 0 else "text"
        # (LanceDB adds _distance to vector results even when not selected: decide by the index.)
        if via == "vector" and not indexed:
            sims = 1.0 - np.asarray(arrow.column("_distance").to_pylist(), dtype=np.float64)
        else:
            vecs = np.asarray(arrow.column("vector").to_pylist(), dtype=np.float32)
            sims = vecs @ qv / np.maximum(np.linalg.norm(vecs, axis=1) * np.linalg.norm(qv), 1e-12)
        for i, u, sim in zip(arrow.column("id").to_pylist(), arrow.column("u").to_pylist(), sims, strict=True):
            cands[i] = (cands[i][0], cands[i][1], "both") if i in cands else (float(sim), float(u), via)
    ranked = rank([(i, sim, u) for i, (sim, u, _) in cands.items()], settings.utility_weight, k)
    if not ranked:
        return []
    cols = [c for c in Item.model_fields if c != "vector"]
    arrow = await t.query().where(sql_in("id", [r[0] for r in ranked])).select(cols).to_arrow()
    rows = {it.id: it for it in from_arrow(arrow, Item)}
    return [Retrieved(item=rows[i], sim=sim, sim_norm=norm, score=score, via=cands[i][2])
            for i, sim, norm, score in ranked if i in rows]
