"""The one entry: parse a source once into a `KernelModel`, run every rule over it."""

from __future__ import annotations

import gc
import logging

from sage_npu.npu_eval.analysis.findings import Finding, Rule
from sage_npu.npu_eval.analysis.model import KernelModel
from sage_npu.npu_eval.analysis.rules_api import api_unsupported
from sage_npu.npu_eval.analysis.rules_copy import unaligned_copy, unaligned_view
from sage_npu.npu_eval.analysis.rules_gm import raw_gm_access
from sage_npu.npu_eval.analysis.rules_loop import scalar_in_loop
from sage_npu.npu_eval.analysis.rules_queue import missing_enque, missing_free
from sage_npu.npu_eval.analysis.rules_sync import tbuf_missing_sync
from sage_npu.npu_eval.analysis.rules_ub import single_buffer, ub_overflow
from sage_npu.npu_eval.chips import DEFAULT_CHIP, ChipProfile, chip_profile

log = logging.getLogger("sage_npu.npu_eval.analysis")

RULES: tuple[Rule, ...] = (
    Rule(ub_overflow, ("ub-overflow",)),
    Rule(unaligned_copy, ("unaligned-copy",)),
    Rule(unaligned_view, ("unaligned-copy",)),
    # A performance hint on kernels that are correct: the editor shows it, the Report (whose
    # diagnostics say what is wrong) does not.
    Rule(single_buffer, ("single-buffer",), in_report=False),
    Rule(scalar_in_loop, ("scalar-in-loop",)),
    Rule(missing_free, ("missing-free",)),
    Rule(missing_enque, ("queue-deadlock",)),
    Rule(tbuf_missing_sync, ("missing-sync",)),
    Rule(raw_gm_access, ("raw-gm-access",)),
    Rule(api_unsupported, ("api-unsupported",)),
)


def analyze(source: str | bytes, chip: str | ChipProfile = DEFAULT_CHIP, *, for_report: bool = False,
            codes: tuple[str, ...] | None = None) -> list[Finding]:
    """All static findings on one Ascend C source for a chip (a name from npu_eval.chips or a
    profile), in line order; `for_report` leaves out the editor-only rules (`Rule.in_report`),
    `codes` keeps only the rules that report those codes. Nothing is compiled or run; a rule that
    trips on a half-typed kernel is logged and skipped."""
    profile = chip_profile(chip) if isinstance(chip, str) else chip
    rules = [r for r in RULES if (r.in_report or not for_report) and (codes is None or set(r.codes) & set(codes))]
    # The parse makes tens of thousands of short-lived node objects and no reference cycles;
    # a collector pass in the middle would traverse them all (40 ms on a 500-line kernel), so
    # it waits until they are freed.
    collecting = gc.isenabled()
    gc.disable()
    try:
        m = KernelModel(source)
        findings: list[Finding] = []
        for rule in rules:
            try:
                findings.extend(rule.check(m, profile))
            except Exception:  # noqa: BLE001 - a half-typed kernel may trip one rule; the others still speak
                log.exception("static rule %s failed", rule.check.__name__)
        findings.sort(key=lambda f: (f.line, f.column, f.code))
        return findings
    finally:
        if collecting:
            gc.enable()
