"""What a person did with a suggested rewrite, read from the editor's document events rather than
from the click that applied it: applying only changes buffers, so it decides nothing.

- **Accepted** when every file the suggestion changes reads, on disk, as suggested: the rewrite
  was saved (a didSave of the task's files, or a check of the disk for files the client does not
  report, such as a host.py Neovim has not attached).
- **Rejected** when a file that took the rewrite in its buffer goes back to its text from before
  (the edit was undone), or is closed while the disk does not hold the rewrite (closed unsaved).
- Neither (edited further, never applied, applied but left unsaved): no decision; the caller
  credits the episode as the agent alone would once `memory.editor_timeout_s` has passed.

Texts compare without line-ending differences and trailing newlines (editors add or drop the
last one when they write a buffer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Verdict = Literal["accept", "reject"]


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str   # what the person did, for the message and the log ("saved", "undone in host.py", ...)


@dataclass
class WatchedFile:
    path: Path
    name: str                 # relative to the task folder
    suggested: str
    original: str | None      # its text when the suggestion was offered; None: the suggestion creates it
    applied: bool = False     # its buffer held the rewrite at some point


def same_text(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is b
    return _norm(a) == _norm(b)


def _norm(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")


def read_disk(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


class DecisionWatch:
    """The files of one suggestion and what their buffers and the disk show, until a decision."""

    def __init__(self, files: list[WatchedFile], disk: Callable[[Path], str | None] = read_disk) -> None:
        self.files = {f.path.resolve(): f for f in files}
        self.disk = disk

    def _file(self, path: Path) -> WatchedFile | None:
        return self.files.get(path.resolve())

    def changed(self, path: Path, text: str) -> Decision | None:
        """A buffer of `path` now reads `text` (didOpen, didChange)."""
        f = self._file(path)
        if f is None:
            return None
        if same_text(text, f.suggested):
            f.applied = True
        elif f.applied and f.original is not None and same_text(text, f.original):
            return Decision("reject", f"the rewrite was undone in {f.name}")
        return None

    def saved(self) -> Decision | None:
        """A file of the task was written (didSave), or the disk is checked: accepted when every file
        reads as suggested."""
        if self.files and all(same_text(self.disk(f.path), f.suggested) for f in self.files.values()):
            return Decision("accept", "the rewrite was saved")
        return None

    def closed(self, path: Path) -> Decision | None:
        """The buffer of `path` was closed (didClose): rejected if it held the rewrite unsaved."""
        f = self._file(path)
        if f is None or not f.applied:
            return None
        if same_text(self.disk(f.path), f.suggested):
            return self.saved()
        return Decision("reject", f"{f.name} was closed without saving the rewrite")
