"""When a finding's verification may go into the advisor's calibration (docs/advisor.md,
"Calibration per finding kind"): the one guard the optimizer (agent/driver.py) and the editor's
verification (server/features/advice_actions.py) both apply before they record."""

from __future__ import annotations

import math

from sage_npu.npu_eval.report import Timing

# A measured delivery more than this many times the estimate (either way) is taken for a broken
# measurement (a profiler row of another kernel, a launch that did not run), not for the model's
# error: one such record would stand in the calibration for good.
OUTLIER_RATIO = 10.0


def calibration_refusal(estimated_us: float, before: Timing, after: Timing) -> str | None:
    """Why a finding's verification from these two timings must not be calibrated, or None when it
    may: the two times must be of one kind (a CPU-model estimate against a device measurement says
    nothing), finite and above zero (a time of 0 or NaN is no measurement), the estimate a finite
    saving above zero (the ratio's denominator), and a measured delivery within OUTLIER_RATIO of it."""
    times = (before.estimated_us, after.estimated_us)
    if before.estimated != after.estimated:
        return "the times before and after are not of one kind (a CPU-model estimate against a measurement)"
    if not all(math.isfinite(t) and t > 0 for t in times):
        return f"a time before or after is not a positive finite number ({times[0]!r} us, {times[1]!r} us)"
    if not (math.isfinite(estimated_us) and estimated_us > 0):
        return f"the finding's estimated saving is not a positive finite number ({estimated_us!r} us)"
    ratio = (times[0] - times[1]) / estimated_us
    if not after.estimated and abs(ratio) > OUTLIER_RATIO:
        return (f"the measured saving is {ratio:.1f} times the estimate (beyond {OUTLIER_RATIO:.0f}x either "
                "way: a broken measurement, more likely than the model's error)")
    return None
