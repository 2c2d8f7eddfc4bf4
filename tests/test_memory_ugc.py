"""UGC (eligibility, abstraction, greedy u*p/L selection into the token budget, rule ids, usage EMA,
return to cold, retirement) and `explain`."""

from __future__ import annotations

import pytest

from sage_npu.memory import episodes, explain, ugc
from sage_npu.memory.embeddings import HashingEmbedder
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store
from sage_npu.memory.tokens import TokenCounter

EMB = HashingEmbedder(32)
SETTINGS = MemorySettings(embedder="hashing", hashing_dim=32)
TOKENS = TokenCounter()

LONG_TEXT = ("Allocate the input and output queues with BUFFER_NUM = 2. The copy-in of tile i+1 then overlaps the "
             "compute of tile i, and the copy-out overlaps the next copy-in. Halve the tile so both buffers fit "
             "the Unified Buffer. On add_custom this took the kernel from 41 us to 23 us.")


def item(i: str, **kw) -> Item:
    kw.setdefault("title", f"title {i}")
    kw.setdefault("text", f"text of {i}")
    return Item(id=i, vector=EMB.embed([i])[0].tolist(), **kw)


# ---- pure pieces


def test_the_eligibility_gate():
    ok = dict(u=0.1, n_ado=3, adopted_ops=["a", "b", "c"])
    assert ugc.eligible(item("x", **ok), SETTINGS)
    assert not ugc.eligible(item("x", **{**ok, "u": 0.0}), SETTINGS)  # u must be > 0
    assert not ugc.eligible(item("x", **{**ok, "n_ado": 2}), SETTINGS)
    assert not ugc.eligible(item("x", **{**ok, "adopted_ops": ["a", "b", "b"]}), SETTINGS)  # distinct operators
    assert not ugc.eligible(item("x", **ok, status="retired"), SETTINGS)


def test_greedy_selection_by_u_p_over_l_within_the_budget():
    # scores: a 0.5*1/10 = 0.05, b 0.9*0.5/30 = 0.015, c 0.4*0.5/5 = 0.04, d 0.3*1/20 = 0.015, e u*p = 0
    cands = [("a", 0.5, 1.0, 10), ("b", 0.9, 0.5, 30), ("c", 0.4, 0.5, 5), ("d", 0.3, 1.0, 20), ("e", 0.5, 0.0, 1)]
    chosen = ugc.select_resident(cands, budget=36)
    # a (10), c (15), b would make 45 > 36: skipped; d (35) fits; e scores 0: never chosen
    assert [c.id for c in chosen] == ["a", "c", "d"]
    assert sum(c.tokens for c in chosen) == 35
    assert [c.id for c in ugc.select_resident(cands, budget=1000)] == ["a", "c", "b", "d"]  # b, d tie: by id
    assert ugc.select_resident(cands, budget=0) == []


def test_the_budget_is_b_and_never_more_than_a_quarter_of_the_context():
    assert SETTINGS.resident_budget() == 10_000
    assert SETTINGS.resident_budget(context_tokens=8_192) == 2_048
    assert SETTINGS.model_copy(update={"resident_token_budget": 500}).resident_budget(1_000_000) == 500


def test_token_lengths_come_from_the_bundled_tokenizer_without_padding():
    short, long = TOKENS.count(["double buffering", LONG_TEXT])
    assert 2 <= short <= 4 and 50 < long < 128  # the packaged tokenizer pads to 128 unless told not to
    assert TOKENS.count([TOKENS.truncate(LONG_TEXT, 20)])[0] <= 20


def test_offline_abstraction_is_deterministic_short_and_from_the_items_own_text():
    it = item("x", title="Double buffering", text=LONG_TEXT, adopted_ops=["mul", "add", "relu"])
    a = ugc.ExtractiveAbstractor(TOKENS, max_tokens=60)
    d1, d2 = a.abstract(it), a.abstract(it)
    assert d1 == d2 and d1.title == "Double buffering"
    assert d1.text.startswith("Allocate the input and output queues with BUFFER_NUM = 2.")
    assert d1.text.endswith("(adopted on add, mul, relu)")
    assert TOKENS.count([f"{d1.title}: {d1.text}"])[0] <= 62
    assert "41 us" not in d1.text  # the operator-specific last sentence does not fit


# ---- consolidation on a store


@pytest.fixture
def store(tmp_path):
    return Store.create(tmp_path / "mem", EMB.name, EMB.dim, SETTINGS)


def run(store, eid, op, shown: dict[str, str], z=0.5):
    attempts = [Attempt(id=f"{eid}-0", episode_id=eid, turn=0, status="correct", time_us=100.0),
                Attempt(id=f"{eid}-1", episode_id=eid, turn=1, status="correct", time_us=100.0 * (1 - z))]
    adoptions = [Adoption(episode_id=eid, turn=1, item_id=i, status=s) for i, s in shown.items()]
    log = EpisodeLog(episode=Episode(id=eid, operator=op), attempts=attempts, adoptions=adoptions)
    return episodes.credit_episode(store, log, SETTINGS)


