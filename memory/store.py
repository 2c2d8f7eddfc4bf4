"""The store: a folder holding four LanceDB tables, a metadata file and a lock file.

Contracts:
- Every write happens under `lock()`, a lock shared by every process using the folder (two
  editor windows and a bench run may share one memory). Writers enter first come, first served
  (`ticket_lock`), so none starves while others write. Writes inside the lock first move
  each table to its latest version, so a read-modify-write never works from a stale snapshot.
- Reads take no lock: a LanceDB version is immutable, so a reader sees a whole commit or none.
  Reads may lag other processes' writes by `read_refresh_s`.
- A process killed mid-write leaves only uncommitted files behind; committed versions stay
  readable, and the OS releases its lock.
- `memory.json` records the schema version and the embedder (name and size, never a path), so
  a store is portable across machines and virtual environments.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel, ValidationError

from sage_npu.memory import migrations, models
from sage_npu.memory.models import TABLES, Item
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.tables import DOC_COLUMN, from_arrow, schemas, to_arrow
from sage_npu.memory.ticket_lock import TicketLock, TicketTimeout

META_FILE = "memory.json"
LOCK_FILE = ".lock"


class StoreError(Exception):
    """A store problem a user can act on; the message says what and what to do."""


class StoreNotFound(StoreError):
    pass


class UnknownId(StoreError):
    pass


class LockTimeout(StoreError):
    """The write lock did not come within memory.lock_timeout_s."""


class StoreMeta(BaseModel):
    schema_version: int
    embedder: str
    dim: int


def default_db_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("sage-npu")) / "memory"


def sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def sql_in(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


class Store:
    """Open with `Store.open` or `Store.create`; one instance per process is enough."""

    def __init__(self, path: Path, meta: StoreMeta, settings: MemorySettings):
        os.environ.setdefault("LANCEDB_LOG", "error")
        # LanceDB warns in every child forked after it loads. A process holding a Store forks only
        # to exec at once (compiler, kernel runs, workers: subprocess), never to run Python that
        # touches LanceDB (that would be refused: see `_check_process`), so the warning is noise.
        warnings.filterwarnings("ignore", message="lancedb fork support is experimental", category=RuntimeWarning)
        import lancedb

        self.path = Path(path)
        self.meta = meta
        self.settings = settings
        self._schemas = schemas(meta.dim)
        self._db = lancedb.connect(str(self.path), read_consistency_interval=timedelta(seconds=settings.read_refresh_s))
        self._tables: dict = {}
        self._queue = TicketLock(self.path)
        # Still taken behind the ticket: `create` and older sage-npu versions lock this file alone.
        self._lock = FileLock(str(self.path / LOCK_FILE), timeout=settings.lock_timeout_s)
        self._held = threading.local()
        self.cache: dict = {}  # derived values keyed by a table version (see retrieval.resident_rules)
        self._pid = os.getpid()
        self._adb = None
        self._async_tables: dict = {}
        self._stale: set[str] = set()  # async handles behind this process's sync writes
        self._sync_stale: set[str] = set()  # sync handles behind this process's async writes

    # ---- opening
    @classmethod
    def create(cls, path: Path, embedder: str, dim: int, settings: MemorySettings | None = None) -> Store:
        """Create a new store (or open it, when it already exists with the same embedder)."""
        settings = settings or MemorySettings()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path / LOCK_FILE), timeout=settings.lock_timeout_s):
            if (path / META_FILE).exists():
                store = cls.open(path, settings)
                store.check_embedder(embedder, dim)
                return store
            meta = StoreMeta(schema_version=models.SCHEMA_VERSION, embedder=embedder, dim=dim)
            store = cls(path, meta, settings)
            existing = set(store._table_names())
            for name, schema in store._schemas.items():
                if name not in existing:
                    store._db.create_table(name, schema=schema)
            # Full-text search refuses to run before its index exists, even on an empty table.
            for name in TABLES:
                store._ensure_indexes(name)
            _write_json(path / META_FILE, meta.model_dump())
        return store

    @classmethod
    def open(cls, path: Path, settings: MemorySettings | None = None) -> Store:
        """Open an existing store; migrate it if it has an older schema."""
        settings = settings or MemorySettings()
        path = Path(path)
        meta_path = path / META_FILE
        if not meta_path.exists():
            raise StoreNotFound(
                f"no experience memory at {path} (missing {META_FILE}); create one by running an episode or "
                f"`sage-npu memory import FILE --db {path}`, or point --db at an existing memory"
            )
        try:
            meta = StoreMeta.model_validate(json.loads(meta_path.read_text()))
        except (OSError, ValueError, ValidationError) as e:
            raise StoreError(f"{meta_path} is corrupt ({e}); restore it from a backup or move the folder away") from e
        if meta.schema_version > models.SCHEMA_VERSION:
            raise StoreError(
                f"the memory at {path} has schema {meta.schema_version}, newer than this sage-npu "
                f"(schema {models.SCHEMA_VERSION}); upgrade sage-npu"
            )
        store = cls(path, meta, settings)
        if meta.schema_version < models.SCHEMA_VERSION:
            store._migrate()  # before the check: a migration may add a table
        missing = set(TABLES) - set(store._table_names())
        if missing:
            raise StoreError(f"the memory at {path} lacks tables {sorted(missing)}; it is damaged or not a memory")
        return store

    def check_embedder(self, name: str, dim: int) -> None:
        if (name, dim) != (self.meta.embedder, self.meta.dim):
            raise StoreError(
                f"the memory at {self.path} was embedded with {self.meta.embedder} ({self.meta.dim}-d), not "
                f"{name} ({dim}-d); set memory.embedder back, or export it and import into a new memory"
            )

    def _migrate(self) -> None:
        with self.lock():
            meta = StoreMeta.model_validate(json.loads((self.path / META_FILE).read_text()))
            while meta.schema_version < models.SCHEMA_VERSION:
                step = migrations.MIGRATIONS.get(meta.schema_version)
                if step is None:
                    raise StoreError(f"no migration from memory schema {meta.schema_version}; the memory at "
                                     f"{self.path} cannot be opened by this sage-npu")
                step(self)
                meta.schema_version += 1
                _write_json(self.path / META_FILE, meta.model_dump())
            self.meta = meta

    def _table_names(self) -> list[str]:
        return list(self._db.list_tables().tables)

    # ---- locking
    @contextmanager
    def lock(self) -> Iterator[None]:
        """The store's write lock (re-entrant within a thread; exclusive across processes)."""
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._held.ticket = self._acquire()
        self._held.depth = depth + 1
        try:
            if depth == 0:
                # Read-modify-write under the lock must start from the latest commit of every process.
                self._stale = set(TABLES)
                self._sync_stale = set(TABLES)
            yield
        finally:
            self._held.depth -= 1
            if self._held.depth == 0:
                self._lock.release()
                self._queue.release(self._held.ticket)

    def _acquire(self):
        timeout = self.settings.lock_timeout_s
        try:
            ticket = self._queue.acquire(timeout)
        except TicketTimeout as e:
            raise LockTimeout(f"the memory at {self.path} stayed locked for {timeout}s by other processes; "
                              f"retry, or raise memory.lock_timeout_s") from e
        try:
            self._lock.acquire(timeout=max(0.0, timeout - ticket.waited_s))
        except Timeout as e:
            self._queue.release(ticket)
            raise LockTimeout(f"the memory at {self.path} stayed locked for {timeout}s by another process "
                              f"(an older sage-npu?); retry, or raise memory.lock_timeout_s") from e
        return ticket

    def locked(self) -> bool:
        return getattr(self._held, "depth", 0) > 0

    # ---- tables
    def _check_process(self) -> None:
        if os.getpid() != self._pid:
            # LanceDB's runtime threads do not survive fork: a forked child would hang or corrupt.
            raise StoreError(f"this Store was opened in process {self._pid} and used in forked process "
                             f"{os.getpid()}; open the memory inside the worker and start workers with the "
                             f"'spawn' method")

    def run(self, coro):
        """Run a coroutine of LanceDB's async API on LanceDB's own event loop thread (so several
        queries can be in flight at once, without the sync API's per-call round trips)."""
        from lancedb.background_loop import LOOP

        self._check_process()
        return LOOP.run(coro)

    def async_table(self, name: str):
        t = self._async_tables.get(name)
        if t is None:
            import lancedb

            if self._adb is None:
                refresh = timedelta(seconds=self.settings.read_refresh_s)
                self._adb = self.run(lancedb.connect_async(str(self.path.resolve()),
                                                           read_consistency_interval=refresh))
            t = self._async_tables[name] = self.run(self._adb.open_table(name))
        elif name in self._stale:
            # This process wrote since: its own writes are visible at once, others' within read_refresh_s.
            self.run(t.checkout_latest())
        self._stale.discard(name)
        return t

    def table(self, name: str):
        self._check_process()
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = self._db.open_table(name)
        elif name in self._sync_stale:
            t.checkout_latest()
        self._sync_stale.discard(name)
        return t

    def upsert(self, name: str, rows: Sequence[BaseModel], insert_only: bool = False) -> None:
        """Write rows by id in one commit: replace existing ids (or keep them, with insert_only)."""
        if not rows:
            return
        if not self.locked():
            raise RuntimeError("Store.upsert outside Store.lock()")
        t = self.table(name)
        builder = t.merge_insert("id")
        if not insert_only:
            builder = builder.when_matched_update_all()
        builder.when_not_matched_insert_all().execute(to_arrow(list(rows), self._schemas[name]))
        self._stale.add(name)
        if t.version % self.settings.optimize_every == 0:
            self._optimize_table(name)

    def append(self, name: str, rows: Sequence[BaseModel]) -> None:
        """Add rows whose ids are known to be new (cheaper than upsert, which must match ids)."""
        if not rows:
            return
        if not self.locked():
            raise RuntimeError("Store.append outside Store.lock()")
        t = self.table(name)
        t.add(to_arrow(list(rows), self._schemas[name]))
        self._stale.add(name)
        if t.version % self.settings.optimize_every == 0:
            self._optimize_table(name)

    def delete(self, name: str, where: str) -> None:
        if not self.locked():
            raise RuntimeError("Store.delete outside Store.lock()")
        self.table(name).delete(where)
        self._stale.add(name)

    def update_columns(self, name: str, rows: Sequence[dict], columns: Sequence[str]) -> None:
        """Overwrite some columns of existing rows (matched by id) in one commit; other columns keep their values."""
        if not rows:
            return
        if not self.locked():
            raise RuntimeError("Store.update_columns outside Store.lock()")
        import pyarrow as pa

        full = self._schemas[name]
        schema = pa.schema([full.field("id")] + [full.field(c) for c in columns])
        t = self.table(name)
        t.merge_insert("id").when_matched_update_all().execute(pa.Table.from_pylist(list(rows), schema=schema))
        self._stale.add(name)
        if t.version % self.settings.optimize_every == 0:
            self._optimize_table(name)

    def write_concurrently(self, writes: Sequence[tuple[str, str, Sequence, Sequence[str] | None]]) -> None:
        """Several independent commits in flight at once: ("append", table, models, None) or
        ("update", table, dict rows, columns). Each is atomic; together they are not (callers order
        what must be ordered into separate calls)."""
        if not self.locked():
            raise RuntimeError("Store.write_concurrently outside Store.lock()")
        import pyarrow as pa

        jobs, names = [], []
        for op, name, rows, columns in writes:
            if not rows:
                continue
            t = self.async_table(name)
            if op == "append":
                jobs.append(t.add(to_arrow(list(rows), self._schemas[name])))
            else:
                full = self._schemas[name]
                schema = pa.schema([full.field("id")] + [full.field(c) for c in columns or []])
                jobs.append(t.merge_insert("id").when_matched_update_all().execute(
                    pa.Table.from_pylist(list(rows), schema=schema)))
            names.append(name)
        self.run(_gather(jobs))
        for name in names:
            self._sync_stale.add(name)
            if self.table(name).version % self.settings.optimize_every == 0:
                self._optimize_table(name)

    def fetch_many(self, queries: Sequence[tuple[str, str, list[str]]]) -> list:
        """Several reads in flight at once: (table, where, columns) -> Arrow tables, in order."""
        tables = [self.async_table(name) for name, _, _ in queries]
        return self.run(_gather([t.query().where(w).select(c).to_arrow()
                                 for t, (_, w, c) in zip(tables, queries, strict=True)]))

    def fetch(self, name: str, where: str | None = None, columns: list[str] | None = None,
              limit: int | None = None) -> list:
        """Rows of a table as models (items without vectors unless `columns` asks for them)."""
        model = TABLES[name]
        t = self.table(name)
        q = t.search()
        if where:
            q = q.where(where)
        if columns is None:
            columns = [c for c in model.model_fields if c != "vector"]
        q = q.select(columns)
        if limit is not None:
            q = q.limit(limit)
        try:
            return from_arrow(q.to_arrow(), model)
        except ValidationError as e:
            raise StoreError(f"a row of table {name} in {self.path} does not match its schema: {e}") from e

    def fetch_arrow(self, name: str, where: str | None = None, columns: list[str] | None = None):
        q = self.table(name).search()
        if where:
            q = q.where(where)
        if columns:
            q = q.select(columns)
        return q.to_arrow()

    def items(self, ids: Sequence[str], with_vector: bool = False) -> dict[str, Item]:
        if not ids:
            return {}
        cols = list(Item.model_fields) if with_vector else None
        ids = list(ids)
        out: dict[str, Item] = {}
        for lo in range(0, len(ids), 1000):  # keeps each SQL IN list small
            out.update((it.id, it) for it in self.fetch("items", sql_in("id", ids[lo:lo + 1000]), cols))
        return out

    def item(self, item_id: str, with_vector: bool = False) -> Item:
        found = self.items([item_id], with_vector)
        if item_id not in found:
            raise UnknownId(f"no item {item_id!r} in the memory at {self.path}; `sage-npu memory list` shows the ids")
        return found[item_id]

    def count(self, name: str, where: str | None = None) -> int:
        return self.table(name).count_rows(where)

    # ---- upkeep
    def optimize(self) -> None:
        """Compact every table, refresh indexes, drop versions older than keep_versions_s (under the lock)."""
        with self.lock():
            for name in TABLES:
                self._optimize_table(name)

    def _optimize_table(self, name: str) -> None:
        # Compaction merges the small fragments every write leaves; scans slow down with their count.
        self.table(name).optimize(cleanup_older_than=timedelta(seconds=self.settings.keep_versions_s))
        self._ensure_indexes(name)
        self._stale.add(name)

    def _ensure_indexes(self, name: str) -> None:
        from lancedb.index import FTS, Bitmap, BTree

        t = self.table(name)
        have = {ix.name for ix in t.list_indices()}
        wanted: dict[str, tuple[str, BTree | Bitmap | FTS]] = {"id_idx": ("id", BTree())}
        if name == "items":
            wanted |= {f"{DOC_COLUMN}_idx": (DOC_COLUMN, FTS()), "status_idx": ("status", Bitmap())}
        elif name in ("adoptions", "attempts"):
            wanted["episode_idx"] = ("episode_id", BTree())
        elif name == "episodes":
            wanted["state_idx"] = ("state", Bitmap())
        for index_name, (column, config) in wanted.items():
            if index_name not in have:
                t.create_index(column, config=config, name=index_name)
        if name == "items" and "vector_idx" not in have and t.count_rows() >= self.settings.index_threshold:
            self.build_vector_index()

    def build_vector_index(self) -> None:
        """An approximate index over the vectors (HNSW on IVF partitions): flat search grows linearly."""
        from lancedb.index import IvfHnswSq

        with self.lock():
            self.table("items").create_index("vector", config=IvfHnswSq(distance_type="cosine"), name="vector_idx",
                                             replace=True)
            self._stale.add("items")
            self.cache.pop("vector_index", None)

    def has_vector_index(self) -> bool:
        t = self.table("items")
        cached = self.cache.get("vector_index")
        if cached is None or cached[0] != t.version:
            cached = self.cache["vector_index"] = (t.version, any(ix.name == "vector_idx" for ix in t.list_indices()))
        return cached[1]


async def _gather(jobs):
    import asyncio

    return await asyncio.gather(*jobs)


def _write_json(path: Path, data: dict) -> None:
    # Write-then-rename: a crash leaves the old file or the new one, never half of one.
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2))
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
