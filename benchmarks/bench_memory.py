"""Experience-memory speed, each figure next to its baseline from the same run (machines are noisy).

Prints:
- query embedding p50 with the bundled all-MiniLM-L6-v2 (and its one-time load);
- retrieval p50, embedding excluded (vector top 50 + full-text hits + re-rank + resident rules):
  5k items with a flat scan; 100k items with a flat scan, then with the vector index, and how many
  of the indexed top-5 equal the flat top-5;
- crediting one episode (4 turns x 8 items shown, 4 attempts) on the 5k store;
- consolidating 10k items (300 eligible: abstraction, token lengths, embedding the new rules,
  greedy selection), then again in steady state.
Targets (issue 4): retrieval < 10 ms at 5k, < 20 ms at 100k with an index; credit < 50 ms;
consolidation of 10k items < 5 s. Item vectors are synthetic (clustered unit vectors): embedding
100k texts would time the model, not the store.
Run: python benchmarks/bench_memory.py [--big 100000] [--skip-big]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

os.environ.setdefault("LANCEDB_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

from sage_npu.memory import episodes, retrieval, ugc  # noqa: E402
from sage_npu.memory.embeddings import MiniLMEmbedder  # noqa: E402
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item  # noqa: E402
from sage_npu.memory.settings import MemorySettings  # noqa: E402
from sage_npu.memory.store import Store  # noqa: E402
from sage_npu.memory.tables import schemas  # noqa: E402
from sage_npu.memory.tokens import TokenCounter  # noqa: E402

DIM = 384
WORDS = ("DataCopy DataCopyPad TQue TBuf InitBuffer AllocTensor EnQue DeQue FreeTensor Add Mul Adds Muls Exp Cast "
         "ReduceSum ReduceMax WholeReduceSum Duplicate Compare Select SetFlag WaitFlag PipeBarrier GetBlockIdx "
         "tile tail align 32-byte UB double buffer vector core scalar loop half float bfloat16 softmax layernorm "
         "gelu relu matmul broadcast row column stride repeat mask overlap pipeline queue budget").split()
SETTINGS = MemorySettings(index_threshold=10**9)  # the benchmark decides when to build the vector index


def p50_ms(fn, n: int) -> float:
    times = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


# Synthetic stand-ins for embedded experiences: vectors in tight topical clusters (as sentence
# embeddings of related advice are) and text over a long-tailed vocabulary plus API names.
CENTRES = np.random.default_rng(7).normal(size=(2000, DIM)).astype(np.float32)
VOCAB = np.array([f"w{i}" for i in range(3000)])
ZIPF = 1.0 / (np.arange(3000) + 10.0)
ZIPF /= ZIPF.sum()


def synthetic_vectors(rng, n: int) -> np.ndarray:
    v = CENTRES[rng.integers(0, len(CENTRES), n)] + 0.6 * rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def synthetic_text(rng, api: int, vocab: int) -> str:
    return " ".join(list(rng.choice(WORDS, api)) + list(rng.choice(VOCAB, vocab, p=ZIPF)))


def bulk_items(store: Store, n: int, rng, start: int = 0, eligible: int = 0, resident: int = 0) -> None:
    """Append n items straight into the table (pydantic per row would time the benchmark, not the store)."""
    schema = schemas(DIM)["items"]
    now = datetime.now(UTC)
    for lo in range(0, n, 20_000):
        m = min(20_000, n - lo)
        idx = np.arange(start + lo, start + lo + m)
        texts = [synthetic_text(rng, 6, 18) for _ in range(m)]
        titles = [" ".join(rng.choice(WORDS, 4)) for _ in range(m)]
        u = rng.uniform(-0.2, 0.4, m)
        n_ado = rng.integers(0, 3, m)
        ops: list[list[str]] = [[] for _ in range(m)]
        status = np.where(rng.random(m) < 0.02, "retired", "cold").astype(object)
        kind = np.full(m, "experience", dtype=object)
        for j in range(m):
            g = lo + j
            if g < eligible:  # passes the UGC gate
                u[j], n_ado[j], ops[j], status[j] = 0.2 + 0.2 * rng.random(), 4, ["add", "mul", "softmax"], "cold"
            elif g < eligible + resident:
                kind[j], status[j], u[j], n_ado[j], ops[j] = "rule", "resident", 0.3, 5, ["a", "b", "c"]
        cols = {
            "id": [f"b{i}" for i in idx], "kind": list(kind), "title": titles, "text": texts,
            "operator": [f"op{i % 97}" for i in idx], "category": ["bench"] * m, "tags": [["bench"]] * m,
            "source": [""] * m, "vector": pa.FixedSizeListArray.from_arrays(pa.array(
                synthetic_vectors(rng, m).ravel()), DIM),
            "u": u, "u0": np.zeros(m), "n_ret": n_ado + 2, "n_ado": n_ado, "adopted_ops": ops, "p": n_ado / (n_ado + 2),
            "status": list(status), "status_reason": [""] * m, "evidence": [[]] * m, "origin": [""] * m,
            "origin_seq": np.zeros(m, dtype=np.int64), "tokens": np.where(kind == "rule", 60, 0),
            "last_seq": np.zeros(m, dtype=np.int64), "created_at": [now] * m, "updated_at": [now] * m,
            "doc": [f"{t} {x}" for t, x in zip(titles, texts, strict=True)]}
        table = pa.Table.from_pydict({k: cols[k] for k in schema.names}, schema=schema)
        with store.lock():
            store.table("items").add(table)
    store.optimize()


def queries(rng, n: int) -> list[tuple[str, np.ndarray]]:
    return [(synthetic_text(rng, 4, 6), synthetic_vectors(rng, 1)[0]) for _ in range(n)]


def bench_retrieval(store: Store, qs, label: str) -> tuple[float, list[list[str]]]:
    tops: list[list[str]] = []

    def one(i):
        r = retrieval.retrieve(store, None, qs[i][0], SETTINGS, query_vector=qs[i][1])
        tops.append([x.item.id for x in r.items])

    one(0)  # warm caches (index, file handles)
    tops.clear()
    ms = p50_ms(one, len(qs))
    print(f"  {label:<44} p50 {ms:7.2f} ms")
    return ms, tops


def credit_logs(store: Store, n: int, rng) -> list[EpisodeLog]:
    ids = [r for r in store.fetch_arrow("items", "status = 'cold'", ["id"]).column("id").to_pylist()[:400]]
    res = [r for r in store.fetch_arrow("items", "status = 'resident'", ["id"]).column("id").to_pylist()[:3]]
    logs = []
    for e in range(n):
        eid = f"bench-ep{e}"
        shown = res + list(rng.choice(ids, 5, replace=False))
        adoptions = [Adoption(episode_id=eid, turn=t, item_id=i,
                              status=["adopted", "not_adopted", "undeclared"][int(rng.integers(0, 3))])
                     for t in range(4) for i in shown]
        attempts = [Attempt(id=f"{eid}-{t}", episode_id=eid, turn=t, status="correct" if t else "incorrect",
                            time_us=100.0 - 10 * t) for t in range(4)]
        logs.append(EpisodeLog(episode=Episode(id=eid, operator=f"op{e % 13}"), attempts=attempts,
                               adoptions=adoptions))
    return logs


def main() -> None:
    ap = argparse.ArgumentParser(description="experience-memory speed")
    ap.add_argument("--big", type=int, default=100_000)
    ap.add_argument("--skip-big", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp(prefix="sage-bench-mem-"))
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; store in {tmp}")

    print("query embedding (all-MiniLM-L6-v2, bundled, CPU)")
    emb = MiniLMEmbedder()
    t = time.perf_counter()
    emb.embed(["warm up"])
    print(f"  first call (import sentence-transformers, load weights)  {time.perf_counter() - t:7.2f} s")
    short = [retrieval.build_query(f"op{i}", "", ["ub-overflow: tile of 65536 bytes does not fit"]) for i in range(30)]
    full = [retrieval.build_query(f"op{i}", " ".join(rng.choice(WORDS, 200)), ["ub-overflow: tile too large"])
            for i in range(30)]
    print(f"  short query (operator + diagnostic)           p50 {p50_ms(lambda i: emb.embed([short[i]]), 30):7.2f} ms")
    print(f"  full query (+ kernel, 256-token cap)          p50 {p50_ms(lambda i: emb.embed([full[i]]), 30):7.2f} ms")

    print("retrieval, embedding excluded (vector top 50 + text hits + re-rank + resident rules)")
    small = Store.create(tmp / "s5k", emb.name, DIM, SETTINGS)
    bulk_items(small, 5_000, rng, resident=5)
    bench_retrieval(small, queries(rng, 50), "5k items, flat scan")

    print("crediting an episode (4 turns x 8 items shown, 4 attempts), 5k items")
    logs = credit_logs(small, 31, rng)
    episodes.credit_episode(small, logs[0], SETTINGS)
    times = []
    for log in logs[1:]:
        t = time.perf_counter()
        episodes.credit_episode(small, log, SETTINGS)
        times.append(1000 * (time.perf_counter() - t))
    q = statistics.quantiles(times, n=10)
    print(f"  credit_episode                                p50 {statistics.median(times):7.2f} ms  "
          f"(p90 {q[-1]:.1f} ms: every {SETTINGS.optimize_every}th version of a table compacts it)")
    ms = p50_ms(lambda i: episodes.credit_episode(small, logs[i + 1], SETTINGS), 30)
    print(f"  the same episodes again (idempotent no-op)    p50 {ms:7.2f} ms")
    # Retrieval keeps the cold pool in memory per table version: the first query after a write
    # reloads it. An episode retrieves every turn and writes once, at its end.
    qs = queries(rng, 11)
    refresh = []
    some = small.fetch("items", None, columns=list(Item.model_fields), limit=1)
    for i in range(10):
        with small.lock():
            small.upsert("items", some)   # a write: a new table version
        t = time.perf_counter()
        retrieval.retrieve(small, None, qs[i][0], SETTINGS, query_vector=qs[i][1])
        refresh.append(1000 * (time.perf_counter() - t))
    print(f"  first retrieval after a write (pool reload)   p50 {statistics.median(refresh):7.2f} ms")

    print("consolidation, 10k items (300 eligible, 20 resident rules)")
    mid = Store.create(tmp / "c10k", emb.name, DIM, SETTINGS)
    bulk_items(mid, 10_000, rng, eligible=300, resident=20)
    tokens = TokenCounter()
    t = time.perf_counter()
    report = ugc.consolidate(mid, SETTINGS, emb, tokens=tokens)
    first = time.perf_counter() - t
    print(f"  first run: {len(report.new_rules)} new rules, {len(report.resident)} resident "
          f"({report.used_tokens}/{report.budget} tokens)   {first:7.2f} s")
    t = time.perf_counter()
    report = ugc.consolidate(mid, SETTINGS, emb, tokens=tokens)
    print(f"  steady state: {len(report.new_rules)} new rules                        "
          f"{time.perf_counter() - t:7.2f} s")

    if not a.skip_big:
        n = a.big
        print(f"retrieval at {n // 1000}k items")
        big = Store.create(tmp / "big", emb.name, DIM, SETTINGS)
        t = time.perf_counter()
        bulk_items(big, n, rng, resident=5)
        print(f"  bulk load + optimize                          {time.perf_counter() - t:7.1f} s")
        qs = queries(rng, 40)
        _, flat_tops = bench_retrieval(big, qs, f"{n // 1000}k items, flat scan")
        t = time.perf_counter()
        big.build_vector_index()
        print(f"  build vector index (IVF-HNSW-SQ, cosine)      {time.perf_counter() - t:7.1f} s")
        _, idx_tops = bench_retrieval(big, qs, f"{n // 1000}k items, vector index")
        same = statistics.mean(len(set(f) & set(x)) / max(len(f), 1) for f, x in zip(flat_tops, idx_tops,
                                                                                       strict=True))
        print(f"  indexed top-5 equal to the flat top-5         {same:7.1%}")


if __name__ == "__main__":
    main()
