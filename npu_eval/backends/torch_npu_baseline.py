"""The torch_npu baseline of a task: its reference.py model on the NPU, timed with NPU events
(3 warm-ups, then 100 launches between two events), the denominator of bench's Fast_1.0.

The timing script runs in the sandbox like every user file (reference.py is the user's), with
the Python it runs under, the task folder, CANN and the driver shown read-only. It imports
torch_npu itself (`TORCH_DEVICE_BACKEND_AUTOLOAD=0`, so a missing torch_npu is its own error).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from sage_npu.npu_eval.backends import device_setup
from sage_npu.npu_eval.backends.ascend_env import driver_gid
from sage_npu.npu_eval.sandbox import SandboxLimits, prepare_scratch, run_sandboxed
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.task import Task

WARM_UP, TRIALS = 3, 100
MARK = "SAGE-TORCH-NPU-US "

_SCRIPT = """
import importlib.util, json, sys
import torch
import torch_npu  # noqa: F401  (registers the npu device)
spec = importlib.util.spec_from_file_location("reference", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
torch.manual_seed(int(sys.argv[2]))
model = ref.Model(*ref.get_init_inputs()).npu()
inputs = [x.npu() if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
with torch.no_grad():
    for _ in range(WARM_UP):
        model(*inputs)
    torch.npu.synchronize()
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    for _ in range(TRIALS):
        model(*inputs)
    end.record()
    torch.npu.synchronize()
print(MARK + json.dumps(start.elapsed_time(end) * 1000.0 / TRIALS))
""".replace("WARM_UP", str(WARM_UP)).replace("TRIALS", str(TRIALS)).replace("MARK", json.dumps(MARK))


def reference_us(task: Task, settings: EvalSettings, scratch: Path) -> tuple[float | None, str]:
    """(microseconds per launch of the reference on the NPU, or None; why not, when None).
    `scratch` is an empty folder for the run."""
    if task.reference is None:
        return None, "the task has no reference.py"
    setup = device_setup()
    prepare_scratch(scratch)
    home = str(setup.home or "")
    env = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "ASCEND_HOME_PATH": home, "ASCEND_OPP_PATH": f"{home}/opp",
           "LD_LIBRARY_PATH": f"{home}/lib64:/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common"
                              ":/usr/local/Ascend/driver/lib64/driver"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    shown = {Path(sys.base_prefix), Path(sys.prefix), task.root.resolve(),
             *(Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p),
             *((setup.home,) if setup.home else ()), Path("/usr/local/Ascend/driver")}
    gid = driver_gid()
    limits = SandboxLimits(timeout_s=settings.plan_timeout_s, memory_bytes=1 << 44, file_bytes=1 << 30,
                           seccomp=False, groups=(gid,) if gid is not None else ())
    res = run_sandboxed([sys.executable, "-c", _SCRIPT, str(task.reference.resolve()), str(settings.seed)], scratch,
                        limits, env=env, show=tuple(p for p in shown if p.is_dir()))
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith(MARK)), None)
    if line is None:
        said = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
        return None, f"the torch_npu baseline did not run: {said}"
    return float(json.loads(line[len(MARK):])), ""
