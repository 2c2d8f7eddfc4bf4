"""Storing and crediting episodes: the agent's, and the editor's that wait for a person.

Contracts:
- An episode's log (attempts, adoptions, episode) is written in one batch under the store's lock;
  record ids are deterministic, so writing the same episode again changes nothing.
- Crediting is idempotent by episode id: an episode already credited is never credited again
  (a late accept after a timeout, a retried credit, a second window: all no-ops).
- Crash safety: a marker file names the episode being written. The log goes first (attempts,
  adoptions), the episode row is the commit point (state `credited` and its `seq`, or `open`), the
  items follow in one commit. A marker left by a killed writer makes the next writer drop the
  log rows of an episode that never got its row and rebuild the items from the log (`recompute`).
  Because of that cleanup, a new episode's log rows can be appended rather than matched by id.
- No event is lost: `credit_episode`, `record_episode` and `decide` write their event to the
  journal (`journal`, fsynced) before waiting for the lock. A writer killed inside its write has its
  half-written episode undone by the next writer (the marker) and its event applied again from the
  journal (roll-forward), so the event ends wholly present. A writer whose lock wait times out
  raises `EventJournaled`; the next writer to get the lock (or `replay_journal`, on open) applies it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from sage_npu.memory import atu, journal
from sage_npu.memory.atu import AtuParams, Counters, Reward, UtilityChange
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item, Outcome, now
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import LockTimeout, Store, StoreError, UnknownId, sql_in, sql_str

logger = logging.getLogger(__name__)
MARKER = "crediting.json"
PAUSE_ENV = "SAGE_NPU_MEMORY_PAUSE_IN_CREDIT"  # tests only: see _credit
LEARNED = ["u", "n_ret", "n_ado", "adopted_ops", "p", "last_seq", "updated_at"]


class CreditResult(BaseModel):
    episode_id: str
    credited: bool
    already_credited: bool = False
    outcome: Outcome | None = None
    reward: float | None = None
    seq: int = 0
    changes: list[UtilityChange] = []


class RecomputeReport(BaseModel):
    items: int
    episodes: int
    fixed: list[str]


def record_episode(store: Store, log: EpisodeLog, settings: MemorySettings, deadline: datetime | None = None) -> None:
    """Store an editor episode as open: it is credited later by `decide` or `expire_open_episodes`.
    Journaled first: on a lock timeout it raises `EventJournaled` and the next writer stores it."""
    _submit(store, settings, journal.RecordEvent(log=log, deadline=deadline))


def _record_now(store: Store, log: EpisodeLog, settings: MemorySettings, deadline: datetime | None) -> None:
    with store.lock():
        _recover(store, settings)
        existing, _, _ = _lookup(store, log.episode.id)
        if existing is not None and existing.state == "credited":
            return
        ep = log.episode.model_copy(update={
            "state": "open", "turns": max([a.turn for a in log.attempts] + [log.episode.turns]),
            "deadline": deadline or log.episode.deadline or now() + timedelta(seconds=settings.editor_timeout_s)})
        _begin(store, ep.id, 0)
        _write_log(store, ep, log.attempts, log.adoptions, existing)
        store.upsert("episodes", [ep])
        _end(store)


def credit_episode(store: Store, log: EpisodeLog, settings: MemorySettings) -> CreditResult:
    """Store an agent episode and credit it at once: reward from its attempts, every turn credited.
    Journaled first: on a lock timeout it raises `EventJournaled` and the next writer credits it."""
    result = _submit(store, settings, journal.CreditEvent(log=log))
    assert result is not None
    return result


def _credit_now(store: Store, log: EpisodeLog, settings: MemorySettings) -> CreditResult:
    reward = atu.episode_reward(log.attempts, settings.no_correct_penalty)
    turns = sorted({a.turn for a in log.adoptions})
    outcomes = atu.item_outcomes(log.adoptions, turns)
    with store.lock():
        _recover(store, settings)
        existing, seq, states = _lookup(store, log.episode.id, list(outcomes))
        if existing is not None and existing.state == "credited":
            return _already(existing)
        _begin(store, log.episode.id, seq)
        _write_log(store, log.episode, log.attempts, log.adoptions, existing)
        return _credit(store, settings, log.episode, log.adoptions, log.attempts, reward, "agent", turns, "", seq,
                       new=existing is None, states=states)


def decide(store: Store, episode_id: str, decision: Literal["accept", "reject"], attempt_id: str,
           settings: MemorySettings, turns: Iterable[int] | None = None) -> CreditResult:
    """A person accepted or rejected the suggestion `attempt_id` of an open episode.

    The adoptions of `turns` (default: every turn up to the suggestion's) are credited: on accept
    with the suggestion's reward 1 - T_suggestion/T_first, on reject with xi = -d for each adopted
    item. An episode already credited (decided, or timed out) is left as it is. Journaled first: on a
    lock timeout it raises `EventJournaled` and the next writer applies the decision."""
    result = _submit(store, settings, journal.DecideEvent(episode_id=episode_id, decision=decision,
                                                          attempt_id=attempt_id,
                                                          turns=None if turns is None else list(turns)))
    assert result is not None
    return result


def _decide_now(store: Store, episode_id: str, decision: Literal["accept", "reject"], attempt_id: str,
                settings: MemorySettings, turns: Iterable[int] | None) -> CreditResult:
    with store.lock():
        _recover(store, settings)
        ep, seq, _ = _lookup(store, episode_id)
        if ep is None:
            raise UnknownId(f"no episode {episode_id!r} in the memory at {store.path}")
        if ep.state == "credited":
            return _already(ep)
        attempts = store.fetch("attempts", f"episode_id = {sql_str(episode_id)}")
        chosen = next((a for a in attempts if a.id == attempt_id), None)
        if chosen is None:
            raise UnknownId(f"episode {episode_id!r} has no attempt {attempt_id!r}")
        turns = sorted(set(turns)) if turns is not None else list(range(chosen.turn + 1))
        adoptions = store.fetch("adoptions", f"episode_id = {sql_str(episode_id)}")
        if decision == "accept":
            reward = atu.accepted_reward(attempts, chosen, settings.no_correct_penalty)
            mode: Outcome = "accepted"
        else:
            reward = atu.episode_reward(attempts, settings.no_correct_penalty)
            mode = "rejected"
        _begin(store, episode_id, seq)
        return _credit(store, settings, ep, adoptions, attempts, reward, mode, turns, attempt_id, seq)


def expire_open_episodes(store: Store, settings: MemorySettings, at: datetime | None = None) -> list[CreditResult]:
    """Credit, as the agent alone would have, every open episode whose deadline has passed."""
    at = at or now()
    out = []
    with store.lock():
        _catch_up(store, settings)
        for ep in store.fetch("episodes", "state = 'open'"):
            if ep.deadline is not None and ep.deadline <= at:
                attempts = store.fetch("attempts", f"episode_id = {sql_str(ep.id)}")
                adoptions = store.fetch("adoptions", f"episode_id = {sql_str(ep.id)}")
                reward = atu.episode_reward(attempts, settings.no_correct_penalty)
                seq = _lookup(store, ep.id)[1]
                _begin(store, ep.id, seq)
                out.append(_credit(store, settings, ep, adoptions, attempts, reward, "timeout", None, "", seq))
    return out


def recompute(store: Store, settings: MemorySettings, write: bool = True) -> RecomputeReport:
    """Rebuild every item's u, counters and usage from the adoption log; with `write`, store the
    items whose stored state differs (and say which)."""
    with store.lock():
        items = store.fetch("items")
        episodes = store.fetch("episodes", "state = 'credited'")
        adoptions = store.fetch("adoptions")
        attempts = store.fetch("attempts")
        states, _ = atu.replay(items, episodes, adoptions, attempts, AtuParams.from_settings(settings))
        last_seq = _last_seqs(episodes, adoptions)
        fixed = []
        rows = []
        for it in items:
            c = states.get(it.id)
            if c is None:
                continue
            seq = max(it.last_seq, last_seq.get(it.id, 0))
            if not _same(it, c) or seq != it.last_seq:
                fixed.append(it.id)
                rows.append(_learned_row(it.id, c, seq))
        if write:
            store.update_columns("items", rows, LEARNED)
            (store.path / MARKER).unlink(missing_ok=True)
        return RecomputeReport(items=len(items), episodes=len(episodes), fixed=fixed)


def replay_journal(store: Store, settings: MemorySettings) -> int:
    """Apply the journaled events no live writer will apply (see `journal`); returns how many.
    Takes the lock only when the journal has entries, so opening a quiet memory stays lock-free."""
    if not journal.has_entries(store.path) or not journal.replayable(store.path):
        return 0
    with store.lock():
        return _catch_up(store, settings)


# ---- the journal


class EventJournaled(LockTimeout):
    """The lock did not come in time; the event is journaled and the next writer applies it."""


def _submit(store: Store, settings: MemorySettings, event: journal.Event) -> CreditResult | None:
    if store.locked():
        return _apply(store, settings, event)  # a caller holding the lock: nothing can interleave
    rid = journal.add(store.path, event)
    try:
        with store.lock():
            _catch_up(store, settings)
            try:
                result = _apply(store, settings, event)
            except (ValueError, UnknownId):
                journal.done(store.path, rid)  # refused for good: replaying would refuse it again
                raise
            journal.done(store.path, rid)
            journal.compact(store.path)
            return result
    except LockTimeout as e:
        journal.release(store.path, rid)
        raise EventJournaled(f"{e}; the event is kept in {store.path / journal.JOURNAL} and the next "
                             f"writer to get the lock applies it") from e


def _apply(store: Store, settings: MemorySettings, event: journal.Event) -> CreditResult | None:
    if isinstance(event, journal.CreditEvent):
        return _credit_now(store, event.log, settings)
    if isinstance(event, journal.RecordEvent):
        return _record_now(store, event.log, settings, event.deadline)
    return _decide_now(store, event.episode_id, event.decision, event.attempt_id, settings, event.turns)


def _catch_up(store: Store, settings: MemorySettings) -> int:
    """Under the lock: repair a killed writer's half-written episode, then roll its event (and
    every other journaled event no live writer will apply) forward."""
    _recover(store, settings)
    pending = journal.replayable(store.path)
    for p in pending:
        try:
            _apply(store, settings, p.event)
        except (ValueError, UnknownId) as e:
            logger.warning("journaled event %s cannot be applied and is dropped: %s", p.id, e)
        journal.done(store.path, p.id)
    if pending:
        journal.compact(store.path)
    return len(pending)


# ---- internals


def _lookup(store: Store, episode_id: str, item_ids: list[str] | None = None
            ) -> tuple[Episode | None, int, dict[str, Counters]]:
    """The stored episode (or None), the next credit sequence number and, with item_ids, those
    items' learned state (else empty): read concurrently."""
    queries = [("episodes", f"id = {sql_str(episode_id)} OR state = 'credited'", ["id", "seq"])]
    if item_ids:
        queries.append(("items", sql_in("id", item_ids), ["id", "kind", "u", "n_ret", "n_ado", "adopted_ops", "p"]))
    results = store.fetch_many(queries)
    ids, seqs = results[0].column("id").to_pylist(), results[0].column("seq").to_pylist()
    existing = None
    if episode_id in ids:
        existing = store.fetch("episodes", f"id = {sql_str(episode_id)}")[0]
    return existing, max(seqs, default=0) + 1, _to_counters(results[1] if item_ids else None)


