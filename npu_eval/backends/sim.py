"""The `sim` backend: the CPU emulator. Build = generate the C++ harness for the entry and
compile it with the kernel against sim/include (cached); run = the harness in the sandbox,
one folder per trial; measure = the cost model on trial 0's trace."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from sage_npu.npu_eval import harness
from sage_npu.npu_eval.backends import Binary, BuildFailed, Measured
from sage_npu.npu_eval.build import (
    BuildCache,
    PathMap,
    build,
    compile_flags,
    coop_define,
    default_cache_dir,
    neutral_paths,
)
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.host_split import kernel_part
from sage_npu.npu_eval.launch_plan import LaunchArg, LaunchPlan, TensorArg, TrialPlan
from sage_npu.npu_eval.prebuilt import prebuilt
from sage_npu.npu_eval.report import Diagnostic, diagnostic
from sage_npu.npu_eval.run import TrialRun, run_trial
from sage_npu.npu_eval.sandbox import SandboxLimits, prepare_scratch
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import Entry
from sage_npu.npu_eval.task import Task
from sage_npu.npu_eval.timing import LaunchSite, costs_for, estimate_launch

# C++ element types of the op build's DTYPE_<NAME> macros.
CTYPES = {"float16": "half", "bfloat16": "bfloat16_t", "float32": "float", "float64": "double", "int8": "int8_t",
          "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "bool": "bool"}


def dtype_defines(src: bytes, entry: Entry, args: list[LaunchArg]) -> dict[str, str]:
    """A framework kernel's `DTYPE_X`-style macros, as the op build would define them: for each
    tensor parameter, DTYPE_<NAME> is its element type (Launch(defines=...) wins over these)."""
    if b"DTYPE_" not in src:
        return {}
    return {f"DTYPE_{param.name.upper()}": CTYPES[arg.dtype]
            for param, arg in zip(entry.params, args, strict=False) if isinstance(arg, TensorArg) and param.name}


class SimBackend:
    """One evaluation on the emulator, its trials run under `scratch/run`. With `debug`, builds are
    made for gdb: `-O0 -g`, without the prebuilt emulator parts (they carry no debugging
    information), so every frame, the emulator's included, has its source lines."""

    name = "sim"

    def __init__(self, settings: EvalSettings, scratch: Path, debug: bool = False,
                 stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.debug = debug
        self.stop = stop  # set: a build under way is killed (build.BuildCancelled)
        self.rundir = scratch / "run"
        self.cache_dir = settings.cache_dir or default_cache_dir()
        self._limits = SandboxLimits()

    def prepare(self, task: Task, chip: ChipProfile) -> None:
        """The prebuilt emulator parts for the flags this task will most likely build with (the
        chip asked for, no plan defines): if missing, a detached process starts making them while
        the plan runs."""
        if not self.settings.prebuilt or self.debug:
            return
        try:
            flags = compile_flags(chip, self.settings.opt_level, coop_define(task.kernel.read_bytes()))
        except OSError:
            return
        s = self.settings
        prebuilt(self.cache_dir, s.cxx, flags, s.compile_timeout_s)  # starts making it if missing

    def build(self, task: Task, entry: Entry, plan: LaunchPlan, chip: ChipProfile) -> Binary | BuildFailed:
        """The harness for `entry`, compiled (cached). The task's folder is compiled under a
        neutral name (build.neutral_paths; a gdb build keeps the real one), so the same task
        copied elsewhere reuses the build; the Binary carries the names to map back."""
        s, first, kernel_call = self.settings, plan.first, plan.signature.kernel
        kernel = str(task.kernel.resolve())
        paths = PathMap() if self.debug else neutral_paths([kernel])
        src = task.kernel.read_bytes()
        defines = {**dtype_defines(src, entry, first.args), **plan.signature.defines}
        # The kernel type is read from the `#if` branches these defines select (a RATIO define may pick it).
        defines.update(coop_define(src, defines=defines))
        tiling = {k: defines.pop(k) for k in harness.TILING_DEFINES if k in defines}
        try:
            part = kernel_part(task.kernel, self.cache_dir, None if self.debug else paths.to_neutral(kernel))
            source = harness.generate(part, entry, kernel_call, first.args, first.launch_file, first.launch_line,
                                      tiling)
        except harness.HarnessError as e:
            return BuildFailed("harness_error", [diagnostic(e.file or first.launch_file, e.line or first.launch_line,
                                                            "error", "host-error", e.message)])
        # host.py's lines in the harness (#line directives) by their neutral names too.
        source = "\n".join(paths.to_neutral(ln) if ln.startswith("#line") else ln for ln in source.split("\n"))
        flags = compile_flags(chip, "-O0" if self.debug else s.opt_level, defines, debug=self.debug)
        flags += ["-iquote", str(task.root)]   # the kernel's own headers, also from its split kernel part
        use_prebuilt = s.prebuilt and not self.debug
        parts = prebuilt(self.cache_dir, s.cxx, flags, s.compile_timeout_s) if use_prebuilt else None
        built = build(source, flags, s.cxx, BuildCache(self.cache_dir, s.build_cache_mb << 20), task.user_files(),
                      (str(task.kernel), entry.line), s.compile_timeout_s, parts, paths=paths, stop=self.stop)
        if not built.ok or built.binary is None:
            return BuildFailed("compile_error", [diagnostic(d.file, d.line, d.severity, d.code, d.message, d.column)
                                                 for d in built.diagnostics], built.seconds)
        self._prepare(built.binary, plan)
        return Binary(self.rundir / "harness", chip, built.seconds, built.cached, paths)

    def _prepare(self, built: Path, plan: LaunchPlan) -> None:
        """The sandbox's folder with the binary, and limits sized for the largest buffer."""
        self.rundir.mkdir()
        shutil.copy2(built, self.rundir / "harness")
        prepare_scratch(self.rundir)
        largest = max((a.bytes for t in plan.trials for a in t.tensors), default=0)
        s = self.settings
        self._limits = SandboxLimits(timeout_s=s.run_timeout_s, memory_bytes=s.memory_limit_mb << 20,
                                     file_bytes=max(256 << 20, largest * 8))

    def run(self, binary: Binary, trial: TrialPlan, index: int, names: list[str], trace: bool) -> TrialRun:
        ub = (binary.chip.ub_bytes, binary.chip.ub_reserved_bytes)
        return run_trial(binary.path, trial, names, self.rundir, index, ub, trace=trace, limits=self._limits,
                         stdout_limit=self.settings.stdout_limit, paths=binary.paths, values=self.settings.check)

    def measure(self, run: TrialRun, trial: TrialPlan, chip: ChipProfile, diags: dict[tuple, Diagnostic],
                trace_out: Path | None) -> Measured:
        site = LaunchSite(trial.block_dim, trial.launch_file or "", trial.launch_line or 1,
                          out_bytes=sum(a.bytes for a in trial.tensors if a.role == "out"))
        timing, trace = estimate_launch(run.outdir, site, chip, costs_for(self.settings, chip), diags, trace_out,
                                        paths=run.paths)
        return Measured(timing, trace)


def open_backend(settings: EvalSettings, scratch: Path) -> SimBackend:
    return SimBackend(settings, scratch)
