"""The `ascend` backend: CANN's bisheng and an NPU. Build = the device launcher
(ascend_launcher.py) compiled with `bisheng -xasc --npu-arch=<the NPU's>` and linked against
ACL (cached by content); run = the launcher in the sandbox, one folder per trial, trial 0
under `msprof op` (or every trial under `mssanitizer --tool=memcheck` with --sanitize);
measure = msprof's OpBasicInfo and PipeUtilization (msprof.py) as a measured Timing.

Device faults (EZ9999, an aivec/aicore exception, a failed synchronize) become a runtime_error
at the kernel entry, or at the line mssanitizer names. docs/device.md has the recipe, the
files read and what is verified only against fakes of the tools.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import time
from pathlib import Path

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.backends import Binary, BuildFailed, Measured, device_setup, msprof
from sage_npu.npu_eval.backends import ascend_launcher as launcher
from sage_npu.npu_eval.backends.ascend_env import DeviceSetup, driver_gid
from sage_npu.npu_eval.backends.sim import dtype_defines
from sage_npu.npu_eval.build import default_cache_dir
from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.harness import HarnessError
from sage_npu.npu_eval.launch_plan import LaunchPlan, TrialPlan
from sage_npu.npu_eval.report import Diagnostic, HotLine, diagnostic
from sage_npu.npu_eval.run import Fault, TrialRun, write_manifest
from sage_npu.npu_eval.sandbox import SandboxLimits, SandboxResult, prepare_scratch, run_sandboxed
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.signature import Entry
from sage_npu.npu_eval.task import Task

# ACL, the runtime and the tiling/platform libraries the launcher links (as MultiKernelBench's
# direct-launch build does, less torch).
LIBS = ("ascendcl", "runtime", "tiling_api", "platform", "ascendc_runtime", "m", "dl")
PROFILE_DIR = "msprof"        # trial 0's `msprof op --output` folder, in its trial folder
WARM_UP = 5
SIM_LAUNCHER = "launcher_sim"  # the -g twin linked against the simulator runtime
DRIVER = "/usr/local/Ascend/driver"
# The forms a device fault takes in CANN's log and the runtime's errors (docs/device.md).
_FAULT = re.compile(r"EZ9999|aivec error|aicore error|vector core exception|retCode=0x[0-9a-fA-F]+|"
                    r"rtStreamSynchronize[^\n]*failed|aclrtSynchronizeStream[^\n]*failed|ACL error 5070\d\d",
                    re.IGNORECASE)
# clang's diagnostics, which bisheng prints: file:line:col: error: message
_CLANG = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+):\s+(?P<kind>fatal error|error):\s*(?P<msg>.*)$")
# mssanitizer's report, three lines a finding ("====== ERROR: illegel read of size 100", "====== at
# 0x124040017f9c on GM", "====== code in add_custom.cpp:52"; a multi-core overlap says "WARNNING: out of bounds").
_SAN_HEAD = re.compile(r"^=+\s*(?:ERROR|WARNN?ING):\s*(?P<what>.+?)\s*$")
_SAN_AT = re.compile(r"^=+\s*at 0x[0-9a-fA-F]+ on (?P<space>\w+)")
_SAN_CODE = re.compile(r"^=+\s*code in (?P<file>\S+?):(?P<line>\d+)")

def compile_diagnostics(output: str, user_files: set[str], fallback: tuple[str, int]) -> list[Diagnostic]:
    """bisheng's errors on the user's lines (one per place and message); an error in CANN's
    headers or the launcher goes to `fallback` (the kernel entry) with its own location."""
    out: dict[tuple, Diagnostic] = {}
    for raw in output.splitlines():
        m = _CLANG.match(raw.strip())
        if not m:
            continue
        file, line, col, msg = m.group("file"), int(m.group("line")), int(m.group("col")), m.group("msg")
        try:
            mine = str(Path(file).resolve()) in user_files
        except OSError:
            mine = False
        if not mine:
            msg = f"{msg} (in {Path(file).name}:{line})"
            file, line, col = fallback[0], fallback[1], 1
        out.setdefault((file, line, msg), diagnostic(file, line, "error", "compile-error", msg, col))
    if not out and output.strip():
        last = output.strip().splitlines()[-1][:400]
        out[("",)] = diagnostic(fallback[0], fallback[1], "error", "compile-error", f"bisheng failed: {last}")
    return list(out.values())


def device_faults(text: str, kernel: str, entry_line: int) -> list[Fault]:
    """A device fault in the run's output, at the entry (the device says no line without -g)."""
    hits = [ln.strip() for ln in text.splitlines() if _FAULT.search(ln)]
    if not hits:
        return []
    said = "; ".join(dict.fromkeys(hits))[:500]
    return [Fault("crash", "error", kernel, entry_line, 0, 1, f"the NPU reported a fault while the kernel ran: {said}")]


