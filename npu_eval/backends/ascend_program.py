"""`sage-npu run --backend ascend`: a whole program (an `.asc` file, or sources with an ACL host
main and `<<<>>>` launches) built with `bisheng -xasc --npu-arch=...` as asc-devkit's samples are,
and run on the NPU in the sandbox, with the working folder mirrored in and out as on the
emulator. Its report is the program report with `backend: "ascend"`: compile errors at their
lines, the program's exit code, a device fault at `main`; no per-launch estimates (msprof is
the device's profiler: `msprof op` the built program yourself, docs/device.md).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from sage_npu.npu_eval import scratch as scratch_dirs
from sage_npu.npu_eval.backends import device_setup
from sage_npu.npu_eval.backends.ascend import AscendBackend, compile_diagnostics, device_faults
from sage_npu.npu_eval.program import ProgramError, ProgramReport, mirror_in, mirror_out
from sage_npu.npu_eval.report import diagnostic
from sage_npu.npu_eval.sandbox import SandboxLimits, prepare_scratch, run_sandboxed
from sage_npu.npu_eval.settings import DEFAULT_TIMEOUT_S, EvalSettings


def _main_line(path: Path) -> int:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return 1
    return next((i for i, ln in enumerate(lines, 1) if " main(" in ln or ln.startswith("main(")), 1)


def run_device_program(sources: list[Path], args: list[str], settings: EvalSettings, cwd: Path,
                       timeout_s: float | None) -> ProgramReport:
    """Build `sources` with bisheng and run the program on the NPU; `cwd` is mirrored in and out."""
    setup = device_setup()
    why = setup.reason()
    if why is not None:
        raise ProgramError(why)
    program = sources[0].resolve()
    scratch = scratch_dirs.make("run")
    scratch.chmod(0o711)
    backend = AscendBackend(settings, scratch, setup)

    def report(**fields) -> ProgramReport:
        return ProgramReport(program=str(program), sources=[str(p.resolve()) for p in sources], args=args,
                             chip=setup.chip or settings.chip, backend="ascend", **fields)

    try:
        binary = scratch / "bin" / (program.stem or "program")
        binary.parent.mkdir()
        flags = backend.flags({}, program.parent)
        t0 = time.monotonic()
        p = subprocess.run([str(setup.bisheng), *flags, *map(str, sources), "-o", str(binary)], capture_output=True,
                           text=True, timeout=settings.compile_timeout_s)
        built_s = round(time.monotonic() - t0, 3)
        if p.returncode != 0 or not binary.is_file():
            user = {str(s.resolve()) for s in sources}
            diags = compile_diagnostics(p.stderr + p.stdout, user, (str(program), _main_line(program)))
            return report(status="compile_error", exit_code=1, diagnostics=diags, build_seconds=built_s)
        work = scratch / "work"
        before = mirror_in(cwd, work)
        prepare_scratch(scratch)
        limits = SandboxLimits(timeout_s=timeout_s or DEFAULT_TIMEOUT_S, memory_bytes=1 << 44, file_bytes=1 << 34,
                               seccomp=False, groups=backend.groups())
        ran = run_sandboxed([str(binary), *args], work, limits, settings.stdout_limit, scratch=scratch,
                            env=backend.env(), show=(*backend.shown(), binary.parent))
        mirror_out(work, cwd, before)
        faults = device_faults(f"{ran.stdout}\n{ran.stderr}", str(program), _main_line(program))
        diags = [diagnostic(f.file, f.line, "error", f.code, f.message) for f in faults]
        status = ("timeout" if ran.timed_out else "faulted" if faults else "ok" if ran.returncode == 0 else
                  "crash" if ran.signal is not None else "failed")
        exit_code = ran.returncode if status in ("ok", "failed") else 1
        return report(status=status, exit_code=exit_code,
                      program_exit_code=ran.returncode if status in ("ok", "failed") else None,
                      diagnostics=diags, stdout=ran.stdout, stderr=ran.stderr, build_seconds=built_s,
                      run_seconds=round(ran.seconds, 3), protections=list(ran.protections))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

