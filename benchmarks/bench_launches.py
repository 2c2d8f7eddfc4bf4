"""The cost of a program's launches (issue 18: asc-devkit's ibshare samples launch a Matmul kernel
10000 times in a timing loop), each figure beside its baseline measured in the same run:

1. reading the launches back (`program.read_launches`): every launch's trace estimated and advised
   (`reuse=False`, as before) against identical launches estimated once (`reuse=True`), with the
   reports checked equal;
2. the binary's cost per launch of a small cube kernel with a 64 MB device buffer beside it
   (before, every launch cleared that buffer's 256 MB of writer words);
3. trace recording in a -O0 build, as kernels build: the old `std::vector<TraceRec>` push_back
   against the chunked `TraceLog`, over several blocks of a million records.

    python benchmarks/bench_launches.py [--launches 200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from sage_npu.npu_eval.build import SIM_INCLUDE
from sage_npu.npu_eval.program import build_program, read_launches
from sage_npu.npu_eval.settings import EvalSettings

PROGRAM = r"""#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"

constexpr uint32_t M = 64, K = 64, N = 32, BM = 32;

__global__ __cube__ void mm(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, __gm__ uint8_t* ws) {
    AscendC::GlobalTensor<half> ga, gb;
    AscendC::GlobalTensor<float> gc;
    ga.SetGlobalBuffer((__gm__ half*)a + AscendC::GetBlockIdx() * BM * K);
    gb.SetGlobalBuffer((__gm__ half*)b);
    gc.SetGlobalBuffer((__gm__ float*)c + AscendC::GetBlockIdx() * BM * N);
    AscendC::LocalMemAllocator<AscendC::Hardware::L1> l1;
    AscendC::LocalMemAllocator<AscendC::Hardware::L0A> l0a;
    AscendC::LocalMemAllocator<AscendC::Hardware::L0B> l0b;
    AscendC::LocalMemAllocator<AscendC::Hardware::L0C> l0c;
    auto a1 = l1.Alloc<AscendC::TPosition::A1, half>(BM * K);
    auto b1 = l1.Alloc<AscendC::TPosition::B1, half>(K * N);
    auto a2 = l0a.Alloc<AscendC::TPosition::A2, half>(BM * K);
    auto b2 = l0b.Alloc<AscendC::TPosition::B2, half>(K * N);
    auto c1 = l0c.Alloc<AscendC::TPosition::CO1, float>(BM * N);
    AscendC::DataCopy(a1, ga, AscendC::Nd2NzParams{1, BM, K, 0, K, BM, 1, 0});
    AscendC::DataCopy(b1, gb, AscendC::Nd2NzParams{1, K, N, 0, N, K, 1, 0});
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint32_t i = 0; i < BM / 16; ++i)
        AscendC::LoadData(a2[i * K * 16], a1[i * 256], AscendC::LoadData2DParams{0, K / 16, BM / 16, 0, 0, false, 0});
    for (uint32_t i = 0; i < K / 16; ++i)
        AscendC::LoadData(b2[i * N * 16], b1[i * 256], AscendC::LoadData2DParams{0, N / 16, K / 16, 0, 0, true, 0});
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::Mmad(c1, a2, b2, AscendC::MmadParams{BM, N, K, 0, false, true});
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::Fixpipe(gc, c1, AscendC::FixpipeParamsV220{N, BM, BM, N, false});
}

int main() {
    std::vector<uint16_t> a(M * K, 0x3c00), b(K * N, 0x3c00);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    uint8_t *da, *db, *dc, *ws;
    aclrtMalloc((void**)&da, a.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&db, b.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&dc, M * N * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&ws, 64u << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(da, a.size() * 2, a.data(), a.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(db, b.size() * 2, b.data(), b.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE);
    for (int i = 0; i < LAUNCHES; ++i) mm<<<M / BM, nullptr, stream>>>(da, db, dc, ws);
    aclrtSynchronizeStream(stream);
    aclFinalize();
    return 0;
}
"""

# Trace recording as a kernel build does it (-O0): the old per-block vector against the TraceLog.
TRACE_BENCH = r"""#include <chrono>
#include <cstdio>
#include "sage_sim/runtime.h"
using namespace sage::sim;
template <class Log> double run(size_t blocks, size_t records) {
    auto t = std::chrono::steady_clock::now();
    for (size_t b = 0; b < blocks; ++b) {
        Log log;  // a fresh block state's trace, as start_core makes it
        for (size_t i = 0; i < records; ++i)
            log.push_back(TraceRec{TraceKind::Instr, Pipe::M, "Mmad", "half", uint32_t(i), i, 1, 0, 0, {}, {}, {}});
        if (log.size() != records) return -1;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
int main(int, char** argv) {
    size_t blocks = std::strtoull(argv[1], nullptr, 10), records = std::strtoull(argv[2], nullptr, 10);
    std::printf("%f %f\n", run<std::vector<TraceRec>>(blocks, records), run<TraceLog>(blocks, records));
}
"""


def _seconds(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def bench_launches(tmp: Path, launches: int) -> None:
    src = tmp / "mm.asc"
    src.write_text(PROGRAM)
    settings = EvalSettings(cache_dir=tmp / "builds")
    built = build_program([src], settings, {"LAUNCHES": str(launches)})
    assert built.binary is not None, built.diagnostics
    out = tmp / "out"
    out.mkdir()
    env = {**os.environ, "SAGE_PROGRAM_OUT": str(out), "SAGE_PROGRAM_TRACE": "1", "SAGE_SANDBOX_SECCOMP": "0"}
    run_s = _seconds(lambda: subprocess.run([str(built.binary)], cwd=tmp, env=env, check=True,
                                            stdout=subprocess.DEVNULL))
    known = set(built.rewrites)
    got: dict[bool, list] = {}

    def read(reuse: bool) -> None:
        got[reuse] = read_launches(out, settings, str(src), known, False, built.paths, reuse=reuse)

    fresh_s, reused_s = _seconds(lambda: read(False)), _seconds(lambda: read(True))
    assert got[False] == got[True] and len(got[True]) == launches, "reused reports differ"
    print(f"{launches} launches of a 2-block cube kernel beside a 64 MB device buffer: the binary "
          f"{run_s * 1e3 / launches:.2f} ms per launch (trace written)")
    print(f"reading them back: every trace estimated {fresh_s * 1e3 / launches:.1f} ms per launch, identical "
          f"launches estimated once {reused_s * 1e3 / launches:.2f} ms per launch: {fresh_s / reused_s:.1f}x")


def bench_trace(tmp: Path, blocks: int = 4, records: int = 1 << 20) -> None:
    cpp, exe = tmp / "trace_bench.cpp", tmp / "trace_bench"
    cpp.write_text(TRACE_BENCH)
    subprocess.run(["g++", "-std=c++17", "-O0", "-I", str(SIM_INCLUDE), str(cpp), "-o", str(exe)], check=True)
    old, new = (float(x) for x in subprocess.run([str(exe), str(blocks), str(records)], check=True,
                                                 capture_output=True, text=True).stdout.split())
    print(f"trace recording at -O0, {blocks} blocks of {records} records: std::vector {old:.2f} s, "
          f"TraceLog {new:.2f} s: {old / new:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--launches", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-launches-") as tmp:
        bench_launches(Path(tmp), a.launches)
        bench_trace(Path(tmp))


if __name__ == "__main__":
    main()
