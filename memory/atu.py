"""Adoption-traced utility (docs/memory.md): pure functions, no storage.

The order of operations is the contract, per item shown in the credited turns of an episode:

1. `n_ret += 1` (once per episode, whatever the item's statuses);
2. `eta = max(1/(1+n_ret), eta_min)` (so an item's first update uses 1/2);
3. `xi`: adopted in any credited turn -> `z/|A|` (A: the items adopted in the episode), and
   `n_ado += 1`, and the episode's operator joins `adopted_ops` if the episode found a correct
   kernel; shown but never adopted -> `-b`; only ever `undeclared` -> no utility update;
4. `u <- (1-eta)*u + eta*xi`;
5. for rules, usage `p <- (1-m)*p + m*1[adopted]` (declared items only).

A person's reject scores each adopted item `xi = -d` instead of a share of `z` (its operator does
not join `adopted_ops`). The same functions credit a live episode and replay the log, so
`recompute` and `explain` reproduce every stored number exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from sage_npu.memory.models import Adoption, AdoptionStatus, Attempt, Outcome


@dataclass(frozen=True)
class AtuParams:
    no_correct_penalty: float = 0.2  # d
    ignored_penalty: float = 0.2  # b
    eta_min: float = 0.05
    usage_rate: float = 0.1  # m

    @classmethod
    def from_settings(cls, s) -> AtuParams:
        return cls(s.no_correct_penalty, s.ignored_penalty, s.eta_min, s.usage_rate)


@dataclass
class Counters:
    """The learned state of one item."""

    u: float = 0.0
    n_ret: int = 0
    n_ado: int = 0
    adopted_ops: list[str] = field(default_factory=list)
    p: float = 0.0
    kind: str = "experience"

    def copy(self) -> Counters:
        return Counters(self.u, self.n_ret, self.n_ado, list(self.adopted_ops), self.p, self.kind)


class Reward(BaseModel):
    z: float
    correct: bool
    t_first: float | None = None
    t_best: float | None = None


class UtilityChange(BaseModel):
    """One step in an item's history: what an episode did to it, and why."""

    item_id: str
    episode_id: str
    seq: int
    operator: str
    mode: Outcome
    outcome: AdoptionStatus
    z: float
    xi: float | None
    eta: float | None
    u_before: float
    u_after: float
    n_ret: int
    n_ado: int
    p_before: float
    p_after: float
    reason: str


def episode_reward(attempts: Iterable[Attempt], d: float) -> Reward:
    """z = 1 - T_best/T_first over the correct kernels (first by turn, then by order given);
    z = -d when none is correct."""
    correct = [a for a in sorted(attempts, key=lambda a: a.turn) if a.correct]
    if not correct:
        return Reward(z=-d, correct=False)
    untimed = [a.id for a in correct if a.time_us is None or a.time_us <= 0]
    if untimed:
        raise ValueError(f"correct attempts {untimed} have no positive time_us; the reward needs every correct "
                         f"kernel's time (device, or estimated without launch overhead)")
    times = [float(a.time_us or 0.0) for a in correct]  # every one positive: checked above
    t_first, t_best = times[0], min(times)
    return Reward(z=1.0 - t_best / t_first, correct=True, t_first=t_first, t_best=t_best)


def accepted_reward(attempts: Iterable[Attempt], accepted: Attempt, d: float) -> Reward:
    """The reward of a suggestion a person accepted: 1 - T_accepted/T_first (T_first: the episode's
    first correct kernel); -d if the accepted kernel is not correct."""
    if not accepted.correct:
        return Reward(z=-d, correct=False)
    if accepted.time_us is None or accepted.time_us <= 0:
        raise ValueError(f"the accepted attempt {accepted.id} has no positive time_us; the reward needs it")
    base = episode_reward(attempts, d)
    assert base.t_first is not None  # the accepted attempt is correct, so the episode has a first correct one
    return Reward(z=1.0 - accepted.time_us / base.t_first, correct=True, t_first=base.t_first,
                  t_best=accepted.time_us)


def item_outcomes(adoptions: Iterable[Adoption], turns: Iterable[int] | None = None) -> dict[str, AdoptionStatus]:
    """Per item shown in the given turns (all turns if None): adopted if adopted in any turn, else
    not_adopted if declared not adopted in any turn, else undeclared."""
    wanted = None if turns is None else set(turns)
    rank = {"undeclared": 0, "not_adopted": 1, "adopted": 2}
    out: dict[str, AdoptionStatus] = {}
    for a in adoptions:
        if wanted is not None and a.turn not in wanted:
            continue
        if rank[a.status] >= rank.get(out.get(a.item_id, "undeclared"), 0):
            out[a.item_id] = a.status
    return out


