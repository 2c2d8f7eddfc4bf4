"""`sage-npu memory explain ID`: every change to an item's utility, replayed from the adoption log.

The history is not stored separately: it is recomputed by the same `atu.replay` that credits live
episodes, from the episodes that showed the item (and, for a rule, its origin up to the rule's
creation). So the explanation cannot drift from the stored numbers, and `consistent` says whether
the stored state still equals the log's.
"""

from __future__ import annotations

from pydantic import BaseModel

from sage_npu.memory import atu
from sage_npu.memory.atu import AtuParams, UtilityChange
from sage_npu.memory.models import Episode, Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store, sql_in


class Step(BaseModel):
    change: UtilityChange
    episode: Episode
    of_origin: bool = False


class Explanation(BaseModel):
    item: Item
    steps: list[Step]
    replayed_u: float
    replayed_n_ret: int
    replayed_n_ado: int
    replayed_p: float
    consistent: bool


def explain(store: Store, item_id: str, settings: MemorySettings) -> Explanation:
    it = store.item(item_id)
    own = [it.id] + ([it.origin] if it.origin else [])
    mine = store.fetch("adoptions", sql_in("item_id", own))
    ep_ids = sorted({a.episode_id for a in mine})
    episodes = store.fetch("episodes", f"state = 'credited' AND {sql_in('id', ep_ids)}") if ep_ids else []
    adoptions = store.fetch("adoptions", sql_in("episode_id", ep_ids)) if ep_ids else []
    attempts = store.fetch("attempts", sql_in("episode_id", ep_ids)) if ep_ids else []
    # Every item of those episodes takes part, so each share z/|A| counts the same adopted items as live.
    involved = store.items(sorted({a.item_id for a in adoptions} | set(own)))
    states, history = atu.replay(involved.values(), episodes, adoptions, attempts, AtuParams.from_settings(settings))
    by_id = {e.id: e for e in episodes}
    steps = [Step(change=c, episode=by_id[c.episode_id]) for c in history.get(it.id, [])]
    if it.origin:
        steps = [Step(change=c, episode=by_id[c.episode_id], of_origin=True)
                 for c in history.get(it.origin, []) if c.seq <= it.origin_seq] + steps
    c = states[it.id]
    consistent = (abs(c.u - it.u) < 1e-9 and c.n_ret == it.n_ret and c.n_ado == it.n_ado
                  and abs(c.p - it.p) < 1e-9 and list(c.adopted_ops) == list(it.adopted_ops))
    return Explanation(item=it, steps=steps, replayed_u=c.u, replayed_n_ret=c.n_ret, replayed_n_ado=c.n_ado,
                       replayed_p=c.p, consistent=consistent)


def format_explanation(e: Explanation) -> str:
    it = e.item
    lines = [f"{it.id} ({it.kind}, {it.status}{': ' + it.status_reason if it.status_reason else ''})",
             f"  {it.title}",
             f"  u = {it.u:+.4f}, shown in {it.n_ret} episodes, adopted in {it.n_ado}"
             + (f", usage p = {it.p:.3f}" if it.kind == "rule" else "")
             + (f", adopted on {', '.join(it.adopted_ops)}" if it.adopted_ops else ""),
             f"  initial u = {it.u0:+.4f}" if not it.origin else
             f"  abstracted from {it.origin} after episode #{it.origin_seq}: starts with its state, "
             f"p = n_ado/n_ret"]
    if not e.steps:
        lines.append("  no credited episode has shown it yet")
    for s in e.steps:
        c, ep = s.change, s.episode
        who = f"[{it.origin}] " if s.of_origin else ""
        update = (f"eta {c.eta:.3f}, xi {c.xi:+.4f}: u {c.u_before:+.4f} -> {c.u_after:+.4f}" if c.xi is not None
                  else f"u stays {c.u_after:+.4f}")
        usage = f", p {c.p_before:.3f} -> {c.p_after:.3f}" if (it.kind == "rule" and not s.of_origin
                                                                and c.p_before != c.p_after) else ""
        lines.append(f"  #{c.seq} {who}episode {ep.id} ({ep.operator}, {c.mode}, z = {c.z:+.4f}): {c.outcome}; "
                     f"{update}{usage} -- {c.reason}")
    if not e.consistent:
        lines.append(f"  stored state differs from the log (replayed u = {e.replayed_u:+.4f}, n_ret "
                     f"{e.replayed_n_ret}, n_ado {e.replayed_n_ado}); `sage-npu memory recompute` repairs it")
    return "\n".join(lines)
