"""The fault tasks of tests/test_faults.py and tests/test_golden_reports.py, generated from a few
base tasks: each case is its base (tests/faults/bases/<base>/: kernel, host.py, reference.py)
with the case's unified diff applied (tests/faults/patches/<case>.diff, absent when the case is
the base as it is). `materialise` writes every case to <dest>/faults/<case>/, the folder layout
the golden reports were recorded from, byte for byte as the cases were once stored whole, so the
line numbers in `// expect:` marks and in the golden reports hold."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

FAULTS = Path(__file__).resolve().parent / "faults"
BASES = FAULTS / "bases"
PATCHES = FAULTS / "patches"

# case -> the base task it is an edit of
CASES: dict[str, str] = {
    "correct_add_pad_tail": "add_custom",
    "gm_out_of_bounds_tail": "add_custom",
    "gm_race": "add_custom",
    "mismatch_tail": "add_custom",
    "queue_deadlock_alloc": "add_custom",
    "queue_deadlock_deque": "add_custom",
    "ub_out_of_bounds_count": "add_custom",
    "ub_overflow": "add_custom",
    "unaligned_count": "add_custom",
    "uninitialized_read": "add_custom",
    "use_after_free": "add_custom",
    "correct_tbuf_flags": "fma_custom",
    "flag_deadlock": "fma_custom",
    "ub_out_of_bounds_tbuf": "fma_custom",
    "unaligned_ub_address": "diff_custom",
    "ub_out_of_bounds_tmp": "gelu_adv",
    "attention_cube_buffer_overflow": "attention_fwd_mix",
    "attention_flag_deadlock": "attention_fwd_mix",
    "attention_gm_race": "attention_fwd_mix",
    "attention_uninitialized_read": "attention_fwd_mix",
}

_FILE = re.compile(r"^\+\+\+ b/(?P<name>\S+)")
_HUNK = re.compile(r"^@@ -(?P<old>\d+)(?:,(?P<olen>\d+))? \+\d+(?:,(?P<nlen>\d+))? @@")


@dataclass
class Hunk:
    start: int          # the hunk's first old line (1-based), or the line it inserts after
    old: list[str]      # context and removed lines, as they must be in the base
    new: list[str]      # context and added lines


def parse_diff(text: str) -> dict[str, list[Hunk]]:
    """The hunks of a unified diff (as `diff -u` / difflib write it), per file name. A hunk's
    line counts say where it ends, so a removed line that reads like a header is still a line."""
    files: dict[str, list[Hunk]] = {}
    hunks: list[Hunk] = []
    left_old = left_new = 0
    for line in text.splitlines(keepends=True):
        if left_old or left_new:
            tag, body = line[0], line[1:]
            if tag in " -":
                hunks[-1].old.append(body)
                left_old -= 1
            if tag in " +":
                hunks[-1].new.append(body)
                left_new -= 1
        elif m := _FILE.match(line):
            hunks = files.setdefault(m.group("name"), [])
        elif m := _HUNK.match(line):
            hunks.append(Hunk(int(m.group("old")), [], []))
            left_old = int(m.group("olen") or 1)
            left_new = int(m.group("nlen") or 1)
    return files


def apply_hunks(text: str, hunks: list[Hunk], name: str) -> str:
    """`text` with the hunks applied; every context and removed line must match exactly."""
    lines = text.splitlines(keepends=True)
    shift = 0
    for h in hunks:
        at = h.start - 1 + shift if h.old else h.start + shift
        if lines[at:at + len(h.old)] != h.old:
            raise ValueError(f"{name}: the patch does not apply at line {h.start}")
        lines[at:at + len(h.old)] = h.new
        shift += len(h.new) - len(h.old)
    return "".join(lines)


def case_files(case: str) -> dict[str, str]:
    """File name -> text of one case: its base with its patch applied."""
    base = BASES / CASES[case]
    files = {p.name: p.read_text() for p in sorted(base.iterdir()) if p.is_file()}
    patch = PATCHES / f"{case}.diff"
    if patch.exists():
        for name, hunks in parse_diff(patch.read_text()).items():
            files[name] = apply_hunks(files[name], hunks, f"{patch.name} on {name}")
    return files


def materialise(dest: Path) -> dict[str, Path]:
    """Write every case to dest/faults/<case>/ and return case -> its folder."""
    out = {}
    for case in CASES:
        folder = dest / "faults" / case
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for name, text in case_files(case).items():
            (folder / name).write_text(text)
        out[case] = folder
    return out
