"""Utility-gated consolidation (docs/memory.md).

Contract of `consolidate`, under the store's lock:
1. Retire cold items that have proved useless: `u < retire_below_utility` after at least
   `retire_min_retrievals` episodes shown. Retired items leave retrieval; they stay for `explain`.
2. Eligible experiences (`u > 0`, adopted in >= 3 episodes, across >= 3 distinct operators) are
   abstracted into rules by a `RuleAbstractor` (the agent's LLM; offline, `ExtractiveAbstractor`).
   A rule gets the stable id `rule-<experience id>`, starts with the experience's learned state and
   usage `p = n_ado/n_ret`, and the experience retires into it (its knowledge lives on in the rule).
3. Eligible rules are chosen greedily by `u*p/L` (L: tokens by the bundled MiniLM tokenizer) into a
   resident set of at most `min(B, share * model context)` tokens; a rule that does not fit is
   skipped and the next one tried. Chosen rules become resident; resident rules not chosen go back
   to cold (retrievable again).
"""

from __future__ import annotations

import re
from typing import Protocol

from pydantic import BaseModel

from sage_npu.memory.embeddings import Embedder
from sage_npu.memory.models import Item, now
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store
from sage_npu.memory.tokens import TokenCounter

STATUS_COLUMNS = ["status", "status_reason", "updated_at"]


class RuleDraft(BaseModel):
    title: str
    text: str
    # The draft says what its experience says (an extract of it): the rule keeps the experience's
    # vector instead of being embedded again, which is most of a first consolidation's time.
    same_meaning: bool = False


class RuleAbstractor(Protocol):
    def abstract(self, item: Item) -> RuleDraft:
        """A general rule from one experience (no operator-specific detail)."""
        ...


class ExtractiveAbstractor:
    """Offline and deterministic: the experience's title and its leading sentences, up to max_tokens,
    and the operators it was proven on."""

    def __init__(self, tokens: TokenCounter, max_tokens: int = 160):
        self.tokens = tokens
        self.max_tokens = max_tokens

    def abstract(self, item: Item) -> RuleDraft:
        ops = sorted(set(item.adopted_ops))
        proven = f" (adopted on {', '.join(ops)})" if ops else ""
        budget = self.max_tokens - self.tokens.count([item.title + ":" + proven])[0]
        kept: list[str] = []
        for sentence in re.split(r"(?<=[.!?])\s+", item.text.strip()):
            candidate = " ".join(kept + [sentence])
            if self.tokens.count([candidate])[0] > budget:
                if not kept:
                    kept = [self.tokens.truncate(sentence, max(budget, 1))]
                break
            kept.append(sentence)
        return RuleDraft(title=item.title, text=" ".join(kept) + proven, same_meaning=True)


class Selected(BaseModel):
    id: str
    score: float
    tokens: int


class ConsolidationReport(BaseModel):
    budget: int
    used_tokens: int
    eligible: list[str]
    new_rules: list[str]
    resident: list[Selected]
    to_cold: list[str]
    retired: list[str]


def eligible(item: Item, s: MemorySettings) -> bool:
    return (item.status != "retired" and item.u > s.eligible_min_utility and item.n_ado >= s.eligible_min_episodes
            and len(set(item.adopted_ops)) >= s.eligible_min_operators)


def should_retire(item: Item, s: MemorySettings) -> bool:
    return item.status == "cold" and item.n_ret >= s.retire_min_retrievals and item.u < s.retire_below_utility


def select_resident(candidates: list[tuple[str, float, float, int]], budget: int) -> list[Selected]:
    """(id, u, p, L) -> the greedy choice by u*p/L (ties by id) within `budget` tokens; a
    candidate with a score <= 0 is never chosen."""
    scored = sorted(((u * p / max(L, 1), i, L) for i, u, p, L in candidates), key=lambda r: (-r[0], r[1]))
    chosen, used = [], 0
    for score, i, L in scored:
        if score <= 0:
            break
        if used + L <= budget:
            chosen.append(Selected(id=i, score=score, tokens=L))
            used += L
    return chosen


