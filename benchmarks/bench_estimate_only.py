"""`eval --estimate-only` against the checked evaluation, on matmul_adv with the matmul_high_performance
sample's Case 5 tiling (24 cores split 4 x 6, L1 filled; tests/test_cube_cost_order.py): each stage's
seconds at 2048^3 and 4096^3 both ways (the same estimate), and at the sample's own 8192^3 estimate-only.
No advice either way (eval.advise false: its findings re-estimate the kernel once per change).

    .venv/bin/python benchmarks/bench_estimate_only.py [--largest 4096]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--largest", type=int, default=8192, help="the largest M = N = K, estimate-only (default 8192)")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings
    from tests.test_cube_cost_order import l1_filled

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        common = {"advise": False, "run_timeout_s": 900, "cache_dir": root / "cache"}
        with Evaluator(EvalSettings(trials=1, **common)) as checked, \
                Evaluator(EvalSettings(check=False, **common)) as unchecked:
            checked.evaluate(l1_filled((256, 256, 256), True).materialise(root / "warm"))  # the build, once
            for size in (2048, 4096, args.largest):
                for ev, check in ((checked, True), (unchecked, False)):
                    if check and size > 4096:
                        continue  # with its values: minutes of arithmetic and a reference as long
                    v = l1_filled((size, size, size), check)
                    t0 = time.perf_counter()
                    e = ev.evaluate(v.materialise(root / f"{size}-{check}"))
                    wall = time.perf_counter() - t0
                    assert e.report.timing is not None, e.report.diagnostics
                    st = e.stages
                    rows.append((size, "checked" if check else "estimate-only", e.report.status, wall, st.plan_s,
                                 st.run_s, st.estimate_s, e.report.timing.estimated_us))
    print(f"{'M=N=K':>6} {'mode':<14} {'status':<9} {'wall s':>7} {'plan s':>7} {'run s':>7} {'estimate s':>10} "
          f"{'model us':>10}")
    for size, mode, status, wall, plan, run, est, us in rows:
        print(f"{size:>6} {mode:<14} {status:<9} {wall:7.1f} {plan:7.1f} {run - est:7.1f} {est:10.1f} {us:10.1f}")
    by = {(r[0], r[1]): r for r in rows}
    for size in (2048, 4096):
        a, b = by[(size, "checked")], by[(size, "estimate-only")]
        print(f"{size}^3: estimate-only takes {b[3] / a[3]:.2f} of the checked evaluation's time, same estimate: "
              f"{a[7] == b[7]}")


if __name__ == "__main__":
    main()