def credit(states: dict[str, Counters], outcomes: dict[str, AdoptionStatus], reward: Reward, operator: str,
           mode: Outcome, episode_id: str, seq: int, params: AtuParams) -> list[UtilityChange]:
    """Apply one episode to `states` in place (items missing from `states` are skipped: deleted or
    unknown ids) and return what changed, in the order of `outcomes`."""
    adopted = [i for i, o in outcomes.items() if o == "adopted" and i in states]
    changes = []
    for item_id, outcome in outcomes.items():
        c = states.get(item_id)
        if c is None:
            continue
        u0, p0 = c.u, c.p
        c.n_ret += 1
        eta = max(1.0 / (1.0 + c.n_ret), params.eta_min)
        if outcome == "adopted":
            c.n_ado += 1
            if mode == "rejected":
                xi = -params.no_correct_penalty
                reason = f"adopted, but the person rejected the suggestion: xi = -d = {xi:g}"
            else:
                xi = reward.z / len(adopted)
                reason = f"adopted; shares z = {reward.z:.4g} with {len(adopted) - 1} other adopted item(s)"
                if reward.correct and operator not in c.adopted_ops:
                    c.adopted_ops.append(operator)
        elif outcome == "not_adopted":
            xi = -params.ignored_penalty
            reason = f"shown, never adopted: xi = -b = {xi:g}"
        else:
            xi = None
            reason = "undeclared in every turn: shown (n_ret counts it), utility unchanged"
        if xi is not None:
            c.u = (1.0 - eta) * c.u + eta * xi
            if c.kind == "rule":
                c.p = (1.0 - params.usage_rate) * c.p + params.usage_rate * (1.0 if outcome == "adopted" else 0.0)
        changes.append(UtilityChange(
            item_id=item_id, episode_id=episode_id, seq=seq, operator=operator, mode=mode, outcome=outcome,
            z=reward.z, xi=xi, eta=eta if xi is not None else None, u_before=u0, u_after=c.u, n_ret=c.n_ret,
            n_ado=c.n_ado, p_before=p0, p_after=c.p, reason=reason))
    return changes


def initial_counters(item, params: AtuParams) -> Counters:
    """The state of an experience before any episode (rules start from their origin; see `replay`)."""
    return Counters(u=item.u0, kind=item.kind)


def replay(items: Iterable, episodes: Iterable, adoptions: Iterable[Adoption],
           params: AtuParams) -> tuple[dict[str, Counters], dict[str, list[UtilityChange]]]:
    """Rebuild every item's learned state from the log: credited episodes in `seq` order, each
    applied to the adoptions of its credited turns. A rule starts as a copy of its origin's state at
    `origin_seq`, with usage `p = n_ado/n_ret`. Returns the states and each item's history."""
    items = list(items)
    by_episode: dict[str, list[Adoption]] = {}
    for a in adoptions:
        by_episode.setdefault(a.episode_id, []).append(a)
    states = {it.id: initial_counters(it, params) for it in items if not (it.kind == "rule" and it.origin)}
    pending_rules = sorted((it for it in items if it.kind == "rule" and it.origin), key=lambda it: it.origin_seq)
    history: dict[str, list[UtilityChange]] = {}

    def start_rules(before_seq: float) -> None:
        while pending_rules and pending_rules[0].origin_seq < before_seq:
            rule = pending_rules.pop(0)
            src = states.get(rule.origin)
            c = src.copy() if src is not None else Counters(u=rule.u0)
            c.kind = "rule"
            c.p = c.n_ado / c.n_ret if c.n_ret else 0.0
            states[rule.id] = c

    for ep in sorted((e for e in episodes if e.state == "credited"), key=lambda e: e.seq):
        start_rules(ep.seq)
        outcomes = item_outcomes(by_episode.get(ep.id, []), ep.credited_turns)
        reward = Reward(z=ep.reward if ep.reward is not None else 0.0, correct=ep.correct)
        for ch in credit(states, outcomes, reward, ep.operator, ep.outcome or "agent", ep.id, ep.seq, params):
            history.setdefault(ch.item_id, []).append(ch)
    start_rules(float("inf"))
    return states, history