def _sanitizer_code(what: str, space: str) -> str:
    what = what.lower()
    if "align" in what:
        return "unaligned-copy"
    if "out of bounds" in what:  # one core touching memory another core owns
        return "gm-race"
    if "uninitiali" in what:
        return "uninitialized-gm-read" if space == "GM" else "uninitialized-read"
    return "gm-out-of-bounds" if space in ("GM", "") else "ub-out-of-bounds"


def _user_file(name: str, user_files: set[str], kernel: str) -> str:
    """mssanitizer names a file as it was compiled (often just its name): the user's file it is."""
    if name in user_files:
        return name
    return next((f for f in sorted(user_files) if Path(f).name == Path(name).name), kernel)


def sanitizer_faults(text: str, user_files: set[str], kernel: str) -> list[Fault]:
    """mssanitizer --tool=memcheck's findings, each at the line its `code in` names."""
    faults: list[Fault] = []
    what, space = None, ""
    for raw in text.splitlines():
        ln = raw.strip()
        if m := _SAN_HEAD.match(ln):
            what, space = m.group("what"), ""
        elif (m := _SAN_AT.match(ln)) and what:
            space = m.group("space").upper()
        elif (m := _SAN_CODE.match(ln)) and what:
            where = _user_file(m.group("file"), user_files, kernel)
            said = f"mssanitizer memcheck: {what}" + (f" on {space}" if space else "")
            faults.append(Fault(_sanitizer_code(what, space), "error", where, int(m.group("line")), 0, 1, said))
            what = None
    return faults

