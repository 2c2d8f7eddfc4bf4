"""Settings of the evaluation part; the root package composes them into `Settings`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from sage_npu.npu_eval.chips import CHIPS, DEFAULT_CHIP

DEFAULT_TIMEOUT_S = 60.0  # wall-clock limit of a whole program's run (`sage-npu run`), unless --timeout


class EvalSettings(BaseModel):
    backend: Literal["sim", "ascend", "auto"] = Field(
        default="auto", description="sim: CPU emulator; ascend: CANN + NPU (docs/device.md); auto: ascend when CANN "
        "and an NPU are found, else sim")
    chip: str = Field(default=DEFAULT_CHIP, description="chip profile: " + ", ".join(CHIPS))
    trials: int = Field(default=5, ge=1, le=100, description="correctness trials, fresh inputs each")
    seed: int = Field(default=0, description="seed of the first trial's inputs")
    run_timeout_s: float = Field(default=10.0, gt=0, description="wall-clock limit of one kernel run")
    plan_timeout_s: float = Field(default=120.0, gt=0, description="limit for host.py and reference.py")
    compile_timeout_s: float = Field(default=120.0, gt=0, description="limit for one compile")
    memory_limit_mb: int = Field(default=4096, ge=256, description="address-space limit of a kernel run")
    plan_memory_limit_mb: int = Field(
        default=8192, ge=1024, description="address-space limit of host.py and reference.py"
    )
    stdout_limit: int = Field(default=64 * 1024, ge=0, description="bytes of kernel output kept in a report")
    host_allow_list: bool = Field(default=True, description="check host.py against the allow-list before it runs "
                                  "(it may only plan the launch; docs/task-format.md)")
    estimate: bool = Field(default=True, description="record the trace and run the cost model (timing, missing-sync)")
    advise: bool = Field(default=True, description="run the performance advisor on a correct (or estimate-only) "
                         "run: each finding re-estimates the kernel with its change, so it takes about twice the "
                         "estimate's time again")
    check: bool = Field(default=True, description="compute the kernel's values and check them against the "
                        "reference; false (eval --estimate-only, emulator only): one run with the cube's "
                        "arithmetic skipped and the reference's outputs only shaped, for the estimate at shapes "
                        "too large to emulate with values (no verdict; docs/cost-model.md, \"Estimate only\")")
    sanitize: bool = Field(default=False, description="ascend: build with --sanitizer -g and run each trial under "
                           "mssanitizer --tool=memcheck (its findings at their lines)")
    line_profile: bool = Field(default=False, description="ascend: also run msprof op simulator on a -g build "
                               "of trial 0 for per-line times (eval --profile sets it)")
    device_advice: bool = Field(default=True, description="ascend: also build the kernel for the emulator (while "
                                "the device runs the trials) and run trial 0 there when the device's verdict is "
                                "correct, for the advisor's findings (model estimates)")
    cxx: str = Field(default="g++", description="the C++ compiler")
    opt_level: str = Field(default="-O0", description="optimisation flag for kernel builds (-O0 builds fastest; "
                           "the bundled examples run as fast as at -O1)")
    prebuilt: bool = Field(default=True, description="compile the emulator header and runtime once per flag set and "
                           "reuse them (kernel builds then compile only the kernel's own code)")
    plan_cache: bool = Field(default=True, description="reuse the plan (host.py's launches, reference.py's arrays) "
                             "while the task's Python files and data are unchanged; kernel edits keep it")
    cache_dir: Path | None = Field(default=None, description="build cache; default under the user cache dir")
    build_cache_mb: int = Field(default=2048, ge=64, description="size bound of the build cache (binaries, "
                                "precompiled headers, kept plans); the least recently used go first")
    profile_dir: Path | None = Field(default=None, description="calibrated chip cost profiles; default under the user "
                                     "config dir")

    def resolved_profile_dir(self) -> Path:
        if self.profile_dir is not None:
            return self.profile_dir
        import platformdirs

        return Path(platformdirs.user_config_dir("sage-npu")) / "chips"

    def verifying(self) -> EvalSettings:
        """These settings with every value checked: what the editor's loop and the optimizer evaluate
        with, whatever `check` a settings file gives (a rewrite is verified or not shown)."""
        return self if self.check else self.model_copy(update={"check": True})

    @field_validator("chip")
    @classmethod
    def _known_chip(cls, v: str) -> str:
        if v not in CHIPS:
            raise ValueError(f"unknown chip {v!r}; known chips: {', '.join(CHIPS)}")
        return v
