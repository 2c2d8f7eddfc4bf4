"""The run stage: one trial of the built harness in the sandbox, and what it left behind
(outputs, faults at user lines, who wrote each output byte, the trace, the kernel's stdout)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sage_npu.npu_eval.sandbox import SandboxLimits, SandboxResult, prepare_scratch, run_sandboxed

# writer_<arg>.bin: runs of bytes with the same last writer, (location id << 12) | (block + 1).
WRITER_RUN = np.dtype([("start", "<u8"), ("length", "<u8"), ("writer", "<u4"), ("pad", "<u4")])


@dataclass
class Fault:
    code: str
    severity: str
    file: str
    line: int
    block: int
    count: int
    message: str


@dataclass
class TrialRun:
    result: SandboxResult
    faults: list[Fault]
    aborted: bool                 # a fault stopped the kernel
    finished: bool                # the harness got to the end and wrote its outputs
    outdir: Path
    locs: dict[int, tuple[str, int]] = field(default_factory=dict)

    def output(self, arg: int) -> Path:
        return self.outdir / f"out_{arg}.bin"

    def writer(self, arg: int, byte: int) -> tuple[int | None, str | None, int | None]:
        """(block, file, line) of the last write to a byte of an output buffer."""
        path = self.outdir / f"writer_{arg}.bin"
        runs = np.fromfile(path, dtype=WRITER_RUN) if path.exists() else np.zeros(0, dtype=WRITER_RUN)
        k = int(np.searchsorted(runs["start"], byte, side="right")) - 1
        if k < 0 or byte >= runs["start"][k] + runs["length"][k]:
            return None, None, None
        w = int(runs["writer"][k])
        if not w:
            return None, None, None
        file, line = self.locs.get(w >> 12, (None, None))
        return (w & 0xFFF) - 1, file, line


def write_manifest(path: Path, trial: dict, outdir: Path, ub: tuple[int, int], trace: bool, arrays: Path) -> None:
    rows = [f"block_dim\t{trial['block_dim']}", f"trace\t{1 if trace else 0}", f"outdir\t{outdir}",
            f"ub_bytes\t{ub[0]}", f"ub_reserved\t{ub[1]}"]
    for i, a in enumerate(trial["args"]):
        if a["kind"] == "tensor":
            name = a.get("name") or f"arg{i}"
            rows.append(f"buffer\t{i}\t{a['role']}\t{a['bytes']}\t{name}\t{arrays / Path(a['path']).name}")
        elif a["kind"] == "scalar":
            rows.append(f"scalar\t{i}\t{a['value']}")
        elif a["kind"] == "tiling":
            rows.extend(f"tiling\t{i}\t{k}\t{v}" for k, v in a["fields"].items())
    path.write_text("\n".join(rows) + "\n")


def _read_tsv(path: Path) -> list[list[str]]:
    try:
        return [ln.split("\t") for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return []


def run_trial(binary: Path, trial: dict, scratch: Path, index: int, ub: tuple[int, int], trace: bool,
              limits: SandboxLimits, stdout_limit: int) -> TrialRun:
    """Run one trial. `scratch` is this evaluation's sandbox root (already prepared)."""
    tdir = scratch / f"t{index}"
    if tdir.exists():
        shutil.rmtree(tdir)
    tdir.mkdir()
    arrays = tdir / "in"
    arrays.mkdir()
    for a in trial["args"]:
        if a["kind"] == "tensor":
            shutil.copyfile(a["path"], arrays / Path(a["path"]).name)
    write_manifest(tdir / "manifest.tsv", trial, tdir, ub, trace, arrays)
    prepare_scratch(tdir)
    res = run_sandboxed([str(binary), str(tdir / "manifest.tsv")], tdir, limits, stdout_limit)
    faults = [Fault(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), r[6])
              for r in _read_tsv(tdir / "faults.tsv") + _read_tsv(tdir / "crash.tsv") if len(r) >= 7]
    locs = {int(r[0]): (r[2], int(r[1])) for r in _read_tsv(tdir / "locs.tsv") if len(r) >= 3}
    return TrialRun(
        result=res,
        faults=faults,
        aborted=res.returncode == 3,
        finished=(tdir / "done").exists(),
        outdir=tdir,
        locs=locs,
    )
