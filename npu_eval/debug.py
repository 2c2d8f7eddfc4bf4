"""Debug one block of a task's kernel in gdb: the CPU-debug workflow CANN users know (the kernel
built for the host with `-g -O0` and run as a process), without CANN.

`prepare` runs an evaluation's stages up to the build (check, plan, API check, entry), builds
the harness for gdb (`SimBackend(debug=True)`: `-g -O0`, no prebuilt parts) and lays out a
folder gdb runs from: the harness, trial 0's inputs and manifest, and a gdb script for the
emulator's types. The target's stop is the entry's first statement when `block_idx` is the
block asked for; the harness runs the blocks one after another, so it is hit once, with the
earlier blocks' writes to global memory done. The kernel is included by its own path (a `.asc`
file's kernel part under `#line` naming it), so breakpoints on the user's lines work and `list`
shows the user's code.

`prepare_program` does the same for a whole program (`sage-npu run --debug`): built with `-g
-O0`, run in the current directory as it would run on its own, stopped at every kernel entry of
its sources in the block asked for, in each launch.

The debug run itself is not confined (docs/security.md says why): it is the user's own kernel
run under the user's debugger, which needs ptrace, what the sandbox's filter forbids. Only the
plan (host.py, reference.py) runs here, confined as in every evaluation; the kernel runs when
the user starts gdb.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval.backends import BuildFailed
from sage_npu.npu_eval.backends.sim import SimBackend
from sage_npu.npu_eval.launch_plan import TrialPlan
from sage_npu.npu_eval.plan_client import PlanWorker
from sage_npu.npu_eval.program import build_program
from sage_npu.npu_eval.report import Diagnostic, diagnostic
from sage_npu.npu_eval.run import write_manifest
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import find_entries
from sage_npu.npu_eval.stages import StageFailure, ready_to_build
from sage_npu.npu_eval.task import Task

DEBUG_FOLDER = Path(".sage") / "debug"  # under the task: where `prepare` lays out a debug run by default
SCRIPT = "sage.gdb"
MANIFEST = "manifest.tsv"


@dataclass(frozen=True)
class DebugStop:
    """Where the debugger stops: the entry's first statement, in the block the condition names."""

    file: str
    line: int
    condition: str   # a gdb expression: `::block_idx == N` (the global, not a kernel local of that name)


@dataclass(frozen=True)
class DebugTarget:
    """A task built for gdb, ready to run: the program, its arguments, and where it stops."""

    task: Path
    entry: str           # the entry's qualified name
    block: int
    block_dim: int
    folder: Path         # holds the program, the manifest, the inputs and the gdb script
    program: Path
    args: list[str]
    script: Path         # gdb settings for the emulator's types (GDB_SCRIPT)
    stop: DebugStop

    def gdb_argv(self, gdb: str = "gdb") -> list[str]:
        """gdb on the program, run to the stop (its prompt then waits for the user)."""
        return gdb_argv(gdb, self.script, [self.stop], self.program, self.args)


@dataclass(frozen=True)
class ProgramDebug:
    """A whole program (`sage-npu run --debug`) built for gdb: it runs in the current directory,
    as the program would on its own, and stops at every kernel entry in the block asked for."""

    program: Path
    args: list[str]
    script: Path
    stops: list[DebugStop]    # one per __global__ entry of the program's sources

    def gdb_argv(self, gdb: str = "gdb") -> list[str]:
        return gdb_argv(gdb, self.script, self.stops, self.program, self.args)


def gdb_argv(gdb: str, script: Path, stops: list[DebugStop], program: Path, args: list[str]) -> list[str]:
    """gdb with the emulator's script, the stops, and `program args` run to the first stop."""
    breaks = [x for s in stops for x in ("-ex", break_command(s))]
    return [gdb, "-q", "-x", str(script), *breaks, "-ex", "run", "--args", str(program), *args]


def block_condition(block: int) -> str:
    return f"::block_idx == {block}"


def break_command(stop: DebugStop) -> str:
    """The gdb command that sets the stop."""
    where = stop.file.replace("\\", "\\\\").replace('"', '\\"')
    return f'break "{where}":{stop.line} if {stop.condition}'


