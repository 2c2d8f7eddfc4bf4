"""What `sage-npu bench` accepts as a suite, turned into task folders (docs/task-format.md).

- A folder of task folders (reference.py, host.py, a kernel): the examples' layout. A folder with
  reference.py but no kernel yet is a task to draft.
- Single-file suites: KernelBench's `<id>_<Name>.py` and NPUKernelBench's, whose
  `get_input_groups()` reads a JSON-lines sidecar of shape cases from beside itself. Each file
  becomes a staged task folder (outside the suite, which is never written to) holding the file
  as reference.py and its sidecars, with no kernel: the model drafts one, offline it is unsolved.
- Level folders (`level0/`, `level1/`, ...) holding either form are searched one level down.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.task import KERNEL_SUFFIXES

SKIP_DIRS = {"__pycache__"}
_MODEL = re.compile(r"^class\s+Model\s*\(", re.M)


@dataclass
class Found:
    tasks: list[Path]
    broken: list[tuple[str, Path, str]]   # (name, path, reason)


def has_kernel(folder: Path) -> bool:
    return any(f.suffix in KERNEL_SUFFIXES and f.is_file() for f in folder.iterdir())


def _is_reference_file(p: Path) -> bool:
    if p.suffix != ".py" or p.name in ("host.py", "reference.py", "__init__.py") or not p.is_file():
        return False
    try:
        return bool(_MODEL.search(p.read_text(errors="replace")))
    except OSError:
        return False


def stage_single_file(ref: Path, stage_root: Path) -> Path:
    """A task folder for one single-file task: the file as reference.py beside copies of its sidecars."""
    d = stage_root / ref.stem
    if d.exists():
        shutil.rmtree(d)   # a fresh draft every run: last run's kernel must not be taken for the task's own
    d.mkdir(parents=True)
    shutil.copy2(ref, d / "reference.py")
    for side in ref.parent.glob(f"{ref.stem}*.json"):
        shutil.copy2(side, d / side.name)
    return d


def default_stage_root(suite: Path) -> Path:
    import platformdirs

    key = hashlib.sha256(str(suite).encode()).hexdigest()[:12]
    return Path(platformdirs.user_cache_dir("sage-npu")) / "suites" / f"{suite.name}-{key}"


def discover(suite: Path, stage_root: Path | None = None) -> Found:
    stage_root = stage_root or default_stage_root(suite)
    found = Found([], [])
    _scan(suite, stage_root, found, depth=0)
    return found


def _scan(root: Path, stage_root: Path, found: Found, depth: int) -> None:
    for p in sorted(root.iterdir()):
        if p.name.startswith(".") or p.name in SKIP_DIRS:
            continue
        if p.is_file() and _is_reference_file(p):
            found.tasks.append(stage_single_file(p, stage_root / root.relative_to(root.parent if depth else root)))
            continue
        if not p.is_dir():
            continue
        parts = {"host.py": (p / "host.py").is_file(), "reference.py": (p / "reference.py").is_file(),
                 "kernel": has_kernel(p)}
        if parts["reference.py"]:
            found.tasks.append(p)   # complete, or a kernel (and host.py) to draft
        elif any(parts.values()):
            found.broken.append((p.name, p, f"{p}: missing reference.py; a task folder needs reference.py (and "
                                            "host.py and a kernel file, or a model to draft them)"))
        elif depth == 0:
            _scan(p, stage_root, found, depth + 1)
