"""The paper's claim as a simulation: crediting only what was adopted (ATU) finds the useful items
better than crediting everything retrieved (uniform credit, as MemRL/EvoKernel do) or not learning;
and crediting the attempt that adopted an item beats crediting every adoption of the episode alike.

The world. Items belong to topics (their vectors sit near a topic centre); each item is secretly
useful or useless, independent of its similarity, so similarity alone cannot tell them apart.
An episode optimizes an operator of one topic: the memory retrieves the top 5 (the real `rank`:
50 nearest, min-max similarity, (1-g)*sim + g*u) and shows the resident rules. Half the episodes
start from a correct seed (time 1.0), half from a draft that is not correct. The agent makes 3
attempts; each adopts every shown item independently, a useful one with probability 0.4, a useless
one with 0.1. An attempt fails (not correct) with probability 1 - 0.9*0.8^(useless adopted),
otherwise its time is 1.0 less 15% per useful adoption and plus 5% per useless one. The reward is
the real `episode_reward` (z = 1 - T_best/T_first over correct attempts, -d when none is). UGC (the
real eligibility gate and greedy u*p/L selection, budget 500 tokens, rule lengths 40-80) runs every
50 episodes.

Methods: ATU (the real `atu.item_credits` and `atu.credit`: credit follows the attempt that adopted
the item); ATU-episode (the earlier rule: every item adopted in any attempt shares z, whatever that
attempt did); uniform (every shown item gets xi = z and counts as adopted, operator included when
correct); none (u stays 0). After N episodes, on fresh queries: precision@5 of the ranking for truly
useful items, and the share of useful rules in the resident set.
Run: python benchmarks/atu_ablation.py [--episodes 400] [--seeds 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_npu.memory import atu, ugc  # noqa: E402
from sage_npu.memory.atu import AtuParams, Counters  # noqa: E402
from sage_npu.memory.models import Adoption, Attempt, Item  # noqa: E402
from sage_npu.memory.retrieval import rank  # noqa: E402
from sage_npu.memory.settings import MemorySettings  # noqa: E402

S = MemorySettings(resident_token_budget=500)
P = AtuParams.from_settings(S)
DIM, TOPICS, ITEMS, OPS_PER_TOPIC = 32, 8, 240, 6
P_USEFUL, ADOPT_USEFUL, ADOPT_USELESS, ATTEMPTS = 0.3, 0.4, 0.1, 3
METHODS = ("atu", "atu-episode", "uniform", "none")
# Distance of an item (a query) from its topic centre, relative to the distance between centres (~1.4).
ITEM_SPREAD, QUERY_SPREAD = 0.5, 0.3


class World:
    def __init__(self, seed: int, item_spread: float = ITEM_SPREAD):
        self.rng = rng = np.random.default_rng(seed)
        self.centres = _unit(rng.normal(size=(TOPICS, DIM)))
        self.topic = rng.integers(0, TOPICS, ITEMS)
        self.vec = _unit(self.centres[self.topic] + item_spread * rng.normal(size=(ITEMS, DIM)) / np.sqrt(DIM))
        self.useful = rng.random(ITEMS) < P_USEFUL
        self.tokens = rng.integers(40, 81, ITEMS)

    def query(self, topic: int) -> np.ndarray:
        return _unit(self.centres[topic] + QUERY_SPREAD * self.rng.normal(size=DIM) / np.sqrt(DIM))


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def retrieve(world: World, states: dict[int, Counters], q: np.ndarray, exclude: set[int], k: int = 5) -> list[int]:
    sims = world.vec @ q
    pool = [i for i in np.argsort(-sims) if i not in exclude][: S.candidates]
    ranked = rank([(str(i), float(sims[i]), states[str(i)].u) for i in pool], S.utility_weight, k)
    return [int(r[0]) for r in ranked]


def attempts_of(world: World, shown: list[int], ep: int) -> tuple[list[Attempt], list[Adoption]]:
    """One episode's log: the seed (turn 0) and ATTEMPTS attempts, each with its adoptions."""
    rng = world.rng
    eid = f"e{ep}"
    seed_ok = rng.random() < 0.5
    attempts = [Attempt(id=f"{eid}/0", episode_id=eid, turn=0, status="correct" if seed_ok else "mismatch",
                        time_us=1.0 if seed_ok else None)]
    adoptions = []
    for turn in range(1, ATTEMPTS + 1):
        adopted = {i for i in shown if rng.random() < (ADOPT_USEFUL if world.useful[i] else ADOPT_USELESS)}
        n_bad = sum(not world.useful[i] for i in adopted)
        ok = rng.random() < 0.9 * 0.8 ** n_bad
        t = float(np.prod([0.85 if world.useful[i] else 1.05 for i in adopted])) if adopted else 1.0
        attempts.append(Attempt(id=f"{eid}/{turn}", episode_id=eid, turn=turn, status="correct" if ok else "mismatch",
                                time_us=t if ok else None))
        adoptions += [Adoption(episode_id=eid, turn=turn, item_id=str(i),
                               status="adopted" if i in adopted else "not_adopted") for i in shown]
    return attempts, adoptions