def consolidate(store: Store, settings: MemorySettings, embedder: Embedder, abstractor: RuleAbstractor | None = None,
                tokens: TokenCounter | None = None, context_tokens: int | None = None) -> ConsolidationReport:
    """Run UGC once (see the module contract) and say what changed."""
    tokens = tokens or TokenCounter()
    abstractor = abstractor or ExtractiveAbstractor(tokens, settings.max_rule_tokens)
    budget = settings.resident_budget(context_tokens)
    with store.lock():
        seq_col = store.fetch_arrow("episodes", "state = 'credited'", ["seq"]).column("seq").to_pylist()
        seq = max(seq_col) if seq_col else 0
        # Only rows that can change: gated in LanceDB, so 10k mostly-cold items cost one scan.
        gate = (f"status = 'resident' OR (status = 'cold' AND ((u > {settings.eligible_min_utility} AND "
                f"n_ado >= {settings.eligible_min_episodes}) OR (n_ret >= {settings.retire_min_retrievals} AND "
                f"u < {settings.retire_below_utility})))")
        items = store.fetch("items", gate)
        stamp = now()
        status_rows: dict[str, dict] = {}

        def set_status(it: Item, status: str, reason: str) -> None:
            it.status = status  # type: ignore[assignment]
            status_rows[it.id] = {"id": it.id, "status": status, "status_reason": reason, "updated_at": stamp}

        retired = []
        for it in items:
            if should_retire(it, settings):
                set_status(it, "retired", f"u = {it.u:.3f} < {settings.retire_below_utility:g} after "
                                          f"{it.n_ret} episodes shown")
                retired.append(it.id)

        ok = [it for it in items if eligible(it, settings)]
        wanted = [f"rule-{it.id}" for it in ok if it.kind == "experience"]
        existing_rules = set(store.items(wanted)) if wanted else set()
        new_rules: list[Item] = []
        inherit: dict[str, str] = {}   # rule id -> the experience whose vector it keeps
        for it in ok:
            rid = f"rule-{it.id}"
            if it.kind != "experience" or rid in existing_rules:
                continue
            draft = abstractor.abstract(it)
            new_rules.append(Item(
                id=rid, kind="rule", title=draft.title, text=draft.text, operator="", category=it.category,
                tags=list(it.tags), source=it.source, u=it.u, u0=it.u, n_ret=it.n_ret, n_ado=it.n_ado,
                adopted_ops=list(it.adopted_ops), p=it.n_ado / it.n_ret if it.n_ret else 0.0, status="cold",
                status_reason=f"abstracted from {it.id}", evidence=list(it.evidence), origin=it.id, origin_seq=seq,
                last_seq=it.last_seq, created_at=stamp, updated_at=stamp))
            if draft.same_meaning:
                inherit[rid] = it.id
            set_status(it, "retired", f"abstracted into {rid}")
        if new_rules:
            for r, L in zip(new_rules, tokens.count([r.prompt_text() for r in new_rules]), strict=True):
                r.tokens = L
            kept = store.items(list(inherit.values()), with_vector=True) if inherit else {}
            for r in new_rules:
                if r.id in inherit and kept.get(inherit[r.id]) is not None:
                    r.vector = kept[inherit[r.id]].vector
            fresh = [r for r in new_rules if not r.vector]
            if fresh:
                for r, v in zip(fresh, embedder.embed([r.prompt_text() for r in fresh]), strict=True):
                    r.vector = v.tolist()

        new_ids = {r.id for r in new_rules}
        rules = [it for it in items if it.kind == "rule" and it.id not in status_rows] + new_rules
        chosen = select_resident([(r.id, r.u, r.p, r.tokens) for r in rules if eligible(r, settings)], budget)
        score = {c.id: c.score for c in chosen}
        to_cold = []
        for r in rules:
            if r.id in score and r.status != "resident":
                target, reason = "resident", f"selected: u*p/L = {score[r.id]:.4g}"
            elif r.id not in score and r.status == "resident":
                target, reason = "cold", "not re-selected at consolidation"
                to_cold.append(r.id)
            else:
                continue
            if r.id in new_ids:
                r.status, r.status_reason = target, f"abstracted from {r.origin}; {reason}"
            else:
                set_status(r, target, reason)
        store.upsert("items", new_rules, insert_only=True)
        store.update_columns("items", list(status_rows.values()), STATUS_COLUMNS)
        return ConsolidationReport(budget=budget, used_tokens=sum(c.tokens for c in chosen),
                                   eligible=[it.id for it in ok], new_rules=[r.id for r in new_rules],
                                   resident=chosen, to_cold=to_cold, retired=retired)
