"""Export a schedule as a Chrome trace (JSON) that Perfetto and chrome://tracing open:
one process per block, one lane per pipe, events named by API and source line."""

from __future__ import annotations

import json
from pathlib import Path

from sage_npu.npu_eval.chips import ChipProfile
from sage_npu.npu_eval.cost_model import PIPES, Estimate, core_name
from sage_npu.npu_eval.trace import Trace

MAX_EVENTS = 500_000  # beyond this Perfetto gets sluggish; the rest is summarised


def chrome_trace(est: Estimate, trace: Trace, chip: ChipProfile) -> dict:
    to_us = 1.0 / (chip.clock_ghz * 1e3)
    events: list[dict] = []
    mixed = any(kind == "AIC" for kind, _ in trace.cores.values())
    for s in est.schedules:
        pid = s.block
        core = est.block_core.get(s.block, 0)
        offset = est.core_offsets.get(s.block, 0.0)
        # a mixed launch's blocks by their AIC/AIV (est.block_core numbers AICs after the vector cores)
        where = core_name(trace, s.block) if mixed else f"core {core}"
        events.append({"ph": "M", "pid": pid, "name": "process_name",
                       "args": {"name": f"block {s.block} ({where})"}})
        events.append({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": s.block}})
        for tid, pipe in enumerate(PIPES):
            if pipe in s.busy:
                events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": pipe}})
        for e in s.events:
            if len(events) >= MAX_EVENTS:
                break
            file, line = trace.where(e.loc)
            events.append({
                "ph": "X", "pid": pid, "tid": PIPES.index(e.pipe) if e.pipe in PIPES else 0,
                "name": f"{e.api} :{line}", "ts": (offset + e.start) * to_us,
                "dur": max((e.end - e.start) * to_us, 1e-4),
                "args": {"file": file, "line": line, "bytes": e.bytes},
            })
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"estimated_us": est.estimated_us, "roofline_us": est.roofline_us,
                      "bottleneck": est.bottleneck, "chip": chip.name,
                      "note": "estimated by the sage-npu CPU cost model, not measured"},
    }


def write_chrome_trace(path: Path, est: Estimate, trace: Trace, chip: ChipProfile) -> None:
    Path(path).write_text(json.dumps(chrome_trace(est, trace, chip)))
