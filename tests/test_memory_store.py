"""The store: schemas, schema version and migration, errors a user can act on, idempotent writes,
the shared lock, and the adoption log as the source of truth."""

from __future__ import annotations

import json

import pytest

from sage_npu.memory import episodes, migrations, models
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog, Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.store import Store, StoreError, StoreNotFound, UnknownId
from sage_npu.memory.tables import PRIMARY_KEY

DIM = 8
SETTINGS = MemorySettings(embedder="hashing", hashing_dim=DIM)


def make_item(i: str, u0: float = 0.0, **kw) -> Item:
    return Item(id=i, title=f"title {i}", text=f"text of {i}", u=u0, u0=u0, vector=[1.0] + [0.0] * (DIM - 1), **kw)


@pytest.fixture
def store(tmp_path):
    return Store.create(tmp_path / "mem", "hashing-8", DIM, SETTINGS)


def test_create_then_open_round_trips_every_table(store, tmp_path):
    with store.lock():
        store.upsert("items", [make_item("a", tags=["x", "y"], adopted_ops=["add"])])
        store.upsert("episodes", [Episode(id="e1", operator="add", credited_turns=[0, 1])])
        store.upsert("attempts", [Attempt(id="t1", episode_id="e1", turn=0, status="correct", time_us=3.5)])
        store.upsert("adoptions", [Adoption(episode_id="e1", turn=0, item_id="a", status="adopted", rationale="why")])
    again = Store.open(tmp_path / "mem", SETTINGS)
    a = again.item("a", with_vector=True)
    assert a.tags == ["x", "y"] and a.adopted_ops == ["add"] and len(a.vector) == DIM
    assert again.item("a").vector is None
    assert again.fetch("episodes")[0].credited_turns == [0, 1]
    assert again.fetch("attempts")[0].time_us == 3.5
    assert again.fetch("adoptions")[0].id == "e1/0/a"
    meta = json.loads((tmp_path / "mem" / "memory.json").read_text())
    assert meta == {"schema_version": models.SCHEMA_VERSION, "embedder": "hashing-8", "dim": DIM}


def test_ids_carry_the_primary_key_metadata(store):
    for name in models.TABLES:
        field = store.table(name).schema.field("id")
        assert field.metadata == PRIMARY_KEY and not field.nullable, name


def test_writing_the_same_ids_twice_keeps_one_row_each(store):
    with store.lock():
        store.upsert("items", [make_item("a"), make_item("b")])
        store.upsert("items", [make_item("a"), make_item("b")])
        store.upsert("items", [make_item("a", u0=0.5)], insert_only=True)
    assert store.count("items") == 2
    assert store.item("a").u == 0.0  # insert_only never overwrites learned state


def test_missing_store_corrupt_meta_and_newer_schema_are_clear_errors(tmp_path, store):
    with pytest.raises(StoreNotFound, match="no experience memory at"):
        Store.open(tmp_path / "nowhere", SETTINGS)
    meta = tmp_path / "mem" / "memory.json"
    good = meta.read_text()
    meta.write_text("{not json")
    with pytest.raises(StoreError, match="corrupt"):
        Store.open(tmp_path / "mem", SETTINGS)
    meta.write_text(json.dumps({**json.loads(good), "schema_version": models.SCHEMA_VERSION + 1}))
    with pytest.raises(StoreError, match="upgrade sage-npu"):
        Store.open(tmp_path / "mem", SETTINGS)


def test_unknown_item_and_embedder_mismatch(store, tmp_path):
    with pytest.raises(UnknownId, match="memory list"):
        store.item("nope")
    with pytest.raises(StoreError, match="embedded with hashing-8"):
        Store.create(tmp_path / "mem", "all-MiniLM-L6-v2", 384, SETTINGS)


def test_an_older_schema_is_migrated_on_open(tmp_path, monkeypatch):
    path = tmp_path / "old"
    s = Store.create(path, "hashing-8", DIM, SETTINGS)
    with s.lock():
        s.upsert("items", [make_item("a")])
    calls = []

    def step(store: Store) -> None:
        calls.append(store.meta.schema_version)
        store.table("items").add_columns({"note": "'migrated'"})

    monkeypatch.setattr(models, "SCHEMA_VERSION", models.SCHEMA_VERSION + 1)
    monkeypatch.setitem(migrations.MIGRATIONS, models.SCHEMA_VERSION - 1, step)
    opened = Store.open(path, SETTINGS)
    assert calls == [models.SCHEMA_VERSION - 1]
    assert opened.meta.schema_version == models.SCHEMA_VERSION
    assert json.loads((path / "memory.json").read_text())["schema_version"] == models.SCHEMA_VERSION
    assert opened.fetch_arrow("items", columns=["note"]).column("note").to_pylist() == ["migrated"]
    assert opened.item("a").title == "title a"
    Store.open(path, SETTINGS)  # already migrated: no second call
    assert len(calls) == 1


def test_a_schema_without_a_migration_refuses_to_open(tmp_path, monkeypatch):
    Store.create(tmp_path / "old", "hashing-8", DIM, SETTINGS)
    monkeypatch.setattr(models, "SCHEMA_VERSION", models.SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match="no migration"):
        Store.open(tmp_path / "old", SETTINGS)


