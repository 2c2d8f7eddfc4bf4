"""The plan worker: a Python process that imports torch once and runs host.py and
reference.py on request (docs/architecture.md: untrusted code, no secrets).

Protocol: one JSON request per line on stdin (`{"plan": PlanRequest}`), one JSON answer per
line on the original stdout (a `PlanAnswer`: `{"ok": LaunchPlan}` or `{"error": PlanFailure}`,
npu_eval/launch_plan.py). The user's own prints go to stderr so they cannot corrupt the protocol.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # user prints (and torch warnings) land on stderr
    sys.stdout = sys.stderr
    import torch  # noqa: F401 - the point of a resident worker is to pay this once

    from sage_npu.npu_eval.launch_plan import PlanAnswer, PlanFailure, PlanRequest
    from sage_npu.npu_eval.plan import PlanError, plan

    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = PlanAnswer(ok=plan(PlanRequest.model_validate(json.loads(line)["plan"])))
        except PlanError as e:
            answer = PlanAnswer(error=e.failure())
        except Exception as e:  # noqa: BLE001 - a worker must answer, whatever the user's code does
            answer = PlanAnswer(error=PlanFailure(code="host-error", message=f"{type(e).__name__}: {e}"))
        proto.write(answer.model_dump_json(exclude_none=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
