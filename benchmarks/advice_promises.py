"""No false promises: on asc-devkit's own vector samples, every advisor finding that claims a
saving over 10% of the estimate must deliver it within 25% once its change is made and the
program is run again (docs/advisor.md).

    python benchmarks/advice_promises.py /path/to/asc-devkit            # a checkout or a bare git repo
    python benchmarks/advice_promises.py /path/to/asc-devkit --case add_tpipe_tque --json out.json

Each named sample runs as the sweep runs it (benchmarks/samples_sweep.py: its own scripts make and
verify the data, `sage-npu run` stands in for the build and the binary). For each finding of a
launch over the bar, the change is made in a fresh copy of the sample, by the advisor's own edit
(`agent/transforms.py`'s `program_edit`: the `NAME old -> new` on the finding's line, or queue
depths of two) or, where no text edit makes it, by a rewrite written for this check (HAND_WRITTEN,
and the line says so); the sample runs again, and the delivered saving is the launch's estimate
before minus after. It prints each finding's estimated against delivered saving, and exits 1 when
a promise is broken (the change was made, the program still passed, and the saving is off by more
than 25%) or a change broke the sample.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import string
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from samples_sweep import (  # a sibling script: benchmarks/ is on the path
    _RUN,
    COMMAND_TIMEOUT_S,
    PlanCase,
    checkout,
    load_plan,
    program_verdict,
    run_script,
    runner_env,
    understand_build,
)

from sage_npu.agent.transforms import program_edit
from sage_npu.npu_eval.advisor import PROMISE_SHARE, kept
from sage_npu.npu_eval.program import ProgramReport, run_program
from sage_npu.npu_eval.report import AdviceFinding
from sage_npu.npu_eval.settings import EvalSettings

COMMIT = "82b89a15f263"  # the asc-devkit commit the samples below were chosen at
SAMPLES = (
    "01_simd_cpp_api/00_introduction/01_add/add_tpipe_tque",
    "01_simd_cpp_api/02_features/02_tiling_selector/vector_tiling_strategy__scenario_0",
    "01_simd_cpp_api/02_features/02_tiling_selector/vector_tiling_strategy__scenario_1",
    "01_simd_cpp_api/03_basic_api/01_memory_vector_compute/reduce",
    "01_simd_cpp_api/03_basic_api/05_sync_control/data_sync_barrier",
    "01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance__scenario_0",
    "01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance__scenario_1",
    "01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance__scenario_3",
    "01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub__scenario_1",
    "01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub__scenario_2",
)
# (sample, finding code) -> the rewrite this check makes where no text edit of the advisor's makes
# the change: {file relative to the sample: [(old text, new text)]}.
HAND_WRITTEN: dict[tuple[str, str], dict[str, list[tuple[str, str]]]] = {
    # the buffers placed as the sample's scenario 1 places them: y 256 bytes off x modulo 512, z in
    # another 64 KB bank (config.h sets each scenario's addresses)
    ("01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub__scenario_2", "perf-bank-conflict"): {
        "config.h": [("#elif SCENARIO_NUM == 2\n\nconstexpr uint32_t xLocalAddr = 0x0000;\n"
                      "constexpr uint32_t yLocalAddr = 0x4000;\nconstexpr uint32_t zLocalAddr = 0x10000;",
                      "#elif SCENARIO_NUM == 2\n\nconstexpr uint32_t xLocalAddr = 0x0000;\n"
                      "constexpr uint32_t yLocalAddr = 0x10100;\nconstexpr uint32_t zLocalAddr = 0x20000;")]},
}

Edits = dict[Path, str]  # a file of the sample (relative) -> its new text
Runner = Callable[[Edits], tuple[ProgramReport | None, str | None]]
How = Literal["advisor's edit", "hand-written", "not applied"]


@dataclass
class Promise:
    """One finding over the bar, and what its change delivered."""

    sample: str
    launch: int
    code: str
    change: str
    where: str
    estimated_us: float
    before_us: float
    how: How
    delivered_us: float | None = None
    failed: str = ""  # why the changed sample did not pass

    @property
    def verdict(self) -> str:
        if self.how == "not applied":
            return "NOT CHECKED"
        if self.failed:
            return "BROKE THE SAMPLE"
        assert self.delivered_us is not None
        return "kept" if kept(self.estimated_us, self.delivered_us) else "BROKEN"


def edited_copy(folder: Path, copy: Path, edits: Edits) -> Path:
    """A fresh copy of the sample with the edits' files replaced."""
    shutil.copytree(folder, copy)
    for rel, text in edits.items():
        (copy / rel).write_text(text)
    return copy


def case_runner(root: Path, case: PlanCase, work: Path, settings: EvalSettings) -> Runner:
    """Run `case` in a fresh copy of its sample with the given edits: (the program's report, why
    the case failed or None)."""
    folder = root / "examples" / case.source_case
    cmake = [x for x in case.commands if x.startswith("cmake")]
    env = runner_env(root, case)
    n = 0

    def run(edits: Edits) -> tuple[ProgramReport | None, str | None]:
        nonlocal n
        n += 1
        copy = edited_copy(folder, work / f"{case.case.replace('/', '__')}.{n}", edits)
        bdir = copy / "build"
        bdir.mkdir(exist_ok=True)
        report = None
        for cmd in case.commands:
            if cmd.startswith(("cmake", "make")):
                continue
            m = _RUN.match(cmd)
            if m is None:
                why = run_script(cmd, bdir, env)
            else:
                report, why = _program(folder, copy, bdir, m, understand_build(folder, m.group(1), cmake), env,
                                       settings, cmd.startswith("mssanitizer"))
            if why:
                return report, why
        return report, None

    return run


