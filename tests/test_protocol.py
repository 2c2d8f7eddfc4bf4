"""The harness protocol is named once on each side: sage_sim/protocol.h (C++) and
npu_eval/protocol.py. A small program prints protocol.h's constants; they must equal the
Python module's."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sage_npu.npu_eval import protocol
from sage_npu.npu_eval.build import SIM_INCLUDE

PROBE = r"""
#include "sage_sim/protocol.h"
#include <cstdio>
#include <iterator>

namespace p = sage::sim::protocol;

static void num(const char* name, long v) { std::printf("%s\t%ld\n", name, v); }
static void str(const char* name, const char* v) { std::printf("%s\t%s\n", name, v); }
template <size_t N>
static void list(const char* name, const char* const (&v)[N]) {
    std::printf("%s\t", name);
    for (size_t i = 0; i < N; ++i) std::printf("%s%s", i ? "," : "", v[i]);
    std::printf("\n");
}

int main() {
    num("EXIT_ABORTED", p::kExitAborted);
    num("EXIT_BAD_MANIFEST", p::kExitBadManifest);
    num("EXIT_TIMEOUT", p::kExitTimeout);
    num("EXIT_SIGNAL_BASE", p::kExitSignalBase);
    str("MANIFEST", p::kManifest);
    str("TRACE", p::kTrace);
    str("LOCS", p::kLocs);
    str("FAULTS", p::kFaults);
    str("CRASH", p::kCrash);
    str("DONE", p::kDone);
    str("OUTPUT_PREFIX", p::kOutputPrefix);
    str("WRITER_PREFIX", p::kWriterPrefix);
    str("LAUNCH_PREFIX", p::kLaunchPrefix);
    str("META", p::kMeta);
    str("HOST_FAULTS", p::kHostFaults);
    str("HOST_CRASH", p::kHostCrash);
    str("RTC_COMPILER", p::kRtcCompiler);
    str("CRASH_PC", p::kCrashPc);
    str("ENV_PROGRAM_OUT", p::kEnvProgramOut);
    str("ENV_PROGRAM_TRACE", p::kEnvProgramTrace);
    str("ENV_PROGRAM_VALUES", p::kEnvProgramValues);
    str("ENV_SECCOMP", p::kEnvSeccomp);
    str("SECCOMP_FAILED", p::kSeccompFailed);
    str("SECCOMP_ABSENT", p::kSeccompAbsent);
    list("FAULT_COLUMNS", p::kFaultColumns);
    list("LOCS_COLUMNS", p::kLocsColumns);
    list("TRACE_COLUMNS", p::kTraceColumns);
    str("TRACE_BLOCK", p::kTraceBlock);
    str("TRACE_TRUNCATED", p::kTraceTruncated);
    list("TRACE_KINDS", p::kTraceKinds);
    num("WRITER_BLOCK_BITS", p::kWriterBlockBits);
    str("MATMUL_MESSAGE", p::kMatmulMessage);
    str("MATMUL_SERVE", p::kMatmulServe);
    str("MATMUL_INIT", p::kMatmulInit);
    str("MATMUL_KSTEP", p::kMatmulKStep);
    str("MATMUL_COPY", p::kMatmulCopy);
    str("STATIC_TILING", p::kStaticTiling);
    list("PIPES", p::kPipes);
    num("PIPE_ALL", p::kPipeAll);
    std::printf("EVENT_PIPES\t");
    for (size_t i = 0; i < std::size(p::kEventPipes); ++i)
        std::printf("%s%s>%s", i ? "," : "", p::kEventPipes[i][0], p::kEventPipes[i][1]);
    std::printf("\n");
}
"""


def python_side() -> dict[str, str]:
    out = {}
    for name, value in vars(protocol).items():
        if not name.isupper():
            continue
        if name == "EVENT_PIPES":
            out[name] = ",".join(f"{a}>{b}" for a, b in value)
        elif isinstance(value, tuple):
            out[name] = ",".join(value)
        else:
            out[name] = str(value)
    return out


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_protocol_h_and_protocol_py_agree(tmp_path: Path):
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(PROBE)
    subprocess.run(["g++", "-std=c++17", "-I", str(SIM_INCLUDE), str(src), "-o", str(exe)], check=True)
    printed = dict(line.split("\t", 1) for line in subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True, timeout=30).stdout.splitlines())
    assert printed == python_side()


def test_the_pipe_map_has_the_emulators_pipes():
    assert all(a in protocol.PIPES and b in protocol.PIPES for a, b in protocol.EVENT_PIPES)
    assert len(protocol.TRACE_COLUMNS) == 18 and len(protocol.FAULT_COLUMNS) == 7


def test_a_copys_gm_span_is_read_from_its_columns_and_others_have_none(tmp_path: Path):
    from sage_npu.npu_eval.trace import GmSpan, read_trace

    copy = ["I", "MTE2", "DataCopyPad", "float16", "64", "128", "1", "32", "4", "0", "256", "0", "0", "0", "0",
            "4096", "32", "96"]
    add = ["I", "V", "Add", "float16", "64", "128", "1", "0", "0", "0", "128", "0", "128", "0", "0", "0", "0", "0"]
    assert len(copy) == len(add) == len(protocol.TRACE_COLUMNS)
    (tmp_path / protocol.TRACE).write_text(f"{protocol.TRACE_BLOCK}\t0\tAIV\t0\n" + "\n".join(
        "\t".join(r) for r in (copy, add)) + "\n")
    (tmp_path / protocol.LOCS).write_text("1\t7\tk.cpp\n")
    load, vec = read_trace(tmp_path / protocol.TRACE, tmp_path / protocol.LOCS).blocks[0]
    assert load.gm == GmSpan(4096, 32, 4, 96) and load.gm.end == 4096 + 3 * 128 + 32
    assert vec.gm is None


def test_gm_spans_cover_and_overlap_burst_by_burst():
    from sage_npu.npu_eval.trace import GmSpan

    rows = GmSpan(0, 64, 4, 64)   # bytes 0-63, 128-191, 256-319, 384-447
    # GmSpan(64, 64, 2, 160): bytes 64-127 (a gap of rows) and 288-351 (across its third burst)
    assert rows.covers(GmSpan(128, 64, 2, 64)) and rows.covers(GmSpan(136, 16, 1))
    assert not rows.covers(GmSpan(0, 128, 1)) and not rows.covers(GmSpan(0, 64, 5, 64))
    assert rows.overlaps(GmSpan(60, 8, 1)) and rows.overlaps(GmSpan(64, 64, 2, 160))
    assert not rows.overlaps(GmSpan(64, 64, 1)) and not rows.overlaps(GmSpan(64, 32, 3, 96))
    whole = GmSpan(0, 1024, 1)
    assert whole.covers(rows) and not rows.covers(whole) and whole.overlaps(rows)
