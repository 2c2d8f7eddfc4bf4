"""Every benchmark of this folder, run on two revisions in one run: does a change keep the figures?

Checks out BASE (a commit, default: the merge base with main's first parent) into a temporary git
worktree with its own virtualenv (system site packages, an editable install of that tree), then runs
each benchmark alternately in the base tree and in this tree, `--runs` times each, and prints the
median of every figure the benchmarks print, side by side, with the ratio. A figure is a number
followed by a unit (s, ms, us, x, M elem/s) or a cell of a benchmark's table; figures whose ratio is
off by more than `--tolerance` are marked.

Run: python benchmarks/compare_revisions.py --base 6779d85 [--head REV] [--runs 5] [--only bench_eval]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Each benchmark with arguments that keep one run around a minute on a 2-core machine.
BENCHMARKS: dict[str, list[str]] = {
    "bench_eval": [],
    "bench_cost_model": [],
    "bench_server_static": [],
    "bench_server_latency": [],
    "bench_memory": ["--skip-big"],
    "atu_ablation": [],
}
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*(ms|us|s|x|M elem/s))?(?![\w.])")
_SKIP = re.compile(r"target|n=|\(\d+ samples|\d+ lines|items|Ignoring")


def figures(output: str) -> dict[str, float]:
    """label -> value for every figure in a benchmark's output (targets and sizes left out)."""
    out: dict[str, float] = {}
    for line in output.splitlines():
        line = re.sub(r"\(target[^)]*\)|\(p90[^)]*\)", "", line)
        matches = list(_NUMBER.finditer(line))
        if not matches:
            continue
        label = line[:matches[0].start()].strip(" :=") or "row"
        if _SKIP.search(label):
            continue
        for i, m in enumerate(matches):
            key = f"{label} [{i}]" if len(matches) > 1 else label
            out[key] = float(m.group(1))
    return out


def make_tree(rev: str, where: Path, name: str) -> Path:
    tree = where / name
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(tree), rev], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(tree / ".venv")], check=True)
    subprocess.run([str(tree / ".venv" / "bin" / "pip"), "install", "-q", "--no-deps", "-e", str(tree)],
                   check=True, capture_output=True)
    return tree


def run_once(tree: Path, python: str, name: str, args: list[str]) -> dict[str, float]:
    script = tree / "benchmarks" / f"{name}.py"
    if not script.exists():
        return {}
    r = subprocess.run([python, str(script), *args], cwd=tree, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        print(f"  {name} failed in {tree}: {r.stderr.strip()[-300:]}", file=sys.stderr)
    return figures(r.stdout)


def compare(base: Path, head: Path, runs: int, only: list[str], tolerance: float) -> int:
    base_python = str(base / ".venv" / "bin" / "python")
    head_python = str(head / ".venv" / "bin" / "python") if head != REPO else sys.executable
    off = 0
    for name, args in BENCHMARKS.items():
        if only and name not in only:
            continue
        got: dict[str, dict[str, list[float]]] = {"base": defaultdict(list), "head": defaultdict(list)}
        for i in range(runs):
            for side, tree, python in (("base", base, base_python), ("head", head, head_python)):
                for k, v in run_once(tree, python, name, args).items():
                    got[side][k].append(v)
            print(f"{name}: run {i + 1}/{runs} done", file=sys.stderr, flush=True)
        print(f"\n{name} (median of {runs} runs each)\n  {'figure':<62} {'base':>10} {'head':>10} {'ratio':>7}")
        for key in got["base"]:
            if key not in got["head"]:
                continue
            b, h = statistics.median(got["base"][key]), statistics.median(got["head"][key])
            ratio = h / b if b else float("nan")
            mark = f"  <-- off by more than {tolerance:.0%}" if b and abs(ratio - 1) > tolerance else ""
            off += bool(mark)
            print(f"  {key[:62]:<62} {b:>10.3f} {h:>10.3f} {ratio:>7.2f}{mark}")
    return off


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the revision to compare against")
    ap.add_argument("--head", help="the revision to measure (default: this working tree)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", action="append", default=[], help="a benchmark's name (repeatable)")
    ap.add_argument("--tolerance", type=float, default=0.10)
    a = ap.parse_args()
    where = Path(tempfile.mkdtemp(prefix="sage-bench-base-"))
    try:
        base = make_tree(a.base, where, "base")
        head = make_tree(a.head, where, "head") if a.head else REPO
        off = compare(base, head, a.runs, a.only, a.tolerance)
    finally:
        for name in ("base", "head"):
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(where / name)],
                           capture_output=True)
        shutil.rmtree(where, ignore_errors=True)
    print(f"\n{off} figure(s) off by more than {a.tolerance:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
