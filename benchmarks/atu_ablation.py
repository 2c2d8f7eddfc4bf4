"""The paper's claim as a simulation: crediting only what was adopted (ATU) finds the useful items
better than crediting everything retrieved (uniform credit, as MemRL/EvoKernel do) or not learning.

The world. Items belong to topics (their vectors sit near a topic centre); each item is secretly
useful or useless, independent of its similarity, so similarity alone cannot tell them apart.
An episode optimizes an operator of one topic: the memory retrieves the top 5 (the real `rank`:
50 nearest, min-max similarity, (1-g)*sim + g*u) and shows the resident rules. The agent adopts
noisily: a useful item with probability 0.7, a useless one with 0.15. The reward comes from the
hidden truth: the kernel fails (z = -d) with probability 1 - 0.9*0.8^(useless adopted), otherwise
each useful adoption takes 15% off the time and each useless one adds 5% (z = 1 - T_best/T_first,
never below 0). UGC (the real eligibility gate and greedy u*p/L selection, budget 500 tokens,
rule lengths 40-80) runs every 50 episodes.

Methods: ATU (the real `atu.credit`); uniform (every shown item gets xi = z and counts as
adopted, operator included when correct); none (u stays 0). After N episodes, on fresh queries:
precision@5 of the ranking for truly useful items, and the share of useful rules in the resident
set. Run: python benchmarks/atu_ablation.py [--episodes 400] [--seeds 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sage_npu.memory import atu, ugc  # noqa: E402
from sage_npu.memory.atu import AtuParams, Counters, Reward  # noqa: E402
from sage_npu.memory.models import Item  # noqa: E402
from sage_npu.memory.retrieval import rank  # noqa: E402
from sage_npu.memory.settings import MemorySettings  # noqa: E402

S = MemorySettings(resident_token_budget=500)
P = AtuParams.from_settings(S)
DIM, TOPICS, ITEMS, OPS_PER_TOPIC = 32, 8, 240, 6
P_USEFUL, ADOPT_USEFUL, ADOPT_USELESS = 0.3, 0.7, 0.15
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


def episode(world: World, states, resident: list[int], method: str, ep: int) -> None:
    rng = world.rng
    topic = int(rng.integers(0, TOPICS))
    operator = f"t{topic}-op{int(rng.integers(0, OPS_PER_TOPIC))}"
    shown = retrieve(world, states, world.query(topic), set(resident)) + resident
    adopted = {i for i in shown if rng.random() < (ADOPT_USEFUL if world.useful[i] else ADOPT_USELESS)}
    n_bad = sum(not world.useful[i] for i in adopted)
    if rng.random() > 0.9 * 0.8 ** n_bad:
        reward = Reward(z=-S.no_correct_penalty, correct=False)
    else:
        t = np.prod([0.85 if world.useful[i] else 1.05 for i in adopted]) if adopted else 1.0
        reward = Reward(z=max(0.0, 1.0 - min(t, 1.0)), correct=True)
    if method == "atu":
        outcomes = {str(i): ("adopted" if i in adopted else "not_adopted") for i in shown}
        atu.credit(states, outcomes, reward, operator, "agent", f"e{ep}", ep, P)
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
    print(f"world: {ITEMS} items in {TOPICS} topics, {P_USEFUL:.0%} useful; adopt useful {ADOPT_USEFUL}, useless "
          f"{ADOPT_USELESS}; {a.episodes} episodes; {a.seeds} seeds; chance precision = {P_USEFUL:.2f}")
    print(f"{'method':<10} {'precision@5':>18} {'useful share of resident':>28} {'resident rules':>16}")
    results = {}
    for method in ("atu", "uniform", "none"):
        rows = [run(seed, method, a.episodes) for seed in range(a.seeds)]
        prec = [r[0] for r in rows]
        shares = [r[1] for r in rows if r[1] is not None]
        sizes = [r[2] for r in rows]
        results[method] = (statistics.mean(prec), statistics.mean(shares) if shares else None)
        share_txt = (f"{statistics.mean(shares):.3f} +- {statistics.pstdev(shares):.3f}" if shares
                     else "n/a (none eligible)")
        print(f"{method:<10} {statistics.mean(prec):>9.3f} +- {statistics.pstdev(prec):.3f} {share_txt:>28} "
              f"{statistics.mean(sizes):>16.1f}")
    (pa, sa), (pu, su), (pn, _) = results["atu"], results["uniform"], results["none"]
    print(f"ATU vs uniform: precision@5 {pa - pu:+.3f} ({pa / pu:.2f}x); vs none {pa - pn:+.3f} ({pa / pn:.2f}x)")
    if sa is not None and su is not None:
        print(f"ATU vs uniform: useful share of the resident set {sa - su:+.3f}")
    # Utility can only reorder items of similar similarity (min-max spreads the 50 candidates over
    # [0, 1] and g = 0.3): the looser a topic's items, the less any credit rule can move them.
    print("\nsensitivity: precision@5 by how far items sit from their topic centre")
    print(f"{'spread':>8} {'atu':>7} {'uniform':>8} {'none':>7}")
    for spread in (0.3, 0.5, 1.0, 2.0):
        row = [statistics.mean(run(seed, m, a.episodes, spread)[0] for seed in range(a.seeds))
               for m in ("atu", "uniform", "none")]
        print(f"{spread:>8.1f} {row[0]:>7.3f} {row[1]:>8.3f} {row[2]:>7.3f}")


if __name__ == "__main__":
    main()