def episode(world: World, states, resident: list[int], method: str, ep: int) -> None:
    rng = world.rng
    topic = int(rng.integers(0, TOPICS))
    operator = f"t{topic}-op{int(rng.integers(0, OPS_PER_TOPIC))}"
    shown = retrieve(world, states, world.query(topic), set(resident)) + resident
    attempts, adoptions = attempts_of(world, shown, ep)
    reward = atu.episode_reward(attempts, S.no_correct_penalty)
    if method == "atu":
        atu.credit(states, atu.item_credits(adoptions, attempts), reward, operator, "agent", f"e{ep}", ep, P)
    elif method == "atu-episode":
        # The earlier rule: any adoption in the episode shares z, as if it had set the new best.
        credits = {i: ("new_best" if s == "adopted" else s) for i, s in atu.item_outcomes(adoptions).items()}
        atu.credit(states, credits, reward, operator, "agent", f"e{ep}", ep, P)
    elif method == "uniform":
        for i in shown:
            c = states[str(i)]
            c.n_ret += 1
            eta = max(1.0 / (1.0 + c.n_ret), P.eta_min)
            c.n_ado += 1
            if reward.correct and operator not in c.adopted_ops:
                c.adopted_ops.append(operator)
            c.u = (1 - eta) * c.u + eta * reward.z
            if c.kind == "rule":
                c.p = (1 - P.usage_rate) * c.p + P.usage_rate
    # "none": nothing learns


def consolidate(world: World, states, resident: list[int]) -> list[int]:
    cands = []
    for i, c in states.items():
        it = Item(id=i, title="", text="", u=c.u, n_ado=c.n_ado, adopted_ops=c.adopted_ops)
        if ugc.eligible(it, S):
            if c.kind != "rule":  # first selection: becomes a rule with p = n_ado/n_ret
                c.kind, c.p = "rule", c.n_ado / max(c.n_ret, 1)
            cands.append((i, c.u, c.p, int(world.tokens[int(i)])))
    return [int(s.id) for s in ugc.select_resident(cands, S.resident_budget())]


def run(seed: int, method: str, episodes: int, item_spread: float = ITEM_SPREAD) -> tuple[float, float | None, int]:
    world = World(seed, item_spread)
    world.rng = np.random.default_rng(seed + 1000)  # same episode stream shape for every method
    states = {str(i): Counters() for i in range(ITEMS)}
    resident: list[int] = []
    for ep in range(1, episodes + 1):
        episode(world, states, resident, method, ep)
        if ep % 50 == 0:
            resident = consolidate(world, states, resident)
    test = np.random.default_rng(seed + 2000)
    hits = []
    for _ in range(200):
        world.rng = test
        top = retrieve(world, states, world.query(int(test.integers(0, TOPICS))), set())
        hits.append(float(np.mean([world.useful[i] for i in top])))
    share = float(np.mean([world.useful[i] for i in resident])) if resident else None
    return float(np.mean(hits)), share, len(resident)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args()
    print(f"world: {ITEMS} items in {TOPICS} topics, {P_USEFUL:.0%} useful; {ATTEMPTS} attempts per episode, each "
          f"adopting a useful item with {ADOPT_USEFUL}, a useless one with {ADOPT_USELESS}; {a.episodes} episodes; "
          f"{a.seeds} seeds; chance precision = {P_USEFUL:.2f}")
    print(f"{'method':<12} {'precision@5':>18} {'useful share of resident':>28} {'resident rules':>16}")
    results = {}
    for method in METHODS:
        rows = [run(seed, method, a.episodes) for seed in range(a.seeds)]
        prec = [r[0] for r in rows]
        shares = [r[1] for r in rows if r[1] is not None]
        sizes = [r[2] for r in rows]
        results[method] = (statistics.mean(prec), statistics.mean(shares) if shares else None)
        share_txt = (f"{statistics.mean(shares):.3f} +- {statistics.pstdev(shares):.3f}" if shares
                     else "n/a (none eligible)")
        print(f"{method:<12} {statistics.mean(prec):>9.3f} +- {statistics.pstdev(prec):.3f} {share_txt:>28} "
              f"{statistics.mean(sizes):>16.1f}")
    (pa, sa), (pe, se), (pu, su), (pn, _) = (results[m] for m in METHODS)
    print(f"ATU vs ATU-episode: precision@5 {pa - pe:+.3f}; vs uniform {pa - pu:+.3f} ({pa / pu:.2f}x); "
          f"vs none {pa - pn:+.3f} ({pa / pn:.2f}x)")
    if sa is not None and su is not None:
        print(f"ATU vs uniform: useful share of the resident set {sa - su:+.3f}"
              + (f"; vs ATU-episode {sa - se:+.3f}" if se is not None else ""))
    # Utility can only reorder items of similar similarity (min-max spreads the 50 candidates over
    # [0, 1] and g = 0.3): the looser a topic's items, the less any credit rule can move them.
    print("\nsensitivity: precision@5 by how far items sit from their topic centre")
    print(f"{'spread':>8} {'atu':>7} {'atu-ep':>7} {'uniform':>8} {'none':>7}")
    for spread in (0.3, 0.5, 1.0, 2.0):
        row = [statistics.mean(run(seed, m, a.episodes, spread)[0] for seed in range(a.seeds))
               for m in METHODS]
        print(f"{spread:>8.1f} {row[0]:>7.3f} {row[1]:>7.3f} {row[2]:>8.3f} {row[3]:>7.3f}")


if __name__ == "__main__":
    main()