def _already(ep: Episode) -> CreditResult:
    return CreditResult(episode_id=ep.id, credited=False, already_credited=True, outcome=ep.outcome,
                        reward=ep.reward, seq=ep.seq)


def _begin(store: Store, episode_id: str, seq: int) -> None:
    (store.path / MARKER).write_text(json.dumps({"episode": episode_id, "seq": seq, "pid": os.getpid()}))


def _end(store: Store) -> None:
    (store.path / MARKER).unlink(missing_ok=True)


def _write_log(store: Store, ep: Episode, attempts: list[Attempt], adoptions: list[Adoption],
               existing: Episode | None) -> None:
    for a in adoptions:
        if a.episode_id != ep.id:
            raise ValueError(f"adoption {a.id} belongs to episode {a.episode_id}, not {ep.id}")
    for a in attempts:
        if a.episode_id != ep.id:
            raise ValueError(f"attempt {a.id} belongs to episode {a.episode_id}, not {ep.id}")
    if existing is None:
        store.write_concurrently([("append", "attempts", attempts, None), ("append", "adoptions", adoptions, None)])
    else:
        store.upsert("attempts", attempts)
        store.upsert("adoptions", adoptions)


def _credit(store: Store, settings: MemorySettings, ep: Episode, adoptions: list[Adoption], attempts: list[Attempt],
            reward: Reward, mode: Outcome, turns: list[int] | None, accepted_attempt: str, seq: int,
            new: bool = False, states: dict[str, Counters] | None = None) -> CreditResult:
    if pause := os.environ.get(PAUSE_ENV):
        # Lets a test kill a writer deterministically inside a write: the log is stored, the episode not.
        Path(pause).write_text(str(os.getpid()))
        time.sleep(3600)
    if turns is None:
        turns = sorted({a.turn for a in adoptions})
    credits = atu.item_credits(adoptions, attempts, turns)
    if states is None:
        states = _counters(store, list(credits))
    changes = atu.credit(states, credits, reward, ep.operator, mode, ep.id, seq, AtuParams.from_settings(settings))
    credited = ep.model_copy(update={
        "state": "credited", "outcome": mode, "reward": reward.z, "correct": reward.correct, "t_first": reward.t_first,
        "t_best": reward.t_best, "credited_turns": turns, "seq": seq, "credited_at": now(),
        "accepted_attempt": accepted_attempt, "turns": max(turns + [ep.turns])})
    rows = [_learned_row(i, states[i], seq) for i in states]
    if new:
        # The log is already stored, so the episode row and the items can commit in either order: a
        # crash between them leaves the marker, and recovery rebuilds the items from the log.
        store.write_concurrently([("append", "episodes", [credited], None), ("update", "items", rows, LEARNED)])
    else:
        store.upsert("episodes", [credited])
        store.update_columns("items", rows, LEARNED)
    _end(store)
    return CreditResult(episode_id=ep.id, credited=True, outcome=mode, reward=reward.z, seq=seq, changes=changes)


