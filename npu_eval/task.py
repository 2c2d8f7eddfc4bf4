"""Load a kernel task (docs/task-format.md): a folder with reference.py, host.py and one kernel
file holding a `__global__` entry; or just a kernel file, which still gets compile
diagnostics and static checks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

KERNEL_SUFFIXES = (".cpp", ".asc", ".cc", ".cce")
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inc")
# Every C/C++ file a kernel or program may be made of (what a build reads, not what Python does).
SOURCE_SUFFIXES = (*KERNEL_SUFFIXES, ".cxx", *HEADER_SUFFIXES)
_ENTRY = re.compile(r"\b__global__\b")


class TaskError(Exception):
    """A task that cannot be evaluated as given; the message says what to do."""


@dataclass(frozen=True)
class Task:
    root: Path
    kernel: Path
    reference: Path | None
    host: Path | None

    @property
    def runnable(self) -> bool:
        return self.reference is not None and self.host is not None

    def user_files(self) -> set[str]:
        """Files whose lines diagnostics may name: the task's own, and headers beside the kernel."""
        files = {str(Path(p).resolve()) for p in (self.kernel, self.host, self.reference) if p is not None}
        return files | {str(p.resolve()) for pat in ("*.h", "*.hpp") for p in self.root.glob(pat)}


def _kernel_files(folder: Path) -> list[Path]:
    found = []
    for p in sorted(folder.iterdir()):
        if p.suffix in KERNEL_SUFFIXES and p.is_file():
            try:
                if _ENTRY.search(p.read_text(errors="replace")):
                    found.append(p)
            except OSError:
                continue
    return found


def load_task(path: str | Path) -> Task:
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise TaskError(f"{path}: no such file or folder")
    if p.is_file():
        if p.suffix not in KERNEL_SUFFIXES:
            raise TaskError(
                f"{path}: not a kernel file (expected {', '.join(KERNEL_SUFFIXES)}) nor a task folder"
            )
        root, kernel = p.parent, p
    else:
        root = p
        kernels = _kernel_files(p)
        if not kernels:
            raise TaskError(f"{path}: no kernel file with a __global__ entry in this folder")
        if len(kernels) > 1:
            names = ", ".join(k.name for k in kernels)
            raise TaskError(f"{path}: several kernel files ({names}); pass the one to evaluate")
        kernel = kernels[0]
    ref, host = root / "reference.py", root / "host.py"
    return Task(
        root=root,
        kernel=kernel,
        reference=ref if ref.is_file() else None,
        host=host if host.is_file() else None,
    )