def _program(folder, copy, bdir, m, build, env, settings, sanitizer) -> tuple[ProgramReport | None, str | None]:
    if build is None:
        return None, "the sample's build is not one executable the sweep can stand in for"
    srcs = [copy / s.relative_to(folder) for s in build.sources]
    args = [] if sanitizer else shlex.split(string.Template(m.group(2)).safe_substitute(env))
    # a long limit: the machine may be busy, and a timeout is no verdict on the advice
    report = run_program(srcs[0], args, settings, cwd=bdir, extra_sources=srcs[1:], defines=build.defines,
                         timeout_s=COMMAND_TIMEOUT_S)
    why = program_verdict(report.model_dump_json()).why
    return report, why


def promises(sample: str, source_root: Path, run: Runner, hand: dict[tuple[str, str], dict[str, list]]
             ) -> tuple[list[Promise], str | None]:
    """The sample's findings over the bar, each change made and measured; or why the sample
    itself did not pass."""
    report, why = run({})
    if why or report is None:
        return [], why or "no program ran"
    out = []
    for launch in report.launches:
        for f in launch.advice:
            if f.saving_us <= PROMISE_SHARE * f.before_us:
                continue
            out.append(_measure(sample, launch.index, f, source_root, report, run, hand))
    return out, None


def _measure(sample: str, index: int, f: AdviceFinding, source_root: Path, before: ProgramReport, run: Runner,
             hand: dict[tuple[str, str], dict[str, list]]) -> Promise:
    rel = _relative(Path(f.file), source_root)
    p = Promise(sample, index, f.code, f.change, f"{rel}:{f.line}", f.saving_us, f.before_us, "not applied")
    edits: Edits = {}
    if (sample, f.code) in hand:
        p.how = "hand-written"
        for name, pairs in hand[(sample, f.code)].items():
            text = (source_root / name).read_text()
            for old, new in pairs:
                if old not in text:
                    p.failed = f"the hand-written rewrite of {name} no longer applies"
                    return p
                text = text.replace(old, new)
            edits[Path(name)] = text
    elif rel is not None and (text := program_edit(f, (source_root / rel).read_text())) is not None:
        p.how, edits[rel] = "advisor's edit", text
    if not edits:
        return p
    after, why = run(edits)
    launch = next((x for x in after.launches if x.index == index), None) if after else None
    if why or launch is None or launch.timing is None:
        p.failed = why or "the changed program made no such launch"
        return p
    p.delivered_us = round(f.before_us - launch.timing.estimated_us, 4)
    return p


def _relative(path: Path, root: Path) -> Path | None:
    """The finding's file relative to the copy it was found in (each run has its own copy)."""
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return None


def line_of(p: Promise) -> str:
    delivered = "-" if p.delivered_us is None else f"{p.delivered_us:.2f}"
    return (f"{p.verdict:16} {p.sample.split('/')[-1]} launch {p.launch} [{p.code}] {p.change} at {p.where}: "
            f"est. {p.estimated_us:.2f} us of {p.before_us:.2f}, delivered {delivered} us ({p.how})"
            + (f" -- {p.failed}" if p.failed else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("asc_devkit", type=Path, help="an asc-devkit checkout or bare git repository")
    ap.add_argument("--rev", default=COMMIT, help=f"the commit (default {COMMIT}, where the samples were chosen)")
    ap.add_argument("--case", action="append", default=[], help="only samples whose name contains this")
    ap.add_argument("--json", type=Path, help="also write the promises here")
    a = ap.parse_args(argv)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sage-npu" / "asc-devkit"
    root, commit = checkout(a.asc_devkit.resolve(), a.rev, cache)
    plan = {c.case: c for c in load_plan(root)}
    names = [s for s in SAMPLES if not a.case or any(x in s for x in a.case)]
    settings = EvalSettings.model_validate({})
    work = Path(tempfile.mkdtemp(prefix="sage-promises-"))
    everything: list[Promise] = []
    bad = 0
    try:
        for name in names:
            case = plan[name]
            run = case_runner(root, case, work, settings)
            found, why = promises(name, work / f"{name.replace('/', '__')}.1", run, HAND_WRITTEN)
            if why:
                print(f"SAMPLE FAILED    {name}: {why}")
                bad += 1
                continue
            if not found:
                print(f"no finding over {PROMISE_SHARE:.0%}  {name}")
            for p in found:
                print(line_of(p))
                bad += p.verdict in ("BROKEN", "BROKE THE SAMPLE")
            everything += found
    finally:
        shutil.rmtree(work, ignore_errors=True)
    checked = [p for p in everything if p.delivered_us is not None and not p.failed]
    print(f"asc-devkit {commit[:12]}: {len(names)} samples, {len(everything)} findings over {PROMISE_SHARE:.0%}, "
          f"{len(checked)} measured, {sum(p.verdict == 'kept' for p in checked)} kept within 25%, {bad} problem(s)")
    if a.json:
        a.json.write_text(json.dumps({"commit": commit, "promises": [asdict(p) for p in everything]}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
