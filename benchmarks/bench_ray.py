"""Bench throughput on this machine: the same small suite with `--jobs 1`, `--jobs 2` and Ray with 2 local
workers, in one run (machines are noisy: the ratios are what to read).

Prints tasks per minute for each, their ratio to `--jobs 1`, and Ray's start-up on its own (a local
instance; on a cluster it is paid once per run). Every runner starts with a warm build cache (a first
`--jobs 1` pass fills it and is not counted), and each runs the same offline episodes with the same
memory rule (waves of 8), so they differ only in how the episodes are spread.

    python3 benchmarks/bench_ray.py [--tasks N] [--turns N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SOURCES = ["vadd_naive", "sub_custom", "add_custom", "scale_shift"]


def make_suite(root: Path, n: int) -> Path:
    """`n` tasks, copies of the bundled examples the offline optimizer can speed up."""
    have = [s for s in SOURCES if (REPO / "examples" / "tasks" / s).is_dir()]
    for i in range(n):
        src = have[i % len(have)]
        shutil.copytree(REPO / "examples" / "tasks" / src, root / f"{src}_{i:02d}")
    return root


def main() -> None:
    import ray

    from sage_npu.agent.bench import run_suite
    from sage_npu.agent.settings import AgentSettings, BenchSettings
    from sage_npu.memory.settings import MemorySettings
    from sage_npu.npu_eval.settings import EvalSettings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--turns", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        suite = make_suite(Path(tmp) / "suite", a.tasks)
        ev = EvalSettings(trials=2, cache_dir=Path(tmp) / "cache")

        def run(name: str, jobs: int = 1, ray_on: bool = False) -> float:
            agent = AgentSettings(turns=a.turns, bench=BenchSettings(ray=ray_on))
            mem = MemorySettings(db=Path(tmp) / f"mem-{name}", embedder="hashing")
            t = time.perf_counter()
            result = run_suite(suite, ev, agent, jobs=jobs, memory_settings=mem)
            wall = time.perf_counter() - t
            solved = result.metrics()["solved"]
            print(f"  {name:<8} {wall:7.1f} s  {len(result.rows) / wall * 60:6.1f} tasks/min  ({solved} solved)",
                  flush=True)
            return wall

        print(f"{a.tasks} tasks, {a.turns} turns each, offline optimizer; warming the build cache ...", flush=True)
        run("warm-up")
        base = run("jobs 1")
        two = run("jobs 2", jobs=2)
        t = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        started = time.perf_counter() - t
        try:
            on_ray = run("ray", ray_on=True)
        finally:
            ray.shutdown()
        print(f"\nRay local start-up {started:.1f} s (not in its figure above)")
        print(f"speed-up over --jobs 1: --jobs 2 {base / two:.2f}x, Ray (2 workers) {base / on_ray:.2f}x")


if __name__ == "__main__":
    main()