def test_writes_outside_the_lock_are_refused_and_the_lock_is_reentrant(store):
    with pytest.raises(RuntimeError, match="outside Store.lock"):
        store.upsert("items", [make_item("a")])
    with store.lock():
        with store.lock():
            store.upsert("items", [make_item("a")])
        assert store.locked()
    assert not store.locked()


def _log(eid: str, op: str, shown: dict[str, str], times=(100.0, 50.0)) -> EpisodeLog:
    attempts = [Attempt(id=f"{eid}-t{k}", episode_id=eid, turn=k, status="correct", time_us=t)
                for k, t in enumerate(times)]
    adoptions = [Adoption(episode_id=eid, turn=0, item_id=i, status=s) for i, s in shown.items()]
    return EpisodeLog(episode=Episode(id=eid, operator=op), attempts=attempts, adoptions=adoptions)


def test_recompute_from_the_adoption_log_reproduces_live_crediting(store):
    with store.lock():
        store.upsert("items", [make_item("a", u0=0.1), make_item("b"), make_item("c")])
    for k, op in enumerate(["add", "mul", "sub", "add", "relu"]):
        episodes.credit_episode(store, _log(f"e{k}", op, {"a": "adopted", "b": "not_adopted", "c": "undeclared"},
                                            times=(100.0, 100.0 - 10 * k)), SETTINGS)
    before = store.items(["a", "b", "c"])
    report = episodes.recompute(store, SETTINGS)
    assert report.fixed == [] and report.episodes == 5
    # Damage the derived state: the log rebuilds it exactly.
    with store.lock():
        store.update_columns("items", [{"id": "a", "u": 9.0, "n_ret": 0}], ["u", "n_ret"])
    report = episodes.recompute(store, SETTINGS)
    assert report.fixed == ["a"]
    after = store.items(["a", "b", "c"])
    for i in "abc":
        assert after[i].u == pytest.approx(before[i].u, abs=1e-12)
        assert (after[i].n_ret, after[i].n_ado, after[i].adopted_ops) == (
            before[i].n_ret, before[i].n_ado, before[i].adopted_ops)


def test_a_writer_killed_between_episode_and_items_is_repaired_by_the_next_writer(store, monkeypatch):
    with store.lock():
        store.upsert("items", [make_item("a")])
    real = store.write_concurrently

    def crash_after_the_episode_row(writes):
        if any(name == "episodes" for _, name, _, _ in writes):
            real([w for w in writes if w[1] == "episodes"])
            raise KeyboardInterrupt("killed")
        real(writes)

    monkeypatch.setattr(store, "write_concurrently", crash_after_the_episode_row)
    with pytest.raises(KeyboardInterrupt):
        episodes.credit_episode(store, _log("e1", "add", {"a": "adopted"}), SETTINGS)
    assert store.fetch("episodes")[0].state == "credited"  # committed ...
    assert store.item("a").n_ret == 0  # ... but the items were not
    assert (store.path / episodes.MARKER).exists()
    monkeypatch.setattr(store, "write_concurrently", real)
    result = episodes.credit_episode(store, _log("e1", "add", {"a": "adopted"}), SETTINGS)
    assert result.already_credited
    a = store.item("a")
    assert (a.n_ret, a.n_ado, a.u) == (1, 1, pytest.approx(0.25))
    assert not (store.path / episodes.MARKER).exists()


def test_optimize_builds_the_text_and_status_indexes(store):
    with store.lock():
        store.upsert("items", [make_item("a")])
    store.optimize()
    names = {ix.name for ix in store.table("items").list_indices()}
    assert {"doc_idx", "status_idx"} <= names


def test_a_writer_killed_before_the_episode_row_leaves_no_orphan_log_rows(store, monkeypatch):
    with store.lock():
        store.upsert("items", [make_item("a")])
    real = store.write_concurrently

    def crash_before_the_episode_row(writes):
        if any(name == "episodes" for _, name, _, _ in writes):
            raise KeyboardInterrupt("killed")
        real(writes)

    monkeypatch.setattr(store, "write_concurrently", crash_before_the_episode_row)
    with pytest.raises(KeyboardInterrupt):
        episodes.credit_episode(store, _log("e1", "add", {"a": "adopted"}), SETTINGS)
    assert store.count("adoptions") == 1 and store.count("episodes") == 0  # the log landed, its episode did not
    monkeypatch.setattr(store, "write_concurrently", real)
    assert episodes.credit_episode(store, _log("e1", "add", {"a": "adopted"}), SETTINGS).credited
    assert (store.count("adoptions"), store.count("attempts"), store.count("episodes")) == (1, 2, 1)
    assert store.item("a").n_ret == 1


def test_a_store_used_after_fork_refuses_with_a_clear_message(store, monkeypatch):
    monkeypatch.setattr(store, "_pid", -1)  # as seen from a forked child
    with pytest.raises(StoreError, match="start workers with the 'spawn' method"):
        store.table("items")
