"""The estimate stage: the cost model on the trace one emulated launch left (task mode's trial
0, or one launch of a program), as the report's timing section plus the findings the schedule
reveals (missing-sync, beyond-roofline, trace-truncated)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.build import PathMap
from sage_npu.npu_eval.calibrate import load_user_costs
from sage_npu.npu_eval.chips import ChipProfile, local_memories
from sage_npu.npu_eval.chrome_trace import write_chrome_trace
from sage_npu.npu_eval.cost_model import Estimate, estimate
from sage_npu.npu_eval.costs import CostTable, default_costs
from sage_npu.npu_eval.report import Diagnostic, HotLine, TimeCause, Timing, diagnostic
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.npu_eval.trace import Trace, read_trace


@dataclass(frozen=True)
class LaunchSite:
    """What the estimate needs to know about the launch besides its trace."""

    block_dim: int
    file: str            # where the launch was made (findings without a kernel line go there)
    line: int
    out_bytes: int = 0   # bytes of the outputs; 0 when the launch names none (program mode)


def costs_for(settings: EvalSettings, chip: ChipProfile) -> CostTable:
    """The chip's calibrated cost table if `sage-npu calibrate` made one, else the defaults."""
    return load_user_costs(settings.resolved_profile_dir(), chip.name) or default_costs(chip.family)


def estimate_launch(outdir: Path, site: LaunchSite, chip: ChipProfile, costs: CostTable,
                    diags: dict[tuple, Diagnostic], trace_out: Path | None = None, paths: PathMap | None = None
                    ) -> tuple[Timing | None, Trace | None]:
    """The timing of the run in `outdir` and the trace it read (None, None without a trace);
    findings are added to `diags`. `trace_out`: also write a Chrome trace there. `paths`: the
    neutral names the binary was built under, mapped back in the trace's locations."""
    trace_file, locs_file = outdir / protocol.TRACE, outdir / protocol.LOCS
    if not trace_file.exists() or not locs_file.exists():
        return None, None
    trace = read_trace(trace_file, locs_file, paths)
    est = estimate(trace, chip, costs, site.block_dim, keep_events=trace_out is not None)
    _hazards(est, trace, diags, chip)
    _bounds(est, trace, site, chip, diags)
    if trace_out is not None:
        write_chrome_trace(trace_out, est, trace, chip)
    timing = timing_of(est, trace, chip)
    return timing, trace


def timing_of(est: Estimate, trace: Trace, chip: ChipProfile) -> Timing:
    """The report's timing section of an estimate: hot lines at their source lines, times in us."""
    hot = []
    for loc, us in est.hot_lines:
        file, line = trace.where(loc)
        if file and line:
            hot.append(HotLine(file=file, line=line, us=round(us, 4)))
    to_us = 1.0 / (chip.clock_ghz * 1e3)
    causes = [TimeCause(cause=c.cause, pipe=c.pipe, us=round(c.cycles * to_us, 4)) for c in est.causes]
    return Timing(estimated_us=round(est.estimated_us, 4), launch_overhead_us=est.launch_overhead_us,
                  roofline_us=round(est.roofline_us, 4), bottleneck=est.bottleneck, pipes=est.pipes,
                  hot_lines=hot, causes=causes, gm_read_bytes=est.gm_read_bytes, l2_hit_bytes=est.l2_hit_bytes,
                  l2_saved_us=round(est.l2_saved_us, 4), profiled_core=est.profiled_core)


def _memory_at(addr: int, chip: ChipProfile) -> str:
    """The memory an address of a block's local array lies in."""
    return [name for name, base in local_memories(chip) if addr >= base][-1]


def _hazards(est: Estimate, trace: Trace, diags: dict[tuple, Diagnostic], chip: ChipProfile) -> None:
    """A missing-sync error at each hazard on a local memory the schedule found between unordered pipes."""
    for h in est.hazards:
        file, line = trace.where(h.loc)
        _, oline = trace.where(h.other_loc)
        key = ("missing-sync", file, line)
        if key in diags or not file:
            continue
        mem = _memory_at(h.addr, chip) if h.addr >= 0 else "UB"
        verb = {"RAW": "reads", "WAR": "overwrites", "WAW": "writes"}[h.kind] + f" {mem} that"
        did = {"RAW": "wrote", "WAR": "still reads", "WAW": "also writes"}[h.kind]
        diags[key] = diagnostic(
            file, line, "error", "missing-sync",
            f"{h.api} ({h.pipe}) {verb} {h.other_api} ({h.other_pipe}, line {oline}) {did}, with no queue, "
            f"flag or barrier ordering them: the device runs the pipes in parallel and may reorder them. Add "
            f"SetFlag/WaitFlag<HardEvent::{h.other_pipe}_{h.pipe}> between them, or pass the tensor through a "
            "TQue", block=h.block)


def _bounds(est: Estimate, trace: Trace, site: LaunchSite, chip: ChipProfile, diags: dict[tuple, Diagnostic]) -> None:
    # Every output byte must reach GM once; an estimate whose work (the fixed operator head aside, which
    # alone can exceed a small output's transfer) is below that has not been traced doing the work
    # (outputs written through raw pointers, say), and a kernel cannot beat physics.
    floor_us = site.out_bytes / (chip.hbm_gbps * 1e3)
    head_us = sum(c.cycles for c in est.causes if c.cause == "op_head") / (chip.clock_ghz * 1e3)
    if not trace.truncated and est.estimated_us - head_us < floor_us * 0.99:
        diags[("beyond-roofline",)] = diagnostic(
            site.file, site.line or 1, "error", "beyond-roofline",
            f"the estimate ({est.estimated_us:.3f} us) beats the time HBM needs just to write the outputs "
            f"({site.out_bytes} bytes, {floor_us:.3f} us): the kernel writes its outputs without the traced copies "
            "(DataCopy/DataCopyPad); write them through GlobalTensor copies")
    if trace.truncated:
        diags[("trace-truncated",)] = diagnostic(
            site.file, site.line or 1, "info", "trace-truncated",
            "the trace stopped at its record limit: the estimate covers only the start of the kernel")
