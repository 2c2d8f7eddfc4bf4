"""The cube path's speed: a 1024 x 1024 x 1024 half matmul task (examples/tasks/matmul_basic's kernel,
5 trials) evaluated end to end (target: under 10 s on the 2-core machine once built), and the
emulated GFLOP/s of its trials beside numpy's float32 matmul on the same machine in the same run."""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
M = N = K = 1024
TRIALS = 5

REFERENCE = f'''import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a.float() @ b.float()


def get_inputs():
    gen = torch.Generator().manual_seed(0)
    return [(torch.randn({M}, {K}, generator=gen) * 0.5).half(), (torch.randn({K}, {N}, generator=gen) * 0.5).half()]


def get_init_inputs():
    return []
'''


def numpy_gflops(repeats: int = 5) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    a @ b  # warm-up (thread pool, pages)
    best = min(_seconds(lambda: a @ b) for _ in range(repeats))
    return 2 * M * N * K / best / 1e9


def _seconds(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main() -> None:
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    with tempfile.TemporaryDirectory(prefix="bench-cube-") as tmp:
        task = Path(tmp) / "matmul_1024"
        shutil.copytree(REPO / "examples" / "tasks" / "matmul_basic", task)
        (task / "reference.py").write_text(REFERENCE)
        # A 1024-long float sum in another order than torch's differs by ~1e-5 absolute, which the
        # float32 rule's 1e-7 floor calls wrong on outputs near zero: the bfloat16 threshold here.
        host = (task / "host.py").read_text()
        (task / "host.py").write_text(host.replace("outputs=[c])", "outputs=[c], tolerance=2.0**-7)"))
        settings = EvalSettings(trials=TRIALS, cache_dir=Path(tmp) / "builds")
        with Evaluator(settings) as ev:
            cold = _seconds(lambda: ev.evaluate(task))
            runs = []
            for _ in range(3):
                t = time.perf_counter()
                e = ev.evaluate(task)
                runs.append((time.perf_counter() - t, e))
        wall, e = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        assert e.report.status == "correct", e.report.status
        emulated = 2 * M * N * K * TRIALS / e.stages.run_s / 1e9
        ref = numpy_gflops()
        print(f"{M}x{N}x{K} half matmul, {TRIALS} trials, {e.report.correctness.trials if e.report.correctness else 0} "
              f"correct: first evaluation {cold:.2f} s (build included), then median {wall:.2f} s "
              f"(target < 10 s): plan {e.stages.plan_s:.2f} s, build {e.stages.build_s:.2f} s, "
              f"run {e.stages.run_s:.2f} s, estimate {e.stages.estimate_s:.2f} s")
        print(f"emulated cube: {emulated:.2f} GFLOP/s over the trials' runs; numpy float32 matmul: {ref:.1f} GFLOP/s "
              f"(ratio {emulated / ref:.3f}); median of runs {statistics.median(r[0] for r in runs):.2f} s")


if __name__ == "__main__":
    main()
