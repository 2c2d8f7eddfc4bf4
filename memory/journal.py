"""The event journal: episode events written down before they are applied, so none is lost.

Contracts:
- `add` appends one event (with a fresh id and the writer's pid) and fsyncs before the writer even
  waits for the store's lock: from then on the event survives a lock timeout and a crash.
- The writer applies its event under the lock and appends `done`. An entry without `done` whose
  writer is gone (dead, or `release`d after a lock timeout) is `replayable`: the next writer to get
  the lock applies it. Applying twice is harmless: episode ids make crediting idempotent.
- A record is one line written by one `write` under a short flock on `.journal.lock`; a torn last
  line (a crash mid-append) is skipped. Once the journal holds only finished entries it is emptied,
  and it is rewritten without them when it grows past `COMPACT_BYTES`.
"""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, ValidationError

from sage_npu.memory.models import EpisodeLog

JOURNAL = "journal.jsonl"
JOURNAL_LOCK = ".journal.lock"
COMPACT_BYTES = 64 * 1024


class CreditEvent(BaseModel):
    """An agent episode to store and credit at once (`episodes.credit_episode`)."""
    kind: Literal["credit"] = "credit"
    log: EpisodeLog


class RecordEvent(BaseModel):
    """An editor episode to store open, to be credited later (`episodes.record_episode`)."""
    kind: Literal["record"] = "record"
    log: EpisodeLog
    deadline: datetime | None = None


class DecideEvent(BaseModel):
    """A person's accept or reject of a suggestion (`episodes.decide`)."""
    kind: Literal["decide"] = "decide"
    episode_id: str
    decision: Literal["accept", "reject"]
    attempt_id: str
    turns: list[int] | None = None


Event = Annotated[CreditEvent | RecordEvent | DecideEvent, Field(discriminator="kind")]


class JournalRecord(BaseModel):
    """One line: `add` carries the event; `done` (applied, or refused for good) and `release` (its
    writer gave up waiting: anyone may apply it) name an earlier `add` by id."""
    op: Literal["add", "done", "release"]
    id: str
    pid: int = 0
    event: Event | None = None


class PendingEvent(BaseModel):
    id: str
    event: Event


def add(folder: Path, event: CreditEvent | RecordEvent | DecideEvent) -> str:
    """Append the event durably (fsync); returns its id."""
    rid = uuid.uuid4().hex
    _append(folder, JournalRecord(op="add", id=rid, pid=os.getpid(), event=event), sync=True)
    return rid


def done(folder: Path, rid: str) -> None:
    # No fsync: a lost `done` only makes the event replay, and replaying is idempotent.
    _append(folder, JournalRecord(op="done", id=rid), sync=False)


def release(folder: Path, rid: str) -> None:
    """This writer will not apply the event itself: the next writer to get the lock will."""
    _append(folder, JournalRecord(op="release", id=rid), sync=True)


def replayable(folder: Path) -> list[PendingEvent]:
    """Entries without `done` whose writer will not apply them (it died, or released them), oldest first."""
    out = []
    with _locked(folder):
        records = _read(folder)
    finished = {r.id for r in records if r.op == "done"}
    released = {r.id for r in records if r.op == "release"}
    for r in records:
        if r.op == "add" and r.id not in finished and r.event is not None:
            if r.id in released or (r.pid != os.getpid() and not _alive(r.pid)):
                out.append(PendingEvent(id=r.id, event=r.event))
    return out


def has_entries(folder: Path) -> bool:
    try:
        return (folder / JOURNAL).stat().st_size > 0
    except FileNotFoundError:
        return False


def compact(folder: Path) -> None:
    """Drop finished entries: empty the journal when nothing is pending, rewrite it when it is large."""
    path = folder / JOURNAL
    with _locked(folder):
        records = _read(folder)
        finished = {r.id for r in records if r.op == "done"}
        keep = [r for r in records if r.id not in finished]
        if not keep:
            with open(path, "r+b") as f:
                f.truncate(0)
        elif path.stat().st_size > COMPACT_BYTES:
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            with open(tmp, "wb") as f:
                f.write(b"".join(r.model_dump_json().encode() + b"\n" for r in keep))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)


def _append(folder: Path, record: JournalRecord, sync: bool) -> None:
    line = record.model_dump_json().encode() + b"\n"
    with _locked(folder):
        fd = os.open(folder / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)


def _read(folder: Path) -> list[JournalRecord]:
    try:
        lines = (folder / JOURNAL).read_bytes().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            out.append(JournalRecord.model_validate_json(line))
        except ValidationError:
            continue  # the torn tail of a crashed append: that writer was never acknowledged
    return out


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / JOURNAL_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
