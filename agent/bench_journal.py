"""The results journal of `sage-npu bench --out FILE` (docs/bench.md): FILE's `.journal.jsonl` beside it.

One JSON line per event, each flushed and fsynced as it happens: the run's header (its id, the suite's
tasks in order and the settings that decide its results), every finished task (its row, and the
episode's log and lessons for the memory's one writer), every committed wave. A run started again with
the same header resumes: finished tasks are not run again, committed waves not credited again, and the
tasks of a wave left half done finish with the snapshot they started with (nothing of that wave was
committed). A line torn by a kill is ignored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from sage_npu.agent.bench import BenchError, TaskOutcome


class RunHeader(BaseModel):
    kind: Literal["run"] = "run"
    run_id: str
    suite: str
    tasks: list[str]                   # the task folders, in suite order
    wave: int
    turns: int
    model: str
    memory: str | None

    def same_run(self, other: RunHeader) -> bool:
        """Whether `other` describes the same run (the id aside)."""
        return self.model_dump(exclude={"run_id"}) == other.model_dump(exclude={"run_id"})


class TaskDone(BaseModel):
    kind: Literal["task"] = "task"
    outcome: TaskOutcome


class WaveDone(BaseModel):
    kind: Literal["wave"] = "wave"
    wave: int


Entry = Annotated[RunHeader | TaskDone | WaveDone, Field(discriminator="kind")]
ENTRY: TypeAdapter[RunHeader | TaskDone | WaveDone] = TypeAdapter(Entry)


def journal_path(out: Path) -> Path:
    """Where the journal of `--out FILE` lives: beside FILE."""
    return out.with_name(out.stem + ".journal.jsonl")


@dataclass
class Journal:
    path: Path
    header: RunHeader
    outcomes: dict[int, TaskOutcome] = field(default_factory=dict)
    waves: set[int] = field(default_factory=set)

    @classmethod
    def open(cls, path: Path, header: RunHeader, fresh: bool = False) -> Journal:
        """The journal at `path`: resumed when it holds the same run, started with `header` when there is none
        (or `fresh`); a journal of another run raises BenchError rather than being mixed in."""
        if fresh:
            path.unlink(missing_ok=True)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            journal = cls(path, header)
            journal.append(header)
            return journal
        entries = read_entries(path)
        first = entries[0] if entries else None
        if not isinstance(first, RunHeader) or not first.same_run(header):
            raise BenchError(f"{path} is the journal of another run (another suite, task list, wave, turns, model or "
                             "memory); pass --fresh to start over, or another --out")
        if not path.read_bytes().endswith(b"\n"):   # a torn last line must not swallow the next entry
            with open(path, "ab") as f:
                f.write(b"\n")
        journal = cls(path, first)
        for e in entries[1:]:
            if isinstance(e, TaskDone):
                journal.outcomes[e.outcome.index] = e.outcome
            elif isinstance(e, WaveDone):
                journal.waves.add(e.wave)
        return journal

    def append(self, entry: RunHeader | TaskDone | WaveDone) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(entry.model_dump_json() + "\n")
            f.flush()
            os.fsync(f.fileno())

    def task_done(self, outcome: TaskOutcome) -> None:
        self.outcomes[outcome.index] = outcome
        self.append(TaskDone(outcome=outcome))

    def wave_done(self, wave: int) -> None:
        self.waves.add(wave)
        self.append(WaveDone(wave=wave))


def read_entries(path: Path) -> list[RunHeader | TaskDone | WaveDone]:
    """The journal's entries; a torn or foreign line (a kill mid-write) is skipped."""
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            out.append(ENTRY.validate_json(line))
        except ValidationError:
            continue
    return out
