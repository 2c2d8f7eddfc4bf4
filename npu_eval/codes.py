"""The registry of diagnostic codes: every code a Report, a static finding or the emulator's C++
side may carry is defined here, once, with what it means and where it comes from.

`DiagnosticCode` is the `Literal` the Report's `Diagnostic.code` is typed with, so an unknown code
fails validation wherever it is produced. The C++ headers spell the runtime codes as string
literals in `record_fault(...)`/`fault(...)` calls; `tests/test_codes.py` checks each of them
against this registry, and `docs/diagnostic-codes.md` is generated from it
(`python -m sage_npu.npu_eval.codes > docs/diagnostic-codes.md`, checked by the same test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

DiagnosticCode = Literal[
    "compile-error",
    "not-emulated",
    "ub-overflow",
    "cube-buffer-overflow",
    "unaligned-copy",
    "gm-out-of-bounds",
    "ub-out-of-bounds",
    "queue-deadlock",
    "flag-deadlock",
    "missing-sync",
    "use-after-free",
    "uninitialized-read",
    "uninitialized-gm-read",
    "gm-race",
    "api-misuse",
    "raw-gm-access",
    "dtype-unsupported",
    "api-unsupported",
    "assert-failed",
    "acl-error",
    "timeout",
    "crash",
    "mismatch",
    "beyond-roofline",
    "trace-truncated",
    "missing-free",
    "scalar-in-loop",
    "single-buffer",
    "host-error",
    "reference-error",
    "task-error",
    "perf-single-buffer",
    "perf-few-cores",
    "perf-small-tiles",
    "perf-scalar-loop",
    "perf-unaligned-gm",
    "perf-fragmented-gm",
    "perf-bank-conflict",
    "perf-strong-barrier",
    "perf-redundant-copy",
    "perf-slow-reduction",
]

# Where a code is found: by the compiler, by the emulator while the kernel runs, by the cost
# model on the run's trace, by reading the source (static analysis, also while typing), or by a
# pipeline stage around the kernel (task loading, host.py, reference.py, comparison).
Origin = Literal["compiler", "emulator", "cost-model", "source", "pipeline"]


@dataclass(frozen=True)
class CodeInfo:
    code: DiagnosticCode
    origins: tuple[Origin, ...]
    meaning: str


CODES: dict[str, CodeInfo] = {c.code: c for c in (
    CodeInfo("compile-error", ("compiler",),
             "the compiler rejected the kernel (condensed to your line; an API the emulator lacks, or a cube "
             "API, says so)"),
    CodeInfo("not-emulated", ("compiler", "emulator"),
             "the kernel uses what the emulator cannot run, in one line naming it and what to do: a cube-unit API "
             "not emulated yet (Conv3D, LoadData3DV2, ...), an Ascend 950-only API, HCCL, a CANN-only library or a "
             "host library; while it runs, a mode of an API the emulator has not modelled yet (a Transpose type)"),
    CodeInfo("ub-overflow", ("emulator", "source"),
             "buffers exceed the chip's usable Unified Buffer (910B: error past 192 KB, warning past 184 KB; "
             "310P: 248 KB)"),
    CodeInfo("cube-buffer-overflow", ("emulator",),
             "buffers exceed one of the cube unit's memories (910B: L1 512 KB, L0A and L0B 64 KB each, L0C 128 KB, "
             "BiasTable 1 KB), reported at the InitBuffer, LocalMemAllocator::Alloc or LocalTensor that crosses it"),
    CodeInfo("unaligned-copy", ("emulator", "source"),
             "a DataCopy length that is not a multiple of 32 bytes, or a UB address off a 32-byte boundary"),
    CodeInfo("gm-out-of-bounds", ("emulator",),
             "a global-memory access outside the buffer the host passed (often a tail shape); a warning when "
             "only the last rows of a DataCopy with Nd2NzParams run past the end (a ragged last ND matrix)"),
    CodeInfo("ub-out-of-bounds", ("emulator",), "a vector op or copy beyond a local tensor"),
    CodeInfo("queue-deadlock", ("emulator", "source"),
             "DeQue on an empty queue, or AllocTensor with every buffer in use: the device would hang (read from "
             "the source too: a DeQue on a queue nothing EnQue's on)"),
    CodeInfo("flag-deadlock", ("emulator",),
             "a WaitFlag whose SetFlag never comes, a SyncAll not every block reaches, or a cross-block wait "
             "(IBWait, WaitPreBlock, GroupBarrier, a GM poll loop) no block can satisfy any more"),
    CodeInfo("missing-sync", ("cost-model", "source"),
             "two pipes touch the same buffer with no queue, flag or barrier ordering them"),
    CodeInfo("use-after-free", ("emulator",),
             "a local tensor used after FreeTensor (or device memory after aclrtFree)"),
    CodeInfo("uninitialized-read", ("emulator",),
             "a vector op reads UB not written since its AllocTensor/Get (warning); a Fixpipe or an accumulating Mmad "
             "reading L0C that no Mmad wrote (error)"),
    CodeInfo("uninitialized-gm-read", ("emulator",),
             "a kernel reads device memory (aclrtMalloc) that neither the host nor any kernel wrote (warning)"),
    CodeInfo("gm-race", ("emulator",),
             "two blocks write overlapping global memory (different values: error; the same: warning); in a mixed "
             "launch, a core reading global memory another core stored with no cross-core flag ordering the store "
             "before the read (error, at the read)"),
    CodeInfo("api-misuse", ("emulator",),
             "an API called against its doc page's constraints: a sync workspace below its documented size, a "
             "parameter out of range (SliceInfo, a block index), a wait before its init, a once-per-block call "
             "made twice"),
    CodeInfo("raw-gm-access", ("source",),
             "GM read or written through a raw pointer instead of the API (warning)"),
    CodeInfo("dtype-unsupported", ("emulator", "compiler"), "an API/dtype pair the chip does not support"),
    CodeInfo("api-unsupported", ("source",),
             "an API the chip lacks, per the supported-products table of the API's asc-devkit doc page "
             "(npu_eval/api_support_table.py); the kernel is not built, as the chip's compiler would refuse it"),
    CodeInfo("assert-failed", ("emulator",), "an `ascendc_assert`/`assert` in the kernel failed"),
    CodeInfo("acl-error", ("emulator",),
             "a host program's ACL call failed (bad pointer, size or stream), at the call (program mode)"),
    CodeInfo("timeout", ("pipeline",), "the kernel ran past its time limit, at the last API call it made (before "
             "its first: on the function it was in)"),
    CodeInfo("crash", ("pipeline",), "the kernel died (a signal), at the last API call it made (before its "
             "first: on the function it was in)"),
    CodeInfo("mismatch", ("pipeline",),
             "an output differs from the reference: the first wrong index, on the line that wrote it"),
    CodeInfo("beyond-roofline", ("cost-model",),
             "the estimate beats the time HBM needs to write the outputs: outputs were written untraced"),
    CodeInfo("trace-truncated", ("cost-model",),
             "the trace hit its record cap: the estimate covers the start of the kernel (info)"),
    CodeInfo("missing-free", ("source",),
             "an AllocTensor on a queue with no FreeTensor in its class or function (warning)"),
    CodeInfo("scalar-in-loop", ("source",),
             "one element per iteration through GetValue/SetValue in a loop with no vector work (warning)"),
    CodeInfo("single-buffer", ("source",),
             "a queue with one buffer feeding a tiled loop: copy and compute never overlap (editor hint only, "
             "not in reports)"),
    CodeInfo("host-error", ("pipeline",), "host.py raised or broke a rule of the launch plan, at its line"),
    CodeInfo("reference-error", ("pipeline",), "reference.py raised or returned something unusable, at its line"),
    CodeInfo("task-error", ("pipeline",), "the task is incomplete or unreadable (missing kernel, host.py, ...)"),
    CodeInfo("perf-single-buffer", ("cost-model",),
             "advisor: a queue with one buffer, so copies and computation never overlap; the saving of double "
             "buffering, at BUFFER_NUM (information, a hint under 10%; docs/advisor.md)"),
    CodeInfo("perf-few-cores", ("cost-model",),
             "advisor: fewer blocks than the chip's vector cores; the saving of using them all, at host.py's "
             "block_dim"),
    CodeInfo("perf-small-tiles", ("cost-model",),
             "advisor: copies too short for the GM bandwidth; the length that saturates it and the saving of longer "
             "tiles, at the tile length or count"),
    CodeInfo("perf-scalar-loop", ("cost-model",),
             "advisor: per-element GetValue/SetValue work on the scalar unit; the saving of one vector instruction"),
    CodeInfo("perf-unaligned-gm", ("cost-model",),
             "advisor: copies starting off a 512-byte GM boundary (about 70% of the bandwidth); the saving of "
             "aligning them"),
    CodeInfo("perf-fragmented-gm", ("cost-model",),
             "advisor: copies in bursts under 512 bytes; the saving of one contiguous burst"),
    CodeInfo("perf-bank-conflict", ("cost-model",),
             "advisor: vector instructions whose operands collide in UB banks; the saving of placing the buffers "
             "apart"),
    CodeInfo("perf-strong-barrier", ("cost-model",),
             "advisor: a PipeBarrier<PIPE_ALL> where SetFlag/WaitFlag pairs between the pipes that depend on each "
             "other suffice; the saving of those pairs, at the barrier"),
    CodeInfo("perf-redundant-copy", ("cost-model",),
             "advisor: a copy in of GM bytes the UB still holds from an earlier copy (neither buffer nor GM written "
             "since); the saving of reading that tensor instead, at the redundant copy"),
    CodeInfo("perf-slow-reduction", ("cost-model",),
             "advisor: a sum reduced by two WholeReduceSum passes where BlockReduceSum then WholeReduceSum does "
             "it faster; the saving of the fast form, at the first WholeReduceSum"),
)}

assert set(CODES) == set(get_args(DiagnosticCode)), "every code has one CodeInfo"


def codes_markdown() -> str:
    """docs/diagnostic-codes.md: the table of every code, generated from the registry."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `npu_eval/codes.py` (`python -m sage_npu.npu_eval.codes > docs/diagnostic-codes.md`);",
        "a test keeps it current. Every diagnostic prints as `file:line:col: severity: message [code]`.",
        "",
        "| code | found by | what happened |",
        "|---|---|---|",
    ]
    lines += [f"| `{c.code}` | {', '.join(c.origins)} | {c.meaning} |" for c in CODES.values()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(codes_markdown(), end="")