# Loaded before the run (`-x`, or a VS Code launch's setupCommands). A GM_ADDR is a byte pointer
# into device memory, which gdb would print as a string of raw bytes: the address says more.
GDB_SCRIPT = """# Written by sage-npu for debugging a kernel on the CPU emulator.
set breakpoint pending off
python
def _sage_gm_addr(value):
    return _SageAddress(value) if value.type.name == "GM_ADDR" else None
class _SageAddress:
    def __init__(self, value):
        self.value = value
    def to_string(self):
        return hex(int(self.value))
gdb.pretty_printers.append(_sage_gm_addr)
end
"""


def prepare(task: Task, settings: EvalSettings, worker: PlanWorker, block: int, folder: Path,
            scratch: Path) -> DebugTarget | StageFailure:
    """Plan and build `task` for gdb and lay the run out in `folder` (replaced); `scratch` is a
    temporary folder for the plan and the build. A failure is the stage's, with its diagnostics
    on the user's lines, or why block `block` cannot be debugged."""
    kernel = str(task.kernel)
    if not task.runnable:
        return _refused(task, "debugging runs the task: add host.py and reference.py beside the kernel "
                              "(the task format: docs/task-format.md)")
    if settings.backend == "ascend":  # auto debugs on the emulator, always there
        return _refused(task, "debugging runs on the CPU emulator: use the sim backend")
    backend = SimBackend(settings, scratch, debug=True)
    ready = ready_to_build(task, settings, worker, backend, scratch / "plan")
    if isinstance(ready, StageFailure):
        return ready
    plan, chip, entry = ready.planned.plan, ready.chip, ready.entry
    dim = plan.first.block_dim
    if not 0 <= block < dim:
        return StageFailure("harness_error", [diagnostic(
            plan.first.launch_file, plan.first.launch_line, "error", "host-error",
            f"there is no block {block} to debug: the launch runs blocks 0 to {dim - 1} (block_dim {dim})")])
    binary = backend.build(task, entry, plan, chip)
    if isinstance(binary, BuildFailed):
        return StageFailure(binary.status, binary.diagnostics)
    stop = DebugStop(kernel, entry.body_line, block_condition(block))
    _lay_out(folder, binary.path, plan.first, [p.name for p in entry.params], (chip.ub_bytes, chip.ub_reserved_bytes))
    (folder / SCRIPT).write_text(GDB_SCRIPT)
    return DebugTarget(task.root, entry.qualified, block, dim, folder, folder / "harness", [str(folder / MANIFEST)],
                       folder / SCRIPT, stop)


def prepare_program(sources: list[Path], args: list[str], settings: EvalSettings, defines: dict[str, str],
                    block: int, folder: Path) -> ProgramDebug | list[Diagnostic]:
    """Build a whole program for gdb into `folder`, stopping at each kernel entry of its sources
    in `block`; or the compile errors (or the want of an entry) as diagnostics."""
    built = build_program(sources, settings, defines, debug=True)
    if built.binary is None:
        return built.diagnostics
    condition = block_condition(block)
    stops = [DebugStop(str(p.resolve()), e.body_line, condition) for p in sources for e in find_entries(p.read_bytes())]
    if not stops:
        return [diagnostic(str(sources[0].resolve()), 1, "error", "task-error",
                           "no __global__ kernel entry in the program's sources: nothing to stop at")]
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / (sources[0].stem or "program")
    shutil.copy2(built.binary, program)
    (folder / SCRIPT).write_text(GDB_SCRIPT)
    return ProgramDebug(program, args, folder / SCRIPT, stops)


def _lay_out(folder: Path, binary: Path, trial: TrialPlan, names: list[str], ub: tuple[int, int]) -> None:
    """The harness, trial 0's inputs and its manifest in `folder`; the run writes its outputs there too."""
    shutil.rmtree(folder, ignore_errors=True)
    inputs = folder / "in"
    inputs.mkdir(parents=True)
    shutil.copy2(binary, folder / "harness")
    for a in trial.tensors:
        shutil.copyfile(a.path, inputs / Path(a.path).name)
    write_manifest(folder / MANIFEST, trial, names, folder, ub, trace=False, arrays=inputs)


def _refused(task: Task, why: str) -> StageFailure:
    return StageFailure("harness_error", [diagnostic(str(task.kernel), 1, "error", "task-error", why)])


def command_line(argv: list[str]) -> str:
    """`argv` as one shell line, for messages that tell the user what to type."""
    return shlex.join(argv)