def test_consolidation_abstracts_selects_returns_to_cold_and_retires(store):
    with store.lock():
        store.upsert("items", [item("good", title="Double buffering", text=LONG_TEXT), item("also"), item("bad"),
                               item("two_ops")])
    for k, op in enumerate(["add", "mul", "relu"]):
        run(store, f"e{k}", op, {"good": "adopted", "also": "adopted", "bad": "not_adopted"})
    for k, op in enumerate(["add", "mul", "add"]):
        run(store, f"f{k}", op, {"two_ops": "adopted"})
    report = ugc.consolidate(store, SETTINGS, EMB, tokens=TOKENS)
    assert sorted(report.eligible) == ["also", "good"]  # two_ops: only 2 distinct operators
    assert sorted(report.new_rules) == ["rule-also", "rule-good"]
    assert {s.id for s in report.resident} == {"rule-also", "rule-good"}
    rule = store.item("rule-good", with_vector=True)
    good = store.item("good")
    assert (rule.kind, rule.status, rule.origin, rule.origin_seq) == ("rule", "resident", "good", 6)
    assert (rule.u, rule.n_ret, rule.n_ado, rule.adopted_ops) == (good.u, 3, 3, ["add", "mul", "relu"])
    assert rule.p == 1.0 and rule.tokens == TOKENS.count([rule.prompt_text()])[0] and len(rule.vector) == EMB.dim
    assert (good.status, good.status_reason) == ("retired", "abstracted into rule-good")

    # The rule gets statuses like any item; its usage is an EMA of adoption (m = 0.1).
    run(store, "g0", "gelu", {"rule-good": "not_adopted", "rule-also": "adopted"})
    assert store.item("rule-good").p == pytest.approx(0.9)
    assert store.item("rule-also").p == pytest.approx(1.0)

    # A budget that fits one rule: the better u*p/L stays, the other goes back to cold.
    small = SETTINGS.model_copy(update={"resident_token_budget": max(rule.tokens, store.item("rule-also").tokens)})
    report = ugc.consolidate(store, small, EMB, tokens=TOKENS)
    assert [s.id for s in report.resident] == ["rule-also"] and report.to_cold == ["rule-good"]
    assert report.used_tokens <= report.budget
    assert store.item("rule-good").status == "cold"
    assert store.item("rule-good").status_reason == "not re-selected at consolidation"

    # bad: shown 3 times and never adopted; with a lower bar it retires.
    strict = SETTINGS.model_copy(update={"retire_min_retrievals": 3})
    assert store.item("bad").u < strict.retire_below_utility
    report = ugc.consolidate(store, strict, EMB, tokens=TOKENS)
    assert report.retired == ["bad"] and store.item("bad").status == "retired"
    assert episodes.recompute(store, SETTINGS).fixed == []  # UGC changed status, never the log's numbers


def test_a_rule_whose_utility_falls_is_not_reselected(store):
    with store.lock():
        store.upsert("items", [item("x")])
    for k, op in enumerate(["a", "b", "c"]):
        run(store, f"e{k}", op, {"x": "adopted"})
    ugc.consolidate(store, SETTINGS, EMB, tokens=TOKENS)
    assert store.item("rule-x").status == "resident"
    for k in range(12):
        run(store, f"r{k}", "d", {"rule-x": "not_adopted"})
    rule = store.item("rule-x")
    assert rule.u < 0 and rule.p == pytest.approx(0.9 ** 12)
    report = ugc.consolidate(store, SETTINGS, EMB, tokens=TOKENS)
    assert report.resident == [] and report.to_cold == ["rule-x"]


# ---- explain


def test_explain_replays_every_change_with_its_episode_reward_status_and_reason(store):
    with store.lock():
        store.upsert("items", [item("x", u=0.4, u0=0.4), item("y")])
    run(store, "e1", "add", {"x": "adopted", "y": "adopted"}, z=0.5)
    run(store, "e2", "mul", {"x": "not_adopted"})
    run(store, "e3", "relu", {"x": "undeclared"})
    e = explain.explain(store, "x", SETTINGS)
    got = [(s.episode.id, s.change.outcome, s.change.z, s.change.xi, s.change.eta) for s in e.steps]
    assert got == [("e1", "adopted", pytest.approx(0.5), pytest.approx(0.25), pytest.approx(0.5)),
                   ("e2", "not_adopted", pytest.approx(0.5), pytest.approx(-0.2), pytest.approx(1 / 3)),
                   ("e3", "undeclared", pytest.approx(0.5), None, None)]
    # u: 0.5*0.4 + 0.5*0.25 = 0.325; (2/3)*0.325 + (1/3)*(-0.2) = 0.15
    assert [s.change.u_after for s in e.steps] == [pytest.approx(0.325), pytest.approx(0.15), pytest.approx(0.15)]
    assert e.consistent and e.replayed_u == pytest.approx(store.item("x").u)
    text = explain.format_explanation(e)
    assert "episode e1 (add, agent, z = +0.5000): adopted" in text and "shares z" in text
    assert "xi = -b" in text and "undeclared in every turn" in text

    with store.lock():
        store.update_columns("items", [{"id": "x", "u": 0.9}], ["u"])
    e = explain.explain(store, "x", SETTINGS)
    assert not e.consistent and "memory recompute" in explain.format_explanation(e)


def test_explain_of_a_rule_starts_with_its_origins_history(store):
    with store.lock():
        store.upsert("items", [item("x")])
    for k, op in enumerate(["a", "b", "c"]):
        run(store, f"e{k}", op, {"x": "adopted"})
    ugc.consolidate(store, SETTINGS, EMB, tokens=TOKENS)
    run(store, "e9", "d", {"rule-x": "adopted"})
    e = explain.explain(store, "rule-x", SETTINGS)
    assert [(s.episode.id, s.of_origin) for s in e.steps] == [("e0", True), ("e1", True), ("e2", True),
                                                              ("e9", False)]
    assert e.consistent
    assert "abstracted from x after episode #3" in explain.format_explanation(e)
