"""ATU against hand-computed values (DESIGN section 5), and the editor's accept / reject / timeout.
Credit follows the attempt that adopted the item: new best, correct without a new best, not correct.

Defaults: d = b = 0.2, eta = max(1/(1+n_ret), 0.05), m = 0.1. Each expected number below is
worked out by hand in the comment next to it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from sage_npu.memory import atu, episodes
from sage_npu.memory.atu import AtuParams, Counters, Reward
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item, now
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store

DIM = 8
SETTINGS = MemorySettings(embedder="hashing", hashing_dim=DIM)
P = AtuParams()


def att(eid: str, turn: int, t: float | None, status: str = "correct") -> Attempt:
    return Attempt(id=f"{eid}-t{turn}", episode_id=eid, turn=turn, status=status, time_us=t)


def ado(eid: str, turn: int, item: str, status: str) -> Adoption:
    return Adoption(episode_id=eid, turn=turn, item_id=item, status=status)


@pytest.fixture
def store(tmp_path):
    s = Store.create(tmp_path / "mem", "hashing-8", DIM, SETTINGS)
    items = [Item(id=i, title=i, text=i, u=u0, u0=u0, vector=[1.0] * DIM)
             for i, u0 in [("A", 0.0), ("B", 0.0), ("C", 0.0), ("W", 0.4)]]
    with s.lock():
        s.upsert("items", items)
    return s


def credit(store, eid, op, attempts, adoptions):
    log = EpisodeLog(episode=Episode(id=eid, operator=op), attempts=attempts, adoptions=adoptions)
    return episodes.credit_episode(store, log, SETTINGS)


# ---- the reward


def test_reward_is_one_minus_best_over_first_correct():
    attempts = [att("e", 0, 200.0, "incorrect"), att("e", 1, 100.0), att("e", 2, 40.0), att("e", 3, 60.0)]
    r = atu.episode_reward(attempts, 0.2)
    assert (r.z, r.t_first, r.t_best, r.correct) == (pytest.approx(0.6), 100.0, 40.0, True)  # 1 - 40/100


def test_reward_without_a_correct_kernel_is_minus_d():
    r = atu.episode_reward([att("e", 0, 10.0, "compile-error"), att("e", 1, None, "incorrect")], 0.2)
    assert (r.z, r.correct) == (-0.2, False)


def test_a_correct_kernel_without_a_time_is_refused():
    with pytest.raises(ValueError, match="time_us"):
        atu.episode_reward([att("e", 0, None)], 0.2)


# ---- the update, through the store


def test_no_correct_kernel(store):
    credit(store, "e1", "add", [att("e1", 0, None, "incorrect"), att("e1", 1, 5.0, "compile-error")],
           [ado("e1", 0, "A", "adopted"), ado("e1", 0, "B", "not_adopted"), ado("e1", 0, "C", "undeclared")])
    it = store.items(["A", "B", "C"])
    # z = -d = -0.2; n_ret 1 -> eta 1/2; A: xi = -0.2/1 -> u = 0.5*0 + 0.5*-0.2 = -0.1, no operator (nothing correct)
    assert (it["A"].u, it["A"].n_ret, it["A"].n_ado, it["A"].adopted_ops) == (pytest.approx(-0.1), 1, 1, [])
    # B: never adopted -> xi = -b = -0.2 -> u = -0.1
    assert (it["B"].u, it["B"].n_ret, it["B"].n_ado) == (pytest.approx(-0.1), 1, 0)
    # C: undeclared only -> shown (n_ret 1), u unchanged
    assert (it["C"].u, it["C"].n_ret, it["C"].n_ado) == (0.0, 1, 0)
    ep = store.fetch("episodes")[0]
    assert (ep.state, ep.reward, ep.correct, ep.outcome, ep.seq) == ("credited", -0.2, False, "agent", 1)


def test_first_is_best(store):
    credit(store, "e1", "add", [att("e1", 0, 100.0, "mismatch"), att("e1", 1, 100.0), att("e1", 2, 120.0)],
           [ado("e1", 1, "W", "adopted")])
    w = store.item("W")
    # turn 1 is the first correct attempt (a new best); z = 1 - 100/100 = 0; W starts at 0.4:
    # u = 0.5*0.4 + 0.5*0 = 0.2; the operator joins
    assert (w.u, w.n_ret, w.n_ado, w.adopted_ops) == (pytest.approx(0.2), 1, 1, ["add"])


def test_an_item_adopted_by_a_slower_correct_attempt_only_counts_an_adoption(store):
    credit(store, "e1", "add", [att("e1", 0, 100.0), att("e1", 1, 120.0)], [ado("e1", 1, "W", "adopted")])
    w = store.item("W")
    # turn 1 is correct but slower than the seed: no new best -> n_ado += 1, u stays 0.4, no operator
    assert (w.u, w.n_ret, w.n_ado, w.adopted_ops) == (0.4, 1, 1, [])


def test_credit_follows_the_attempt_that_adopted_the_item(store):
    with store.lock():
        store.upsert("items", [Item(id=i, title=i, text=i, vector=[1.0] * DIM)
                               for i in ("N1", "N2", "I", "M", "X", "U")])
    attempts = [att("e1", 0, 100.0), att("e1", 1, None, "compile_error"), att("e1", 2, 120.0),
                att("e1", 3, 80.0), att("e1", 4, None, "mismatch")]
    adoptions = [ado("e1", 1, "I", "adopted"), ado("e1", 1, "M", "adopted"), ado("e1", 2, "M", "adopted"),
                 ado("e1", 2, "W", "adopted"), ado("e1", 3, "N1", "adopted"), ado("e1", 3, "N2", "adopted"),
                 ado("e1", 4, "N2", "adopted"), ado("e1", 3, "X", "not_adopted"), ado("e1", 3, "U", "undeclared")]
    r = credit(store, "e1", "add", attempts, adoptions)
    it = store.items(["N1", "N2", "I", "M", "W", "X", "U"])
    # z = 1 - 80/100 = 0.2; new bests: turn 0 (first correct) and turn 3 (80 < 100); turn 2 (120) is not one.
    # N1, N2 adopted by turn 3: A = {N1, N2}, xi = 0.2/2 = 0.1, eta 1/2 -> u = 0.05, operator joins
    assert [(it[i].u, it[i].n_ado, it[i].adopted_ops) for i in ("N1", "N2")] == [(pytest.approx(0.05), 1, ["add"])] * 2
    # I adopted only by the compile error: xi = -b = -0.2 -> u = -0.1, n_ado 1, no operator
    assert (it["I"].u, it["I"].n_ado, it["I"].adopted_ops) == (pytest.approx(-0.1), 1, [])
    # W adopted only by the slower correct turn 2: n_ado only, u stays 0.4; M (turns 1 and 2): the same
    assert [(it[i].u, it[i].n_ado, it[i].adopted_ops) for i in ("W", "M")] == [(0.4, 1, []), (0.0, 1, [])]
    # X shown, never adopted: xi = -b -> -0.1, n_ado 0; U undeclared: n_ret only
    assert (it["X"].u, it["X"].n_ado, it["U"].u, it["U"].n_ret) == (pytest.approx(-0.1), 0, 0.0, 1)
    by = {c.item_id: c for c in r.changes}
    assert {i: by[i].credit for i in by} == {"I": "incorrect", "M": "correct", "W": "correct", "N1": "new_best",
                                             "N2": "new_best", "X": "not_adopted", "U": "undeclared"}
    assert (by["N1"].xi, by["N1"].eta, by["I"].xi, by["W"].xi, by["W"].eta) == (
        pytest.approx(0.1), 0.5, pytest.approx(-0.2), None, None)
    assert episodes.recompute(store, SETTINGS).fixed == []  # the log replays to the same numbers


def test_nothing_adopted(store):
    credit(store, "e1", "add", [att("e1", 0, 100.0), att("e1", 1, 50.0)],
           [ado("e1", 0, "A", "not_adopted"), ado("e1", 1, "B", "not_adopted")])
    it = store.items(["A", "B"])
    # z = 0.5 but |A| = 0: both shown and ignored -> u = 0.5*0 + 0.5*-0.2 = -0.1
    assert [(it[i].u, it[i].n_ret, it[i].n_ado) for i in "AB"] == [(pytest.approx(-0.1), 1, 0)] * 2


def test_an_item_shown_in_many_turns_counts_once_per_episode(store):
    adoptions = [ado("e1", t, "A", s) for t, s in enumerate(["not_adopted", "adopted", "not_adopted"])]
    adoptions += [ado("e1", t, "B", s) for t, s in enumerate(["adopted", "undeclared", "not_adopted"])]
    credit(store, "e1", "add", [att("e1", 0, 100.0), att("e1", 1, 50.0), att("e1", 2, 60.0)], adoptions)
    it = store.items(["A", "B"])
    # both adopted by a new best (B by the first correct turn 0, A by turn 1): |A| = 2, xi = 0.5/2 = 0.25;
    # n_ret = 1 (not 3) -> eta 1/2 -> u = 0.125
    assert [(it[i].u, it[i].n_ret, it[i].n_ado) for i in "AB"] == [(pytest.approx(0.125), 1, 1)] * 2
    credit(store, "e2", "mul", [att("e2", 0, 100.0), att("e2", 1, 80.0)],
           [ado("e2", t, "A", "adopted") for t in range(4)])
    a = store.item("A")
    # second episode: n_ret 2 -> eta 1/3; z = 0.2, |A| = 1: u = (2/3)*0.125 + (1/3)*0.2 = 0.15
    assert (a.u, a.n_ret, a.n_ado, a.adopted_ops) == (pytest.approx(0.15), 2, 2, ["add", "mul"])


def test_an_undeclared_item_is_counted_shown_but_not_updated(store):
    credit(store, "e1", "add", [att("e1", 0, 100.0), att("e1", 1, 50.0)],
           [ado("e1", t, "W", "undeclared") for t in range(3)] + [ado("e1", 0, "A", "adopted")])
    w, a = store.item("W"), store.item("A")
    assert (w.u, w.n_ret, w.n_ado, w.adopted_ops) == (0.4, 1, 0, [])
    # the undeclared item does not dilute the share: A alone gets z = 0.5 -> u = 0.25
    assert a.u == pytest.approx(0.25)


def test_the_same_episode_credited_twice_changes_nothing(store):
    args = ("e1", "add", [att("e1", 0, 100.0), att("e1", 1, 50.0)], [ado("e1", 0, "A", "adopted")])
    first = credit(store, *args)
    snapshot = store.item("A")
    second = credit(store, *args)
    assert first.credited and not first.already_credited
    assert second.already_credited and not second.credited and second.seq == first.seq
    again = store.item("A")
    assert (again.u, again.n_ret, again.n_ado, again.last_seq) == (snapshot.u, 1, 1, 1)
    assert store.count("episodes") == 1 and store.count("adoptions") == 1 and store.count("attempts") == 2


def test_unknown_ids_in_the_log_are_ignored_and_do_not_dilute_the_share(store):
    credit(store, "e1", "add", [att("e1", 0, 100.0), att("e1", 1, 50.0)],
           [ado("e1", 0, "A", "adopted"), ado("e1", 0, "ghost", "adopted")])
    assert store.item("A").u == pytest.approx(0.25)  # z = 0.5 shared by A alone


# ---- pure pieces


def test_eta_has_a_floor():
    states = {"A": Counters(u=0.0, n_ret=30)}
    atu.credit(states, {"A": "new_best"}, Reward(z=1.0, correct=True), "add", "agent", "e", 1, P)
    # n_ret 31 -> 1/32 < 0.05 -> eta 0.05: u = 0.05
    assert states["A"].u == pytest.approx(0.05)


def test_rule_usage_is_an_ema_of_adoption():
    states = {"R": Counters(u=0.2, n_ret=4, n_ado=2, p=0.5, kind="rule"), "S": Counters(p=0.5, kind="rule"),
              "U": Counters(p=0.5, kind="rule")}
    atu.credit(states, {"R": "new_best", "S": "not_adopted", "U": "undeclared"}, Reward(z=0.0, correct=True),
               "add", "agent", "e", 1, P)
    # p <- 0.9 p + 0.1 1[adopted]; undeclared: no update
    assert (states["R"].p, states["S"].p, states["U"].p) == (pytest.approx(0.55), pytest.approx(0.45), 0.5)


def test_item_outcomes_take_the_strongest_status_over_the_credited_turns():
    log = [ado("e", 0, "A", "undeclared"), ado("e", 1, "A", "not_adopted"), ado("e", 2, "A", "adopted"),
           ado("e", 0, "B", "not_adopted"), ado("e", 1, "B", "undeclared")]
    assert atu.item_outcomes(log) == {"A": "adopted", "B": "not_adopted"}
    assert atu.item_outcomes(log, turns=[0, 1]) == {"A": "not_adopted", "B": "not_adopted"}


# ---- the editor: accept, reject, timeout


def open_editor_episode(store, eid="ed1", deadline=None):
    attempts = [att(eid, 0, 100.0), att(eid, 1, 80.0), att(eid, 2, 50.0)]
    adoptions = [ado(eid, 1, "A", "adopted"), ado(eid, 1, "B", "not_adopted"), ado(eid, 2, "C", "adopted")]
    log = EpisodeLog(episode=Episode(id=eid, operator="softmax"), attempts=attempts, adoptions=adoptions)
    episodes.record_episode(store, log, SETTINGS, deadline=deadline)


def test_an_editor_episode_stays_open_until_decided(store):
    open_editor_episode(store)
    ep = store.fetch("episodes")[0]
    assert ep.state == "open" and ep.deadline is not None
    assert store.item("A").n_ret == 0


def test_accept_credits_the_turns_that_produced_the_suggestion_with_its_reward(store):
    open_editor_episode(store)
    r = episodes.decide(store, "ed1", "accept", "ed1-t1", SETTINGS)
    it = store.items(["A", "B", "C"])
    # suggestion of turn 1: z = 1 - 80/100 = 0.2; turns 0..1 credited: A alone adopted -> u = 0.5*0.2 = 0.1
    assert (r.outcome, r.reward) == ("accepted", pytest.approx(0.2))
    assert (it["A"].u, it["A"].adopted_ops) == (pytest.approx(0.1), ["softmax"])
    assert it["B"].u == pytest.approx(-0.1)
    assert (it["C"].u, it["C"].n_ret) == (0.0, 0)  # shown only in turn 2: not part of the accepted suggestion
    assert store.fetch("episodes")[0].credited_turns == [0, 1]


def test_reject_scores_each_adoption_minus_d(store):
    open_editor_episode(store)
    episodes.decide(store, "ed1", "reject", "ed1-t2", SETTINGS)
    it = store.items(["A", "B", "C"])
    # turns 0..2; A and C adopted: each xi = -d = -0.2 (not shared) -> -0.1; no operator joins
    assert [(it[i].u, it[i].n_ado, it[i].adopted_ops) for i in "AC"] == [(pytest.approx(-0.1), 1, [])] * 2
    assert it["B"].u == pytest.approx(-0.1)


def test_timeout_credits_as_the_agent_alone_and_a_late_decision_changes_nothing(store):
    open_editor_episode(store, deadline=now() - timedelta(seconds=1))
    open_editor_episode(store, eid="ed2")  # deadline an hour away: stays open
    results = episodes.expire_open_episodes(store, SETTINGS)
    assert [r.episode_id for r in results] == ["ed1"]
    it = store.items(["A", "C"])
    # agent credit: z = 1 - 50/100 = 0.5 over all turns, A and C adopted: xi = 0.25 -> u = 0.125
    assert [it[i].u for i in "AC"] == [pytest.approx(0.125)] * 2
    late = episodes.decide(store, "ed1", "reject", "ed1-t2", SETTINGS)
    assert late.already_credited and late.outcome == "timeout"
    assert store.item("A").u == pytest.approx(0.125)
    assert {e.id: e.state for e in store.fetch("episodes")} == {"ed1": "credited", "ed2": "open"}
