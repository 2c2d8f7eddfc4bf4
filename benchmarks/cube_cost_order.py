"""The matmul tilings of tests/test_cube_cost_order.py, each pair's estimates with the L2 model and
without it (l2_read_speedup 1: every read at the public GM rate), for docs/cube.md's table:

    .venv/bin/python benchmarks/cube_cost_order.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _estimates(variants, profile_dir: Path | None, root: Path) -> dict:
    from sage_npu.npu_eval.evaluate import Evaluator
    from sage_npu.npu_eval.settings import EvalSettings

    out = {}
    common = {"advise": False, "profile_dir": profile_dir, "cache_dir": root / "cache"}
    # a variant at the sample's own shape (Variant.check false) is estimated without its values
    with Evaluator(EvalSettings(trials=1, **common)) as checked, \
            Evaluator(EvalSettings(check=False, run_timeout_s=600, **common)) as unchecked:
        for v in variants:
            t = (checked if v.check else unchecked).evaluate(v.materialise(root / f"v{len(out)}")).report.timing
            assert t is not None, v
            out[v] = (t.estimated_us, t.bottleneck, t.pipes)
    return out


def main() -> None:
    sys.path.insert(0, str(REPO))
    from sage_npu.npu_eval.calibrate import save_user_costs
    from sage_npu.npu_eval.costs import default_costs
    from tests.test_cube_cost_order import PAIRS

    variants = list(dict.fromkeys(x for p in PAIRS for x in (p.slower, p.faster)))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        save_user_costs(root / "no-l2", "910B2", default_costs(910).model_copy(update={"l2_read_speedup": 1.0}))
        new = _estimates(variants, None, root / "l2")
        old = _estimates(variants, root / "no-l2", root / "old")
    for p in PAIRS:
        print(p.source.split("01_matrix_compute/")[-1].split("Matmul性能调优案例/")[-1])
        for name, est in (("without L2", old), ("with L2", new)):
            (s, sb, sp), (f, fb, fp) = est[p.slower], est[p.faster]
            print(f"  {name:<10} {s:8.1f} -> {f:7.1f} us ({s / f:.2f}x); "
                  f"slower {sb} {_busy(sp)}; faster {fb} {_busy(fp)}")


def _busy(pipes: dict[str, float]) -> str:
    return " ".join(f"{k} {v * 100:.0f}%" for k, v in sorted(pipes.items(), key=lambda kv: -kv[1])[:3])


if __name__ == "__main__":
    main()
