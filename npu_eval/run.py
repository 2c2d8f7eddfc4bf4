"""The run stage: one trial of the built harness in the sandbox, and what it left behind
(outputs, faults at user lines, who wrote each output byte, the trace, the kernel's stdout)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.build import PathMap
from sage_npu.npu_eval.launch_plan import ScalarArg, TensorArg, TilingArg, TrialPlan
from sage_npu.npu_eval.sandbox import SandboxLimits, SandboxResult, prepare_scratch, run_sandboxed
from sage_npu.npu_eval.symbolize import CrashPc, function_at, short_name

# writer_<arg>.bin: runs of bytes with the same last writer, (location id << 12) | (block + 1).
_BLOCK_MASK = (1 << protocol.WRITER_BLOCK_BITS) - 1
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
    function: str = ""  # a crash or timeout before the block's first Ascend C call: where it was


@dataclass
class TrialRun:
    result: SandboxResult
    faults: list[Fault]
    aborted: bool                 # a fault stopped the kernel
    finished: bool                # the harness got to the end and wrote its outputs
    outdir: Path
    locs: dict[int, tuple[str, int]] = field(default_factory=dict)
    paths: PathMap = field(default_factory=PathMap)  # the build's neutral names (faults and locs are mapped back)

    def output(self, arg: int) -> Path:
        return self.outdir / f"{protocol.OUTPUT_PREFIX}{arg}.bin"

    def writer(self, arg: int, byte: int) -> tuple[int | None, str | None, int | None]:
        """(block, file, line) of the last write to a byte of an output buffer."""
        path = self.outdir / f"{protocol.WRITER_PREFIX}{arg}.bin"
        runs = np.fromfile(path, dtype=WRITER_RUN) if path.exists() else np.zeros(0, dtype=WRITER_RUN)
        k = int(np.searchsorted(runs["start"], byte, side="right")) - 1
        if k < 0 or byte >= runs["start"][k] + runs["length"][k]:
            return None, None, None
        w = int(runs["writer"][k])
        if not w:
            return None, None, None
        file, line = self.locs.get(w >> protocol.WRITER_BLOCK_BITS, (None, None))
        return (w & _BLOCK_MASK) - 1, file, line


def write_manifest(path: Path, trial: TrialPlan, names: list[str], outdir: Path, ub: tuple[int, int], trace: bool,
                   arrays: Path, values: bool = True) -> None:
    """The harness's input (harness.h, Manifest::load); `names` are the entry's parameter names;
    `values` false: an estimate-only run (the cube's arithmetic skipped, no outputs written)."""
    rows = [f"block_dim\t{trial.block_dim}", f"trace\t{1 if trace else 0}", f"outdir\t{outdir}",
            f"ub_bytes\t{ub[0]}", f"ub_reserved\t{ub[1]}", f"values\t{1 if values else 0}"]
    if trial.tiling_key is not None:
        rows.append(f"tiling_key\t{trial.tiling_key}")
    for i, a in enumerate(trial.args):
        if isinstance(a, TensorArg):
            name = (names[i] if i < len(names) else "") or f"arg{i}"
            rows.append(f"buffer\t{i}\t{a.role}\t{a.bytes}\t{name}\t{arrays / Path(a.path).name}")
        elif isinstance(a, ScalarArg):
            rows.append(f"scalar\t{i}\t{a.value}")
        elif isinstance(a, TilingArg):
            rows.extend(f"tiling\t{i}\t{k}\t{v}" for k, v in a.fields.items())
    path.write_text("\n".join(rows) + "\n")


def _read_tsv(path: Path) -> list[list[str]]:
    try:
        return [ln.split("\t") for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return []


def read_faults(tdir: Path, binary: Path, paths: PathMap | None = None) -> list[Fault]:
    """The findings a run left (faults.tsv, crash.tsv), their files and messages back in the
    user's folder (`paths`: the build's neutral names). A crash or timeout before the block's
    first Ascend C call has no line; it gets the name of the function it was in, when the
    program counter the harness recorded falls in the kernel binary."""
    paths = paths or PathMap()
    rows = [r for r in _read_tsv(tdir / protocol.FAULTS) + _read_tsv(tdir / protocol.CRASH)
            if len(r) >= len(protocol.FAULT_COLUMNS)]
    where = next((CrashPc.parse(r[6]) for r in rows if r[0] == protocol.CRASH_PC), None)
    function = function_at(binary, where) if where else None
    faults = []
    for r in rows:
        if r[0] == protocol.CRASH_PC:
            continue
        f = Fault(r[0], r[1], paths.to_real(r[2]), int(r[3]), int(r[4]), int(r[5]), paths.to_real(r[6]))
        if function and f.line == 0 and f.code in ("crash", "timeout"):
            f.function = short_name(function)
        faults.append(f)
    return faults


def run_trial(binary: Path, trial: TrialPlan, names: list[str], scratch: Path, index: int, ub: tuple[int, int],
              trace: bool, limits: SandboxLimits, stdout_limit: int, paths: PathMap | None = None,
              values: bool = True) -> TrialRun:
    """Run one trial. `scratch` is this evaluation's sandbox root (already prepared); `paths`
    are the neutral names the binary was built under; `values` false: estimate only (write_manifest)."""
    paths = paths or PathMap()
    tdir = scratch / f"t{index}"
    if tdir.exists():
        shutil.rmtree(tdir)
    tdir.mkdir()
    arrays = tdir / "in"
    arrays.mkdir()
    for a in trial.tensors:
        shutil.copyfile(a.path, arrays / Path(a.path).name)
    manifest = tdir / protocol.MANIFEST
    write_manifest(manifest, trial, names, tdir, ub, trace, arrays, values)
    prepare_scratch(tdir)
    res = run_sandboxed([str(binary), str(manifest)], tdir, limits, stdout_limit)
    faults = read_faults(tdir, binary, paths)
    locs = {int(r[0]): (paths.to_real(r[2]), int(r[1])) for r in _read_tsv(tdir / protocol.LOCS) if len(r) >= 3}
    return TrialRun(
        result=res,
        faults=faults,
        aborted=res.returncode == protocol.EXIT_ABORTED,
        finished=(tdir / protocol.DONE).exists(),
        outdir=tdir,
        locs=locs,
        paths=paths,
    )