def _counters(store: Store, ids: list[str]) -> dict[str, Counters]:
    if not ids:
        return {}
    return _to_counters(store.fetch_arrow("items", sql_in("id", ids),
                                          ["id", "kind", "u", "n_ret", "n_ado", "adopted_ops", "p"]))


def _to_counters(arrow) -> dict[str, Counters]:
    if arrow is None:
        return {}
    return {r["id"]: Counters(r["u"], r["n_ret"], r["n_ado"], list(r["adopted_ops"] or []), r["p"], r["kind"])
            for r in arrow.to_pylist()}


def _learned_row(item_id: str, c: Counters, seq: int) -> dict:
    return {"id": item_id, "u": c.u, "n_ret": c.n_ret, "n_ado": c.n_ado, "adopted_ops": list(c.adopted_ops),
            "p": c.p, "last_seq": seq, "updated_at": now()}


def _same(it: Item, c: Counters) -> bool:
    return (abs(it.u - c.u) < 1e-12 and it.n_ret == c.n_ret and it.n_ado == c.n_ado
            and list(it.adopted_ops) == list(c.adopted_ops) and abs(it.p - c.p) < 1e-12)


def _last_seqs(episodes: list[Episode], adoptions: list[Adoption]) -> dict[str, int]:
    credited = {e.id: (e.seq, set(e.credited_turns)) for e in episodes}
    out: dict[str, int] = {}
    for a in adoptions:
        seq, turns = credited.get(a.episode_id, (0, set()))
        if a.turn in turns and seq > out.get(a.item_id, 0):
            out[a.item_id] = seq
    return out


def _recover(store: Store, settings: MemorySettings) -> None:
    """Repair what a writer killed mid-episode left: log rows of an episode that never got its row,
    and items not yet updated for an episode that did."""
    marker = store.path / MARKER
    if not marker.exists():
        return
    try:
        episode_id = json.loads(marker.read_text())["episode"]
    except (OSError, ValueError, KeyError):
        episode_id = None
    if episode_id is not None and _lookup(store, episode_id)[0] is None:
        where = f"episode_id = {sql_str(episode_id)}"
        store.delete("attempts", where)
        store.delete("adoptions", where)
    recompute(store, settings, write=True)


def open_episodes(store: Store) -> list[Episode]:
    return store.fetch("episodes", "state = 'open'")


__all__ = ["CreditResult", "EventJournaled", "RecomputeReport", "StoreError", "credit_episode", "decide",
           "expire_open_episodes", "record_episode", "recompute", "replay_journal"]
