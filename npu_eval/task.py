"""Load a kernel task (docs/task-format.md): a folder with reference.py, host.py and one kernel
file holding a `__global__` entry; a CANN custom-operator project as msopgen lays it out
(reference.py, op_host/<op>.cpp with its tiling function, op_kernel/<op>.cpp), whose tiling
comes from op_host instead of host.py (npu_eval/op_project.py), or written as one
MultiKernelBench candidate file beside reference.py (npu_eval/op_candidate.py); or just a kernel
file, which still gets compile diagnostics and static checks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.op_candidate import CandidateError, candidate_strings, lay_out

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
    # An op project's op_host/<op>.cpp (the OpDef and its TilingFunc), which stands in for host.py.
    op_host: Path | None = None
    # The MultiKernelBench candidate file the op project was written from: the file the user edits.
    candidate: Path | None = None

    @property
    def runnable(self) -> bool:
        return self.reference is not None and (self.host is not None or self.op_host is not None)

    @property
    def sources(self) -> list[Path]:
        """The task's own files: the kernel, host.py or op_host/<op>.cpp, reference.py (and the
        candidate an op project was written from)."""
        return [p for p in (self.kernel, self.host, self.reference, self.op_host, self.candidate) if p is not None]

    def user_files(self) -> set[str]:
        """Files whose lines diagnostics may name: the task's own, and headers beside the kernel
        (and, in an op project, beside op_host/<op>.cpp)."""
        files = {str(p.resolve()) for p in self.sources}
        folders = {self.root, self.kernel.parent} | ({self.op_host.parent} if self.op_host else set())
        return files | {str(p.resolve()) for d in folders for pat in ("*.h", "*.hpp") for p in d.glob(pat)}


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


_OP_ADD = re.compile(r"\bOP_ADD\s*\(")


def _op_project(folder: Path) -> Task | None:
    """The folder as an msopgen op project (op_host/ and op_kernel/ beside reference.py), or None
    when it is not laid out so. A host.py wins: a task may keep its tiling header in op_host/
    and launch its kernel from host.py."""
    host_dir, kernel_dir = folder / "op_host", folder / "op_kernel"
    if not host_dir.is_dir() or (folder / "host.py").is_file():
        return None
    if not kernel_dir.is_dir():
        if _kernel_files(folder):
            return None
        raise TaskError(f"{folder}: op_host/ has no op_kernel/ beside it; an op project keeps its kernel in "
                        "op_kernel/<op>.cpp")
    kernels = _kernel_files(kernel_dir)
    if len(kernels) != 1:
        found = ", ".join(k.name for k in kernels) or "none"
        raise TaskError(f"{kernel_dir}: expected one kernel file with a __global__ entry (found {found})")
    hosts = [p for p in sorted(host_dir.iterdir()) if p.suffix in KERNEL_SUFFIXES and p.is_file()
             and _OP_ADD.search(p.read_text(errors="replace"))]
    if len(hosts) != 1:
        found = ", ".join(h.name for h in hosts) or "none"
        raise TaskError(f"{host_dir}: expected one .cpp file registering the operator with OP_ADD (found {found})")
    ref = folder / "reference.py"
    return Task(root=folder, kernel=kernels[0], reference=ref if ref.is_file() else None, host=None,
                op_host=hosts[0])


def _from_candidate(path: Path) -> Task | None:
    """A MultiKernelBench candidate file as the op project it describes, reference.py beside it;
    None when the file is not one."""
    try:
        strings = candidate_strings(path)
        if strings is None:
            return None
        project = _op_project(lay_out(path, strings))
    except CandidateError as e:
        raise TaskError(str(e)) from e
    assert project is not None  # lay_out made op_host/ and op_kernel/
    ref = path.parent / "reference.py"
    return Task(root=path.parent, kernel=project.kernel, reference=ref if ref.is_file() else None, host=None,
                op_host=project.op_host, candidate=path)


def _candidate_in(folder: Path) -> Task | None:
    """The folder's one MultiKernelBench candidate file, when it has no kernel file of its own."""
    found = [t for p in sorted(folder.glob("*.py")) if p.name not in ("reference.py", "host.py")
             for t in [_from_candidate(p)] if t is not None]
    if len(found) > 1:
        raise TaskError(f"{folder}: several candidate files; pass the one to evaluate")
    return found[0] if found else None


def load_task(path: str | Path) -> Task:
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise TaskError(f"{path}: no such file or folder")
    if p.is_file():
        candidate = _from_candidate(p) if p.suffix == ".py" else None
        if candidate is not None:
            return candidate
        if p.suffix not in KERNEL_SUFFIXES:
            raise TaskError(
                f"{path}: not a kernel file (expected {', '.join(KERNEL_SUFFIXES)}) nor a task folder"
            )
        if p.parent.name in ("op_kernel", "op_host"):  # an op project's kernel or host file: the project
            project = _op_project(p.parent.parent)
            if project is not None and p in (project.kernel, project.op_host):
                return project
        root, kernel = p.parent, p
    else:
        root = p
        project = _op_project(p)
        if project is not None:
            return project
        kernels = _kernel_files(p)
        if not kernels and not (p / "host.py").is_file():
            project = _candidate_in(p)
            if project is not None:
                return project
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
