"""Cost-model speed: scheduling a 48-block trace of 100k instructions (target < 1 s), and
evaluation of the examples with the cost model against without it (target < 20% more)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def synthetic_trace(blocks: int = 48, instructions: int = 100_000):
    from sage_npu.npu_eval.trace import Trace

    per_iter = 6
    iters = instructions // blocks // per_iter
    return Trace({b: _block(b, iters) for b in range(blocks)}, {i: ("k.cpp", i) for i in range(1, 7)})


def _block(block: int, iters: int):
    """One block's records: each copy reads its own 8 KB of GM (its span recorded, as the emulator
    does, so the L2 model replays every copy)."""
    from sage_npu.npu_eval.trace import GmSpan, Rec

    recs = []
    for i in range(iters):
        slot = i % 2
        a = (slot * 8192, 8192)
        gm = GmSpan((1 << 32) + (block * iters + i) * 8192, 8192, 1)
        recs += [Rec("alloc", "MTE2", "AllocTensor", "", 0, 0, 1, 0, slot, a, (0, 0), (0, 0)),
                 Rec("I", "MTE2", "DataCopy", "float32", 2048, 8192, 2, 0, 1, a, (0, 0), (0, 0), gm),
                 Rec("enque", "MTE2", "EnQue", "", 0, 0, 3, 0, slot, (0, 0), (0, 0), (0, 0)),
                 Rec("deque", "V", "DeQue", "", 0, 0, 4, 0, slot, (0, 0), (0, 0), (0, 0)),
                 Rec("I", "V", "Exp", "float32", 2048, 8192, 5, 0, 0, a, a, (0, 0)),
                 Rec("free", "V", "FreeTensor", "", 0, 0, 6, 0, slot, (0, 0), (0, 0), (0, 0))]
    return recs


def main() -> None:
    from sage_npu.npu_eval.chips import chip_profile
    from sage_npu.npu_eval.cost_model import estimate
    from sage_npu.npu_eval.costs import default_costs
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    trace = synthetic_trace()
    n = sum(len(v) for v in trace.blocks.values())
    t = time.perf_counter()
    estimate(trace, chip_profile("910B2"), default_costs(910), 48)
    sched = time.perf_counter() - t
    print(f"schedule 48 blocks, {n} trace records: {sched:.3f} s (target < 1 s)")

    examples = sorted(p for p in (REPO / "examples" / "tasks").iterdir() if p.is_dir())
    rows = []
    with Evaluator(EvalSettings(estimate=True)) as with_cm, Evaluator(EvalSettings(estimate=False)) as without:
        for ex in examples:
            with_cm.evaluate(ex), without.evaluate(ex)  # warm both (worker, build cache)
            a = statistics.median(_time(with_cm.evaluate, ex) for _ in range(3))
            b = statistics.median(_time(without.evaluate, ex) for _ in range(3))
            rows.append((ex.name, a, b))
    print(f"{'example':<22} {'with model':>10} {'without':>10} {'ratio':>6}")
    for name, a, b in rows:
        print(f"{name:<22} {a:10.3f} {b:10.3f} {a / b:6.2f}")
    total_a, total_b = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"{'all':<22} {total_a:10.3f} {total_b:10.3f} {total_a / total_b:6.2f}  (target < 1.20)")


def _time(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