class AscendBackend:
    """One evaluation on the NPU, its trials run under `scratch/run`."""

    name = "ascend"

    def __init__(self, settings: EvalSettings, scratch: Path, setup: DeviceSetup | None = None) -> None:
        self.settings = settings
        self.setup = setup or device_setup()
        self.rundir = scratch / "run"
        self.cache_dir = (settings.cache_dir or default_cache_dir()) / "ascend"
        self._kernel, self._entry_line, self._entry_name = "", 1, ""
        self._user_files: set[str] = set()

    def prepare(self, task: Task, chip: ChipProfile) -> None:
        """Nothing to start ahead: bisheng builds the kernel and its launcher in one step."""

    def flags(self, defines: dict[str, str], root: Path, simulator: bool = False) -> list[str]:
        """bisheng's flags; `simulator`: the -g twin linked against CANN's simulator runtime
        (runtime_camodel) for `msprof op simulator`."""
        s, home = self.setup, self.setup.home or Path("/")
        opt = ["-g", "-O2"] if simulator else ["--sanitizer", "-g", "-O0"] if self.settings.sanitize else ["-O2"]
        libs = [("runtime_camodel" if simulator and lib == "runtime" else lib) for lib in LIBS]
        dirs = [s.simulator, home / "lib64"] if simulator and s.simulator else [home / "lib64"]
        return ["-xasc", f"--npu-arch={s.arch}", "-std=c++17", "-fPIC", *opt, "-DASCENDC_DUMP=0",
                *(f"-D{k}={v}" for k, v in sorted(defines.items())), "-I", str(root), "-I", str(home / "include"),
                *(x for d in dirs for x in ("-L", str(d), f"-Wl,-rpath,{d}")), *(f"-l{lib}" for lib in libs)]

    def build(self, task: Task, entry: Entry, plan: LaunchPlan, chip: ChipProfile) -> Binary | BuildFailed:
        first = plan.first
        self._kernel, self._entry_line, self._entry_name = str(task.kernel), entry.line, entry.name
        self._user_files = task.user_files()
        try:
            source = launcher.generate(str(task.kernel.resolve()), entry, plan.signature.kernel, first.args,
                                       first.launch_file, first.launch_line)
        except HarnessError as e:
            return BuildFailed("harness_error", [diagnostic(e.file or first.launch_file, e.line or first.launch_line,
                                                            "error", "host-error", e.message)])
        src = task.kernel.read_bytes()
        defines = {**dtype_defines(src, entry, first.args), **plan.signature.defines}
        flags = self.flags(defines, task.root)
        t0 = time.monotonic()
        built = self._cached(source, flags, task)
        if isinstance(built, BuildFailed):
            return built
        path, cached = built
        self.rundir.mkdir()
        shutil.copy2(path, self.rundir / "launcher")
        if self.settings.line_profile and self.setup.simulator is not None and not self.settings.sanitize:
            twin = self._cached(source, self.flags(defines, task.root, simulator=True), task)
            if not isinstance(twin, BuildFailed):  # without it, measure() says there are no per-line times
                shutil.copy2(twin[0], self.rundir / SIM_LAUNCHER)
        prepare_scratch(self.rundir)
        return Binary(self.rundir / "launcher", chip, time.monotonic() - t0, cached)

    def _cached(self, source: str, flags: list[str], task: Task) -> tuple[Path, bool] | BuildFailed:
        """The launcher built from `source` (and the task's files as they are now), from the cache
        when an identical build was made before."""
        h = hashlib.sha256("\0".join([source, str(self.setup.bisheng), *flags]).encode())
        for f in sorted(task.user_files()):
            try:
                h.update(Path(f).read_bytes())
            except OSError:
                continue
        folder = self.cache_dir / h.hexdigest()[:32]
        binary = folder / "launcher"
        if binary.is_file():
            return binary, True
        folder.mkdir(parents=True, exist_ok=True)
        (folder / launcher.LAUNCHER_NAME).write_text(source)
        argv = [str(self.setup.bisheng), *flags, str(folder / launcher.LAUNCHER_NAME), "-o", str(binary) + ".tmp"]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=self.settings.compile_timeout_s,
                               cwd=folder)
        except subprocess.TimeoutExpired:
            return BuildFailed("compile_error", [diagnostic(self._kernel, self._entry_line, "error", "compile-error",
                                                            f"bisheng ran past {self.settings.compile_timeout_s:g} s")])
        if p.returncode != 0 or not Path(str(binary) + ".tmp").is_file():
            diags = compile_diagnostics(p.stderr + p.stdout, self._user_files, (self._kernel, self._entry_line))
            return BuildFailed("compile_error", diags)
        Path(str(binary) + ".tmp").replace(binary)
        return binary, False

    def env(self) -> dict[str, str]:
        """What the launcher needs to find CANN and the driver in the sandbox's clean environment;
        errors of the runtime are printed, so device faults are read from the run's output."""
        home = str(self.setup.home)
        driver = f"{DRIVER}/lib64"
        return {"ASCEND_HOME_PATH": home, "ASCEND_TOOLKIT_HOME": home, "ASCEND_OPP_PATH": f"{home}/opp",
                "LD_LIBRARY_PATH": f"{home}/lib64:{driver}:{driver}/common:{driver}/driver",
                "PATH": f"{home}/bin:/usr/bin:/bin", "ASCEND_GLOBAL_LOG_LEVEL": "3",
                "ASCEND_SLOG_PRINT_TO_STDOUT": "1"}

    def shown(self) -> tuple[Path, ...]:
        """What the run reads beside its folder: CANN and the driver (a cover may hide CANN when it is
        installed under the home folder or /tmp)."""
        return tuple(p for p in (self.setup.home, Path(DRIVER)) if p is not None and p.is_dir())

    def groups(self) -> tuple[int, ...]:
        """As root the sandbox runs the launcher as an unprivileged user: in the driver's group, so
        it may open /dev/davinci*."""
        gid = driver_gid()
        return (gid,) if gid is not None else ()

    def argv(self, binary: Path, manifest: Path, tdir: Path, measure: bool) -> list[str]:
        s = self.setup
        if self.settings.sanitize and s.mssanitizer is not None:
            return [str(s.mssanitizer), "--tool=memcheck", str(binary), str(manifest)]
        if measure and s.msprof is not None:
            return [str(s.msprof), "op", f"--kernel-name={self._entry_name}", f"--warm-up={WARM_UP}",
                    "--aic-metrics=PipeUtilization", f"--output={tdir / PROFILE_DIR}", str(binary), str(manifest)]
        return [str(binary), str(manifest)]

    def run(self, binary: Binary, trial: TrialPlan, index: int, names: list[str], trace: bool) -> TrialRun:
        tdir = self.rundir / f"t{index}"
        if tdir.exists():
            shutil.rmtree(tdir)
        (tdir / "in").mkdir(parents=True)
        for a in trial.tensors:
            shutil.copyfile(a.path, tdir / "in" / Path(a.path).name)
        manifest = tdir / protocol.MANIFEST
        write_manifest(manifest, trial, names, tdir, (binary.chip.ub_bytes, binary.chip.ub_reserved_bytes), False,
                       tdir / "in")
        if trace:
            (tdir / PROFILE_DIR).mkdir()
        prepare_scratch(tdir)
        # No seccomp filter: the runtime drives the NPU through the driver's ioctls. The PID and
        # network namespaces, the limits and (as root) the read-only mounts (the device nodes stay
        # usable: no nodev) and the unprivileged user, in the driver's group, stay; ACL maps a
        # large address space, so the memory limit is the machine's.
        limits = SandboxLimits(timeout_s=self.settings.run_timeout_s * (4 if trace else 1), memory_bytes=1 << 44,
                               file_bytes=1 << 34, seccomp=False, groups=self.groups())
        res = run_sandboxed(self.argv(binary.path, manifest, tdir, trace), tdir, limits, self.settings.stdout_limit,
                            env=self.env(), show=(*self.shown(), binary.path.parent))
        return self._trial_run(res, tdir)

    def _trial_run(self, res: SandboxResult, tdir: Path) -> TrialRun:
        text = f"{res.stdout}\n{res.stderr}"
        faults = [*sanitizer_faults(text, self._user_files, self._kernel),
                  *device_faults(text, self._kernel, self._entry_line)]
        aborted = bool(faults) or res.returncode == launcher.EXIT_ACL_FAILED
        if aborted and not faults:
            said = res.stderr.strip().splitlines()[-1:] or ["no message"]
            faults = [Fault("crash", "error", self._kernel, self._entry_line, 0, 1,
                            f"an ACL call failed on the device: {said[0]}")]
        return TrialRun(result=res, faults=faults, aborted=aborted, finished=(tdir / protocol.DONE).exists(),
                        outdir=tdir)

    def measure(self, run: TrialRun, trial: TrialPlan, chip: ChipProfile, diags: dict[tuple, Diagnostic],
                trace_out: Path | None) -> Measured:
        folder = run.outdir / PROFILE_DIR
        try:
            m = msprof.read_opprof(msprof.latest_opprof(folder), self._entry_name)
        except msprof.ProfileError as e:
            why = "msprof is not installed" if self.setup.msprof is None else str(e)
            diags[("no-measurement",)] = diagnostic(self._kernel, self._entry_line, "info", "task-error",
                                                   f"no device time: {why}")
            return Measured(None)
        moved = sum(a.bytes for a in trial.tensors)
        hot = self._line_times(run, diags) if self.settings.line_profile else []
        return Measured(msprof.timing(m, moved / (chip.hbm_gbps * 1e3), hot))

    def _line_times(self, run: TrialRun, diags: dict[tuple, Diagnostic]) -> list[HotLine]:
        """Trial 0 again under `msprof op simulator` (the -g twin, its own output folder): the
        slowest core's time per line of the user's files."""
        twin, s = self.rundir / SIM_LAUNCHER, self.setup
        if not twin.is_file() or s.msprof is None or s.simulator is None or s.soc is None:
            diags[("no-line-times",)] = diagnostic(self._kernel, self._entry_line, "info", "task-error",
                                                   "no per-line device times: they need CANN's simulator for the "
                                                   "SoC (tools/simulator/<SoC>/lib) and a -g build of the kernel")
            return []
        sim_dir = run.outdir / "simulator"
        sim_dir.mkdir()
        manifest = sim_dir / protocol.MANIFEST
        manifest.write_text((run.outdir / protocol.MANIFEST).read_text().replace(
            f"outdir\t{run.outdir}\n", f"outdir\t{sim_dir}\n"))
        prepare_scratch(sim_dir)
        env = self.env()
        env["LD_LIBRARY_PATH"] = f"{s.simulator}:{env['LD_LIBRARY_PATH']}"
        argv = [str(s.msprof), "op", "simulator", f"--soc-version={s.soc}", f"--output={sim_dir / 'prof'}",
                str(twin), str(manifest)]
        limits = SandboxLimits(timeout_s=self.settings.run_timeout_s * 30, memory_bytes=1 << 44, file_bytes=1 << 34,
                               seccomp=False, groups=self.groups())
        run_sandboxed(argv, sim_dir, limits, self.settings.stdout_limit, env=env,
                      show=(*self.shown(), self.rundir, run.outdir))
        try:
            lines = msprof.code_lines(msprof.latest_opprof(sim_dir / "prof"), top=50)
        except msprof.ProfileError as e:
            diags[("no-line-times",)] = diagnostic(self._kernel, self._entry_line, "info", "task-error",
                                                   f"no per-line device times: {e}")
            return []
        mine = [h.model_copy(update={"file": _user_file(h.file, self._user_files, "")}) for h in lines]
        return [h for h in mine if h.file][:5]


def open_backend(settings: EvalSettings, scratch: Path) -> AscendBackend:
    return AscendBackend(settings, scratch)
