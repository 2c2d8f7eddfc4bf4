"""Embeddings (hashing, the bundled MiniLM offline, an OpenAI-compatible endpoint) and retrieval as
DESIGN section 5 says: 50 candidates, min-max similarity, (1-g)*sim_norm + g*u, top k, resident rules
always shown and never retrieved, full-text hits joined in."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from sage_npu.memory.embeddings import EmbeddingError, HashingEmbedder, MiniLMEmbedder, OpenAIEmbedder
from sage_npu.memory.models import Item
from sage_npu.memory.retrieval import build_query, rank, retrieve
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store

EMB = HashingEmbedder(256)
SETTINGS = MemorySettings(embedder="hashing", hashing_dim=256)


def test_rank_is_min_max_similarity_mixed_with_utility():
    # sims 0.2, 0.6, 1.0 -> norm 0, 0.5, 1; score = 0.7*norm + 0.3*u
    cands = [("a", 0.2, 1.0), ("b", 0.6, 0.0), ("c", 1.0, -0.5)]
    got = rank(cands, g=0.3, k=3)
    assert [r[0] for r in got] == ["c", "b", "a"]  # c 0.55, b 0.35, a 0.30
    assert [round(r[3], 10) for r in got] == [0.55, 0.35, 0.3]
    assert [r[2] for r in got] == pytest.approx([1.0, 0.5, 0.0])
    assert [r[0] for r in rank(cands, g=0.9, k=2)] == ["a", "b"]  # a 0.9, b 0.05, c -0.35


def test_rank_with_equal_similarities_lets_utility_decide_and_ties_go_by_id():
    got = rank([("b", 0.5, 0.1), ("a", 0.5, 0.1), ("c", 0.5, 0.3)], g=0.3, k=2)
    assert [(r[0], r[2]) for r in got] == [("c", 1.0), ("a", 1.0)]
    assert rank([], 0.3, 5) == []


def test_hashing_embeddings_are_unit_deterministic_and_split_camel_case():
    a, b, c = EMB.embed(["DataCopyPad for the tail", "data copy pad for the tail", "ReduceSum work buffer"])
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-6)
    assert a @ b == pytest.approx(1.0, abs=1e-6) and a @ c < 0.5
    assert np.array_equal(EMB.embed(["x y"]), EMB.embed(["x y"]))


def _item(i, title, text, status="cold", u=0.0, kind="experience"):
    v = EMB.embed([f"{title}: {text}"])[0].tolist()
    return Item(id=i, kind=kind, title=title, text=text, status=status, u=u, u0=u, vector=v)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store.create(tmp_path_factory.mktemp("mem") / "db", EMB.name, EMB.dim, SETTINGS)
    items = [
        _item("align", "32-byte alignment", "DataCopy moves whole 32-byte blocks; count times sizeof must be aligned"),
        _item("tail", "Tails", "copy the last partial tile with DataCopyPad using byte lengths"),
        _item("dbuf", "Double buffering", "queues with two buffers overlap copy in with compute"),
        _item("scalar", "Scalar loops", "GetValue and SetValue run on the scalar pipe and are slow"),
        _item("rule1", "Rule: align copies", "every DataCopy count aligned to 32 bytes", status="resident",
              kind="rule"),
        _item("rule0", "Rule: use all cores", "split rows across GetBlockNum vector cores", status="resident",
              kind="rule"),
        _item("old", "Retired advice", "DataCopy alignment is never needed", status="retired"),
    ]
    # Many unrelated items so that 'rare' is not among the nearest few by vector.
    items += [_item(f"noise{k}", f"noise {k}", f"softmax exp reduce max row {k} broadcast") for k in range(30)]
    items.append(_item("rare", "Brcb", "broadcast eight blocks: WholeReduceSum then Brcb xyzzyplugh"))
    with s.lock():
        s.upsert("items", items)
    return s


def test_resident_rules_are_always_shown_and_never_retrieved(store):
    q = build_query("add", "DataCopy(x, y, 17)", ["DataCopy count not aligned: 32-byte blocks"])
    r = retrieve(store, EMB, q, SETTINGS)
    assert [it.id for it in r.resident] == ["rule0", "rule1"]  # id order: a stable prompt prefix
    ids = [x.item.id for x in r.items]
    assert len(ids) == 5 and not {"rule0", "rule1", "old"} & set(ids)
    assert ids[0] == "align"
    assert r.shown_ids()[:2] == ["rule0", "rule1"] and len(r.shown_ids()) == 7


def test_scores_follow_the_formula_over_the_candidates(store):
    r = retrieve(store, EMB, "DataCopy alignment of 32-byte blocks", SETTINGS, k=40)
    sims = [x.sim for x in r.items]
    lo, hi = min(sims), max(sims)
    for x in r.items:
        assert x.sim_norm == pytest.approx((x.sim - lo) / (hi - lo))
        assert x.score == pytest.approx(0.7 * x.sim_norm + 0.3 * x.item.u)
    assert [x.score for x in r.items] == sorted((x.score for x in r.items), reverse=True)


def test_utility_moves_an_item_up(tmp_path):
    s = Store.create(tmp_path / "u", EMB.name, EMB.dim, SETTINGS)
    with s.lock():
        s.upsert("items", [_item("near", "DataCopy alignment", "blocks of 32 bytes"),
                           _item("far", "DataCopy alignment", "blocks of 32 bytes matter", u=0.9),
                           _item("unrelated", "Softmax", "exp of the row minus its max", u=1.0)])
    q = "DataCopy alignment blocks of 32 bytes"
    # min-max spreads the candidates over [0, 1], so utility reorders only items of similar similarity
    assert [x.item.id for x in retrieve(s, EMB, q, SETTINGS, k=2).items] == ["far", "near"]
    no_utility = SETTINGS.model_copy(update={"utility_weight": 0.0})
    assert [x.item.id for x in retrieve(s, EMB, q, no_utility, k=2).items] == ["near", "far"]


def test_a_retrieval_after_a_credit_in_the_same_process_sees_the_new_utility(tmp_path):
    from sage_npu.memory import episodes
    from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog

    s = Store.create(tmp_path / "c", EMB.name, EMB.dim, SETTINGS)
    with s.lock():
        s.upsert("items", [_item("x", "DataCopy alignment", "blocks of 32 bytes")])
    assert retrieve(s, EMB, "DataCopy alignment", SETTINGS).items[0].item.u == 0.0
    log = EpisodeLog(episode=Episode(id="e", operator="add"),
                     attempts=[Attempt(id="a0", episode_id="e", turn=0, status="correct", time_us=100.0),
                               Attempt(id="a1", episode_id="e", turn=1, status="correct", time_us=50.0)],
                     adoptions=[Adoption(episode_id="e", turn=1, item_id="x", status="adopted")])
    episodes.credit_episode(s, log, SETTINGS)
    assert retrieve(s, EMB, "DataCopy alignment", SETTINGS).items[0].item.u == pytest.approx(0.25)


def test_full_text_hits_are_joined_into_the_candidates(store):
    only_vectors = SETTINGS.model_copy(update={"candidates": 3, "fts_candidates": 0})
    joined = SETTINGS.model_copy(update={"candidates": 3, "fts_candidates": 5})
    q = "xyzzyplugh softmax exp reduce max row broadcast"
    assert "rare" not in [x.item.id for x in retrieve(store, EMB, q, only_vectors, k=10).items]
    got = {x.item.id: x.via for x in retrieve(store, EMB, q, joined, k=10).items}
    assert got["rare"] in ("text", "both")


def test_code_punctuation_in_the_query_does_not_break_full_text_search(store):
    q = build_query("add", 'DataCopy(xLocal[0], xGm[i * "TILE"], (n+31)/32*32); // "quoted" AND OR NOT *', [])
    assert retrieve(store, EMB, q, SETTINGS).items


# ---- the real model, offline


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEmbedder()


def test_minilm_loads_lazily_from_the_package_offline(minilm, monkeypatch):
    import sage_npu.memory.embeddings  # noqa: F401

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert minilm._model is None
    v = minilm.embed(["Use double buffering to overlap data copy with compute",
                      "Overlap copy-in and compute with two queue buffers",
                      "The weather in Paris is mild in spring"])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert "sentence_transformers" in sys.modules


def test_a_store_records_the_model_name_never_its_path(minilm, tmp_path):
    s = Store.create(tmp_path / "m", minilm.name, minilm.dim, SETTINGS)
    meta = (tmp_path / "m" / "memory.json").read_text()
    assert json.loads(meta)["embedder"] == "all-MiniLM-L6-v2" and "site-packages" not in meta
    assert s.meta.dim == 384


# ---- an OpenAI-compatible endpoint (a stub on loopback)


class _Stub(BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Stub.seen.append((self.path, self.headers.get("Authorization"), body))
        if body["model"] == "broken":
            self.send_response(401)
            self.end_headers()
            return
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        out = json.dumps({"data": list(reversed(data))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a):
        pass


@pytest.fixture
def endpoint():
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_openai_compatible_endpoint(endpoint, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test")
    e = OpenAIEmbedder(endpoint, "m1", "MY_KEY")
    v = e.embed(["a", "abc"])
    assert v.shape == (2, 3) and e.dim == 3 and e.name == "openai:m1"
    assert v[1][0] > v[0][0]  # rows back in input order although the stub answers reversed
    path, auth, body = _Stub.seen[-1]
    assert (path, auth, body["input"]) == ("/v1/embeddings", "Bearer sk-test", ["a", "abc"])
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        OpenAIEmbedder(endpoint, "broken", "MY_KEY").embed(["x"])
    with pytest.raises(EmbeddingError, match="embed_endpoint"):
        OpenAIEmbedder("", "m", "MY_KEY")


def test_with_a_vector_index_similarities_stay_cosine_and_results_match_the_flat_scan(tmp_path):
    emb = HashingEmbedder(32)
    settings = MemorySettings(embedder="hashing", hashing_dim=32)
    s = Store.create(tmp_path / "idx", emb.name, emb.dim, settings)
    words = ["copy", "tile", "queue", "vector", "scalar", "reduce", "cast", "align", "core", "buffer", "mask", "exp"]
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(words, 5)) + f" item{k}" for k in range(600)]
    vecs = emb.embed(texts)
    with s.lock():
        s.upsert("items", [Item(id=f"i{k}", title=t, text=t, vector=v.tolist())
                           for k, (t, v) in enumerate(zip(texts, vecs, strict=True))])
    q = "reduce cast align buffer"
    flat = retrieve(s, emb, q, settings, k=3)
    s.build_vector_index()
    assert s.has_vector_index()
    indexed = retrieve(s, emb, q, settings, k=3)
    assert [x.item.id for x in indexed.items][0] == [x.item.id for x in flat.items][0]
    for x in indexed.items:
        v = emb.embed([x.item.text])[0]  # what was stored
        assert x.sim == pytest.approx(float(v @ emb.embed([q])[0]), abs=1e-4)


def test_an_empty_memory_retrieves_nothing_and_then_sees_a_new_item(tmp_path):
    from sage_npu.memory.experience_memory import ExperienceMemory, NewExperience
    from sage_npu.memory.settings import MemorySettings

    m = ExperienceMemory.open(MemorySettings(db=tmp_path / "m", embedder="hashing", load_starter=False))
    assert m.retrieve_for("add", "kernel", ["ub-overflow"]).items == []
    [new] = m.add_experiences([NewExperience(title="UB budget", text="Keep the queues inside the UB budget.")])
    assert [r.item.id for r in m.retrieve_for("add", "", ["UB budget"]).items] == [new]   # the pool follows writes
