"""Run asc-devkit's official samples unmodified on the CPU and count those that pass their own checks.

For each sample folder (one `.asc` beside `scripts/gen_data.py` and `scripts/verify_result.py`), as
its README says: in `build/`, `python3 ../scripts/gen_data.py`, then `sage-npu run ../<name>.asc`
(instead of the CANN-built `./demo`), then its README's `verify_result.py` line. A sample with
scenarios (`SCENARIO_NUM`) runs scenario 1; one whose check fails runs again with
`--zero-device-memory` (fresh device memory holds garbage unless asked). The samples are not
shipped here (their licence): pass an asc-devkit checkout or a bare git mirror of it.

Run: python benchmarks/official_samples.py PATH/TO/asc-devkit [--only 00_introduction] [--only 03_basic_api]
Prints one line per sample (pass, fail and why) and "N of M samples pass their own checks".
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SAMPLES = "examples/01_simd_cpp_api"
TIMEOUT_S = 600


@dataclass(frozen=True)
class Outcome:
    sample: str
    passed: bool
    why: str


def checkout(source: Path, into: Path) -> Path:
    """The samples folder of an asc-devkit checkout, or of a bare mirror exported into `into`."""
    if (source / SAMPLES).is_dir():
        return source / SAMPLES
    archive = subprocess.run(["git", "-C", str(source), "archive", "HEAD", SAMPLES], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / SAMPLES


def samples(root: Path, only: list[str]) -> list[Path]:
    found = []
    for asc in sorted(root.rglob("*.asc")):
        folder = asc.parent
        scripts = folder / "scripts"
        if (scripts / "gen_data.py").exists() and (scripts / "verify_result.py").exists():
            rel = folder.relative_to(root).as_posix()
            if not only or any(rel.startswith(o) for o in only):
                found.append(asc)
    return found


def verify_command(readme: str) -> list[str]:
    """The README's verify_result.py line with scenario 1, else the common form."""
    for line in readme.splitlines():
        m = re.search(r"python3 \.\./scripts/verify_result\.py[^#`]*", line)
        if m:
            return shlex.split(m.group(0).replace("$SCENARIO_NUM", "1"))
    return ["python3", "../scripts/verify_result.py", "output/output.bin", "output/golden.bin"]


def run_sample(asc: Path, root: Path, work: Path) -> Outcome:
    """The sample's steps; a sample whose check fails is run again with --zero-device-memory (samples
    that read output they never wrote as zero need it, as the README says)."""
    first = run_steps(asc, root, work / "default", [])
    if first.passed or not first.why.startswith("verify"):
        return first
    again = run_steps(asc, root, work / "zeroed", ["--zero-device-memory"])
    return Outcome(again.sample, True, "with --zero-device-memory") if again.passed else first


def run_steps(asc: Path, root: Path, work: Path, flags: list[str]) -> Outcome:
    name = asc.parent.relative_to(root).as_posix()
    folder = work / name
    shutil.copytree(asc.parent, folder)
    build = folder / "build"
    build.mkdir(exist_ok=True)
    readme = (folder / "README.md").read_text(errors="replace") if (folder / "README.md").exists() else ""
    scenario = ["-D", "SCENARIO_NUM=1"] if "SCENARIO_NUM" in readme else []
    gen = ["python3", "../scripts/gen_data.py"] + (["-scenarioNum=1"] if "gen_data.py -scenarioNum" in readme else [])
    steps = [("gen_data", gen),
             ("run", [sys.executable, "-m", "sage_npu.cli", "run", f"../{asc.name}", *scenario, *flags]),
             ("verify", verify_command(readme))]
    for step, cmd in steps:
        try:
            p = subprocess.run(cmd, cwd=build, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Outcome(name, False, f"{step}: timed out")
        if p.returncode != 0:
            last = (p.stderr.strip() or p.stdout.strip()).splitlines()[-1:] or [""]
            return Outcome(name, False, f"{step}: exit {p.returncode}: {last[0][:160]}")
        if step == "verify" and "pass" not in p.stdout.lower():
            return Outcome(name, False, f"verify: no pass in {p.stdout.strip()[-120:]!r}")
    return Outcome(name, True, "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("asc_devkit", type=Path, help="an asc-devkit checkout or bare git mirror")
    ap.add_argument("--only", action="append", default=[], help="a folder under examples/01_simd_cpp_api (repeatable)")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sage-samples-") as d:
        root = checkout(args.asc_devkit, Path(d))
        found = samples(root, args.only)
        work = Path(d) / "work"
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(lambda a: run_sample(a, root, work), found))
    for o in outcomes:
        print(f"{'pass' if o.passed else 'FAIL'}  {o.sample}" + (f"  ({o.why})" if o.why else ""))
    print(f"{sum(o.passed for o in outcomes)} of {len(outcomes)} samples pass their own checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
