"""Evaluation of Ascend C kernels: task format, plan, build, run, compare (docs/architecture.md).

host.py imports `Launch` and `Tiling` from here; keep this module's imports light.
"""

from typing import TYPE_CHECKING

from sage_npu.npu_eval.launch import Launch, Tiling

if TYPE_CHECKING:  # imported lazily below: host.py needs neither
    from sage_npu.npu_eval.evaluate import evaluate
    from sage_npu.npu_eval.report import Report

__all__ = ["Launch", "Tiling", "evaluate", "Report"]


def __getattr__(name: str):
    # evaluate() and the Report pull in pydantic and the pipeline; host.py needs neither.
    if name == "evaluate":
        from sage_npu.npu_eval.evaluate import evaluate

        return evaluate
    if name == "Report":
        from sage_npu.npu_eval.report import Report

        return Report
    raise AttributeError(name)
