"""APIs the chip does not have.

- api-unsupported (error): a call of an Ascend C API whose asc-devkit doc page says the chip's
  family does not support it (npu_eval/api_support.py), e.g. DataCopyPad on a 310P. The chip's
  compiler would refuse the kernel, so the evaluation stops there too (stages.api_check).
"""

from __future__ import annotations

from sage_npu.npu_eval.analysis.findings import Finding, finding
from sage_npu.npu_eval.analysis.model import KernelModel
from sage_npu.npu_eval.api_support import FAMILY_NAMES, unsupported
from sage_npu.npu_eval.chips import ChipProfile

# What to use instead, where there is a well-known replacement.
_INSTEAD = {
    "DataCopyPad": "DataCopy with a count rounded to 32 bytes (pad the buffer, or handle the tail separately)",
}


def api_unsupported(m: KernelModel, chip: ChipProfile) -> list[Finding]:
    findings: list[Finding] = []
    for call in m.calls:
        if call.receiver is not None:  # a member call: a user's method or a class API, not a free API
            continue
        s = unsupported(call.name, chip.family)
        if s is None:
            continue
        family = FAMILY_NAMES.get(chip.family, str(chip.family))
        instead = f"; use {_INSTEAD[call.name]}" if call.name in _INSTEAD else ""
        findings.append(finding(
            m, call.node, "error", "api-unsupported",
            f"{call.name} is not available on {chip.name} ({family}): the supported-products table of its "
            f"asc-devkit page ({s.pages[0]}) says so{instead}"))
    return findings
