"""The plan stage's answers, kept on disk and reused while nothing they depend on has changed.

A plan is what host.py and reference.py compute: every trial's launch, input arrays and
reference outputs. It does not depend on the kernel, so an edit of the kernel (every save in
the editor) need not run torch again; nor does a repeated `sage-npu eval` need to start the
plan process at all. The key holds what the plan reads: the content of every Python file of
the task folder, the name, size and modification time of its other files (data a reference may
load), the folder's path (the plan names host.py's lines), the seed and trial count, and the
version of the plan code and torch. Kernel sources are left out. A plan whose code reads
anything else (a file outside the task folder, the clock, unseeded randomness) is reused as
first computed; `eval.plan_cache = false` turns the cache off.

Entries live in the build cache's folder (`plans/<key>/`), bounded with it
(`eval.build_cache_mb`, least recently used out).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from sage_npu.npu_eval.build import touch
from sage_npu.npu_eval.launch_plan import LaunchPlan, TensorArg
from sage_npu.npu_eval.task import SOURCE_SUFFIXES, Task

_PLAN_FILE = "plan.json"
_MAX_FILES = 2000  # a task folder larger than this (a repository root, say) is not keyed: no cache
_SKIPPED_SUFFIXES = {*SOURCE_SUFFIXES, ".o", ".so", ".a"}  # what builds read and write, not the plan
# The code that makes and reads a plan: a change to any of them changes what a plan holds.
_PLAN_CODE = ("plan.py", "launch_plan.py", "zygote.py", "plan_cache.py")


@lru_cache(maxsize=1)
def _code_version() -> str:
    h = hashlib.sha256(sys.version.encode())
    for name in _PLAN_CODE:
        h.update((Path(__file__).parent / name).read_bytes())
    try:
        h.update(metadata.version("torch").encode())
    except metadata.PackageNotFoundError:
        pass
    return h.hexdigest()


def plan_key(task: Task, seed: int, trials: int, check: bool = True) -> str | None:
    """The key of this task's plan, or None when the folder cannot be keyed (unreadable, or too
    many files to be a task folder). `check` false: the estimate-only plan (no expected outputs)."""
    h = hashlib.sha256("\0".join([_code_version(), str(task.root.resolve()), str(task.reference),
                                  str(task.host), str(seed), str(trials), "" if check else "unchecked"]).encode())
    count = 0
    try:
        for dirpath, dirnames, filenames in os.walk(task.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for name in sorted(filenames):
                count += 1
                if count > _MAX_FILES:
                    return None
                path = Path(dirpath, name)
                if path.suffix in _SKIPPED_SUFFIXES or name.startswith("."):
                    continue
                h.update(b"\0" + str(path).encode() + b"\0")
                if path.suffix == ".py":
                    h.update(path.read_bytes())
                else:
                    st = path.stat()
                    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    except OSError:
        return None
    return h.hexdigest()[:32]


class PlanCache:
    """Plans by key under `root/plans`, each with the array files it names."""

    def __init__(self, root: Path) -> None:
        self.root = root / "plans"

    def lookup(self, key: str) -> LaunchPlan | None:
        folder = self.root / key
        try:
            plan = LaunchPlan.model_validate_json((folder / _PLAN_FILE).read_text())
        except (OSError, ValueError):
            return None
        if not all(Path(p).is_file() for p in _files(plan)):
            return None  # trimmed under us, or damaged: plan again
        touch(folder)
        return plan

    def store(self, key: str, plan: LaunchPlan, out_dir: Path) -> None:
        """Keep `plan` with its arrays (from `out_dir`, which the plan stage wrote). Best effort:
        a plan that cannot be kept is computed again next time."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f"{key}.tmp", dir=self.root))
        except OSError:
            return
        try:
            kept = _keep_files(plan, out_dir.resolve(), tmp, self.root / key)
            (tmp / _PLAN_FILE).write_text(kept.model_dump_json())
            os.replace(tmp, self.root / key)
        except (OSError, ValueError):
            # Another evaluation stored the same plan first (its folder is not empty), or the
            # disk refused: this evaluation goes on with the files where they are.
            pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _files(plan: LaunchPlan) -> list[str]:
    return [p for t in plan.trials for p in [*(a.path for a in t.tensors), *(o.expected for o in t.outputs)] if p]


def _keep_files(plan: LaunchPlan, out_dir: Path, tmp: Path, final: Path) -> LaunchPlan:
    """Copy the plan's files into `tmp`, under their names relative to `out_dir`, and return the
    plan naming them where `tmp` will be renamed to, `final`. Copies, not links: the kept files
    belong to this process, not to the sandboxed user that wrote them, and the originals stay for
    this evaluation whatever happens here."""
    kept: dict[str, str] = {}
    for path in _files(plan):
        if path in kept:
            continue
        rel = Path(path).resolve().relative_to(out_dir)  # the plan stage checked: inside out_dir
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, tmp / rel)
        kept[path] = str(final / rel)
    trials = [t.model_copy(update={
        "args": [a.model_copy(update={"path": kept[a.path]}) if isinstance(a, TensorArg) else a for a in t.args],
        "outputs": [o.model_copy(update={"expected": kept.get(o.expected, "")}) for o in t.outputs]})
              for t in plan.trials]
    return plan.model_copy(update={"trials": trials})
