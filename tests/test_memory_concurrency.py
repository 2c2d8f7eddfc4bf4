"""Several writers on one memory (two editor windows and a bench run): 4 processes x 200 mixed writes
(new items, open episodes' adoption logs, episodes credited on the same items) lose, duplicate and
tear nothing; a writer killed mid-write leaves the store readable with every committed record.

Writers are separate interpreters (spawned, never forked: LanceDB's threads do not survive fork).
Each logs a record only after the call that wrote it returned, so a logged record is committed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from sage_npu.memory import episodes
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store

DIM = 8
SETTINGS = MemorySettings(embedder="hashing", hashing_dim=DIM)
SHARED = [f"s{i}" for i in range(5)]

WRITER = r'''
import sys
from sage_npu.memory import episodes
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store

db, wid, n, log_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
settings = MemorySettings(embedder="hashing", hashing_dim=8)
store = Store.open(db, settings)
shared = ["s%d" % i for i in range(5)]

def log_of(eid, k, op):
    attempts = [Attempt(id=eid + "-0", episode_id=eid, turn=0, status="correct", time_us=100.0),
                Attempt(id=eid + "-1", episode_id=eid, turn=1, status="correct", time_us=100.0 - k % 50)]
    adoptions = [Adoption(episode_id=eid, turn=1, item_id=shared[k % 5], status="adopted"),
                 Adoption(episode_id=eid, turn=1, item_id=shared[(k + 1) % 5], status="not_adopted"),
                 Adoption(episode_id=eid, turn=0, item_id=shared[(k + 2) % 5], status="undeclared")]
    return EpisodeLog(episode=Episode(id=eid, operator=op), attempts=attempts, adoptions=adoptions)

with open(log_path, "a") as log:
    k = 0
    while n < 0 or k < n:
        kind = k % 3
        if kind == 0:
            iid = "w%s-i%d" % (wid, k)
            with store.lock():
                store.upsert("items", [Item(id=iid, title=iid, text="text " + iid, vector=[0.5] * 8)],
                             insert_only=True)
            log.write("item %s %d\n" % (iid, k))
        elif kind == 1:
            eid = "w%s-open%d" % (wid, k)
            episodes.record_episode(store, log_of(eid, k, "op%d" % (k % 7)), settings)
            log.write("open %s %d\n" % (eid, k))
        else:
            eid = "w%s-ep%d" % (wid, k)
            r = episodes.credit_episode(store, log_of(eid, k, "op%d" % (k % 7)), settings)
            assert r.credited, r
            log.write("credit %s %d\n" % (eid, k))
        log.flush()
        k += 1
'''


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "mem"
    store = Store.create(path, "hashing-8", DIM, SETTINGS)
    with store.lock():
        store.upsert("items", [Item(id=s, title=s, text=f"shared {s}", vector=[1.0] * DIM) for s in SHARED])
    (tmp_path / "writer.py").write_text(WRITER)
    return path


def start_writer(db, wid: str, n: int, log):
    return subprocess.Popen([sys.executable, str(db.parent / "writer.py"), str(db), wid, str(n), str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def read_logs(paths) -> list[tuple[str, str, int]]:
    out = []
    for p in paths:
        if p.exists():
            for line in p.read_text().splitlines():
                kind, rid, k = line.split()
                out.append((kind, rid, int(k)))
    return out


def check_store(db, logged: list[tuple[str, str, int]]) -> Store:
    """Every logged record is there exactly once, rows validate, and the learned state equals the log's."""
    store = Store.open(db, SETTINGS)
    items = store.fetch("items")
    eps = store.fetch("episodes")
    ados = store.fetch("adoptions")
    atts = store.fetch("attempts")
    for rows in (items, eps, ados, atts):
        dup = [i for i, c in Counter(r.id for r in rows).items() if c > 1]
        assert not dup, f"duplicated ids {dup[:5]}"
    ids = {r.id for r in items}
    ep_state = {e.id: e.state for e in eps}
    ados_of = Counter(a.episode_id for a in ados)
    atts_of = Counter(a.episode_id for a in atts)
    for kind, rid, _ in logged:
        if kind == "item":
            assert rid in ids, f"lost item {rid}"
        else:
            assert ep_state.get(rid) == ("credited" if kind == "credit" else "open"), f"lost episode {rid}"
            assert (ados_of[rid], atts_of[rid]) == (3, 2), f"torn log of episode {rid}"
    credited = sorted(e.seq for e in eps if e.state == "credited")
    assert credited == list(range(1, len(credited) + 1)), "two credits shared a sequence number"
    # Counters: each credited episode shows three shared items once.
    expect_ret, expect_ado = Counter(), Counter()
    for e in eps:
        if e.state == "credited":
            for a in ados:
                if a.episode_id == e.id:
                    expect_ret[a.item_id] += 1
                    expect_ado[a.item_id] += a.status == "adopted"
    shared = store.items(SHARED)
    for s in SHARED:
        assert (shared[s].n_ret, shared[s].n_ado) == (expect_ret[s], expect_ado[s]), f"lost update on {s}"
    report = episodes.recompute(store, SETTINGS, write=False)
    assert report.fixed == [], f"stored state differs from the adoption log for {report.fixed}"
    return store


def test_four_writers_200_mixed_writes_each(db, tmp_path):
    logs = [tmp_path / f"w{i}.log" for i in range(4)]
    procs = [start_writer(db, str(i), 200, logs[i]) for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
    logged = read_logs(logs)
    assert len(logged) == 800
    store = check_store(db, logged)
    kinds = Counter(k for k, _, _ in logged)
    assert store.count("items") == len(SHARED) + kinds["item"]
    assert store.count("episodes") == kinds["open"] + kinds["credit"]
    assert store.count("adoptions") == 3 * (kinds["open"] + kinds["credit"])


def test_a_writer_killed_mid_write_leaves_every_committed_record(db, tmp_path):
    logs = []
    for round_, delay in enumerate([2.5, 4.0]):
        log = tmp_path / f"killed{round_}.log"
        logs.append(log)
        proc = start_writer(db, f"k{round_}", -1, log)
        deadline = time.time() + 60
        # Kill only once it is well into its writes, so the kill lands inside some write.
        while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 12):
            time.sleep(0.05)
        time.sleep(delay % 1.0)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    logged = read_logs(logs)
    assert len(logged) >= 24
    store = Store.open(db, SETTINGS)
    # The next writer gets the lock at once, repairs a half-credited episode if there is one, and writes.
    t0 = time.time()
    eid = "after-kill"
    log = EpisodeLog(episode=Episode(id=eid, operator="add"),
                     attempts=[Attempt(id=f"{eid}-0", episode_id=eid, turn=0, status="correct", time_us=10.0)],
                     adoptions=[Adoption(episode_id=eid, turn=0, item_id="s0", status="adopted")])
    assert episodes.credit_episode(store, log, SETTINGS).credited
    assert time.time() - t0 < SETTINGS.lock_timeout_s
    check_store(db, logged)
