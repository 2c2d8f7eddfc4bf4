"""Cost-model speed: scheduling a 48-block trace of 100k instructions (target < 1 s), a 24-block
matmul trace of the same size (Mmad and Fixpipe handing L0C over by unit flags), and evaluation of
the examples with the cost model against without it (target < 20% more)."""

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


def cube_trace(blocks: int = 24, instructions: int = 100_000):
    """A matmul's records, as the Matmul API orders them: per base block [128, 256] of C, K steps of
    a GM -> L1 copy of B, two L1 -> L0 loads and a Mmad into the block's 128 KB of L0C with unitFlag 2
    (3 on the last step), each hand-over a set/wait flag pair; then a Fixpipe with unitFlag 3 reading
    it out: each unit-flag hand-over covers 256 blocks of 512 bytes (a trace of this shape scheduled
    in 0.62 s when the unit flags were kept per block, 0.34 s as runs; a 4096^3 24-core matmul's
    evaluation, under cProfile, took 40 s against 57.5 s)."""
    from sage_npu.npu_eval.trace import Rec, Trace

    def flag(kind: str, event: int) -> Rec:  # HardEvent 0 MTE2 -> MTE1, 1 back, 2 MTE1 -> M, 3 back
        return Rec(kind, "S", "SetFlag" if kind == "setflag" else "WaitFlag", "", 0, 0, 6, event, 0,
                   (0, 0), (0, 0), (0, 0))

    def sync(event: int) -> list[Rec]:
        return [flag("setflag", event), flag("waitflag", event)]

    k_steps = 16
    steps = instructions // blocks // 14
    l0c = (0, 128 * 1024)
    out = {}
    for b in range(blocks):
        recs = []
        for i in range(steps):
            last = i % k_steps == k_steps - 1
            recs += [Rec("I", "MTE2", "DataCopy", "float16", 16384, 32768, 1, 0, 1, (1 << 20, 32768), (0, 0), (0, 0),
                         gm_at=(1 << 32) + (b * steps + i) * 32768), *sync(0),
                     Rec("I", "MTE1", "LoadData", "float16", 8192, 16384, 2, 0, 0, (2 << 20, 16384),
                         (1 << 20, 16384), (0, 0)),
                     Rec("I", "MTE1", "LoadData", "float16", 16384, 32768, 3, 0, 0, (3 << 20, 32768),
                         (1 << 20, 32768), (0, 0)), *sync(1), *sync(2),
                     Rec("unitflag", "M", "Mmad", "", 0, 0, 4, 3 if last else 2, 0, l0c, (0, 0), (0, 0)),
                     Rec("I", "M", "Mmad", "float16", 128 * 256 * 64, 0, 4, 0, 0, l0c, (2 << 20, 16384),
                         (3 << 20, 32768)), *sync(3)]
            if last:
                recs += [Rec("unitflag", "FIX", "Fixpipe", "", 0, 0, 5, 3, 0, l0c, (0, 0), (0, 0)),
                         Rec("I", "FIX", "Fixpipe", "float32", 32768, 131072, 5, 0, 1, (0, 0), l0c, (0, 0),
                             gm_at=(2 << 32) + (b * steps + i) * 131072)]
        out[b] = recs
    return Trace(out, {i: ("k.cpp", i) for i in range(1, 7)})


def _schedule(trace, block_dim: int) -> float:
    from sage_npu.npu_eval.chips import chip_profile
    from sage_npu.npu_eval.cost_model import estimate
    from sage_npu.npu_eval.costs import default_costs

    t = time.perf_counter()
    estimate(trace, chip_profile("910B2"), default_costs(910), block_dim)
    return time.perf_counter() - t


def main() -> None:
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    trace = synthetic_trace()
    n = sum(len(v) for v in trace.blocks.values())
    sched = _schedule(trace, 48)
    print(f"schedule 48 blocks, {n} trace records: {sched:.3f} s (target < 1 s)")
    cube = cube_trace()
    n_cube = sum(len(v) for v in cube.blocks.values())
    sched_cube = _schedule(cube, 24)
    print(f"schedule 24 matmul blocks, {n_cube} trace records (unit flags): {sched_cube:.3f} s, "
          f"{sched_cube / n_cube * 1e6:.1f} us a record against the vector trace's {sched / n * 1e6:.1f}")

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
