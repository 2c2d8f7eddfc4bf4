"""Static analysis of Ascend C kernels from the source alone (tree-sitter; no compile, no run).

`analyze(source, chip)` parses once into a `KernelModel` (model.py) and runs every rule
(rules_*.py, one module per family) over it, returning `Finding`s with optional `Fix`es
(findings.py: 1-based lines, 1-based character columns, like the Report's `Diagnostic`).
The evaluation puts the findings in the Report; the language server shows them with their
fixes as diagnostics and quick fixes. `ub_usage(source, chip)` is the Unified Buffer each class's
buffers take, for the editor's UB view (hover on InitBuffer, a code lens).

Every rule stays silent when the source does not let it be sure (sizes from tiling, unknown
types): a false alarm costs more trust than a missed hint.
"""

from sage_npu.npu_eval.analysis.analyze import RULES, analyze
from sage_npu.npu_eval.analysis.findings import Edit, Finding, Fix, Rule
from sage_npu.npu_eval.analysis.rules_ub import BufferUse, UbUsage, ub_usage

__all__ = ["RULES", "BufferUse", "Edit", "Finding", "Fix", "Rule", "UbUsage", "analyze", "ub_usage"]
