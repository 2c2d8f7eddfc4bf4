"""APIs the official asc-devkit samples needed, run as whole programs (`sage-npu run`):
ShiftLeft/ShiftRight (kernel_vec_shift.h), the fixed-address LocalTensor(pos, addr, tileSize)
constructor, DivCeil/AlignUp/GetSystemCycle/GetRuntimeUBSize/GetSubBlockNum (kernel_sys.h),
TPipe::Destroy ordering a later TPipe's work, blocks storing identical values to the same
GM bytes (a warning, not a race), the DMA atomics SetAtomicAdd/Max/Min + DisableDmaAtomic,
the GM scalar accesses Read/WriteGmByPassDCache + DataSyncBarrier and the Ascend 950 scalar
atomics (kernel_gm_scalar.h), and a framework task whose tiling struct comes from an op_host
BEGIN_TILING_DATA_DEF header (kernel_tiling.h). The kernels are our own; numpy recomputes the
results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sage_npu.npu_eval.program import ProgramReport, run_program
from sage_npu.npu_eval.settings import EvalSettings


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return EvalSettings(cache_dir=tmp_path_factory.mktemp("sample-api-builds"))


HEAD = """\
#include <cstdio>
#include "acl/acl.h"
#include "kernel_operator.h"
"""

# Host: IN int16 inputs from input/x.bin (if IN > 0), OUT bytes of output written to
# output/out.bin, NB blocks; the kernel is `probe(x, out)`.
MAIN = """\
int32_t main()
{
    size_t inBytes = IN * sizeof(int16_t) + 32, outBytes = OUT;
    uint8_t *xHost, *oHost, *xDev, *oDev;
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMallocHost((void**)&xHost, inBytes);
    aclrtMallocHost((void**)&oHost, outBytes);
    aclrtMalloc((void**)&xDev, inBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&oDev, outBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (IN > 0) {
        FILE* f = std::fopen("input/x.bin", "rb");
        if (!f || std::fread(xHost, 1, IN * sizeof(int16_t), f) != IN * sizeof(int16_t)) return 7;
        std::fclose(f);
        aclrtMemcpy(xDev, inBytes, xHost, inBytes, ACL_MEMCPY_HOST_TO_DEVICE);
    }
    probe<<<NB, nullptr, stream>>>(xDev, oDev);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(oHost, outBytes, oDev, outBytes, ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* g = std::fopen("output/out.bin", "wb");
    std::fwrite(oHost, 1, outBytes, g);
    std::fclose(g);
    aclrtFree(xDev);
    aclrtFree(oDev);
    aclrtFreeHost(xHost);
    aclrtFreeHost(oHost);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def program(folder: Path, kernel: str, n_in: int, out_bytes: int, blocks: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "input").mkdir(exist_ok=True)
    (folder / "output").mkdir(exist_ok=True)
    main = MAIN.replace("IN", str(n_in)).replace("OUT", str(out_bytes)).replace("NB", str(blocks))
    path = folder / "probe.asc"
    path.write_text(HEAD + kernel + main)
    return path


def run(settings: EvalSettings, path: Path, defines: dict[str, str] | None = None) -> ProgramReport:
    return run_program(path, [], settings, cwd=path.parent, stdout=None, defines=defines)


ZERO_GM = {"SAGE_DEVICE_MEM_FILL": "0"}   # what `sage-npu run --zero-device-memory` defines


def diagnostics(report: ProgramReport):
    return list(report.diagnostics) + [d for lr in report.launches for d in lr.diagnostics]


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


SHIFT_KERNEL = """\
static_assert(AscendC::DivCeil(10u, 4u) == 3 && AscendC::DivCeil(8, 4) == 2 && AscendC::DivCeil(5u, 0u) == 0,
              "DivCeil");
static_assert(AscendC::AlignUp(10u, 8u) == 16 && AscendC::AlignUp(16, 8) == 16, "AlignUp");

extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    int64_t t0 = AscendC::GetSystemCycle();
    // Tensors the kernel places itself (CANN 9): byte addresses, element counts.
    AscendC::LocalTensor<int16_t> a(AscendC::TPosition::VECIN, 0, 128);
    AscendC::LocalTensor<int16_t> shl(AscendC::TPosition::VECOUT, 256, 128);
    AscendC::LocalTensor<int16_t> sra(AscendC::TPosition::VECOUT, 512, 128);
    AscendC::LocalTensor<int16_t> rnd(AscendC::TPosition::VECOUT, 768, 128);
    AscendC::LocalTensor<uint16_t> srl(AscendC::TPosition::VECOUT, 1024, 128);
    AscendC::LocalTensor<int32_t> w(AscendC::TPosition::VECCALC, 1280, 64);
    AscendC::GlobalTensor<int16_t> x;
    AscendC::GlobalTensor<int16_t> o;
    x.SetGlobalBuffer((__gm__ int16_t*)xs, 128);
    o.SetGlobalBuffer((__gm__ int16_t*)out, 5 * 128);
    AscendC::DataCopy(a, x, 128);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::ShiftLeft(shl, a, (int16_t)3, 128);
    AscendC::ShiftRight(sra, a, (int16_t)5, 128);
    uint64_t mask = 128;
    AscendC::ShiftRight(rnd, a, (int16_t)5, mask, 1, {1, 1, 8, 8}, true);
    AscendC::ShiftRight(srl, a.ReinterpretCast<uint16_t>(), (uint16_t)5, 128);
    // int32 mask-array form, half the lanes: the other half keeps what Duplicate wrote.
    AscendC::Duplicate(w, (int32_t)7, 64);
    AscendC::PipeBarrier<PIPE_V>();
    uint64_t bits[2] = {0x00000000FFFFFFFFull, 0};
    AscendC::ShiftLeft(w, a.ReinterpretCast<int32_t>(), (int32_t)16, bits, 1, {1, 1, 8, 8});
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(o, shl, 128);
    AscendC::DataCopy(o[128], sra, 128);
    AscendC::DataCopy(o[256], rnd, 128);
    AscendC::DataCopy(o[384], srl.ReinterpretCast<int16_t>(), 128);
    AscendC::DataCopy(o[512], w.ReinterpretCast<int16_t>(), 128);
    int64_t t1 = AscendC::GetSystemCycle();
    if (t1 >= t0 && AscendC::GetRuntimeUBSize() == AscendC::GetUBSizeInBytes() && AscendC::GetSubBlockNum() == 1) {
        AscendC::printf("sys ok\\n");
    }
}
"""


def test_shifts_fixed_address_tensors_and_sys_helpers(tmp_path, settings):
    path = program(tmp_path / "shift", SHIFT_KERNEL, 128, 5 * 128 * 2)
    rng = np.random.default_rng(3)
    x = rng.integers(-30000, 30000, 128).astype(np.int16)
    x[:4] = [-1, -32768, 17, 16]
    x.tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.severity == "error"], diagnostics(report)
    assert "sys ok" in report.stdout
    out = np.fromfile(path.parent / "output" / "out.bin", dtype=np.int16).reshape(5, 128)
    np.testing.assert_array_equal(out[0], (x.astype(np.int32) << 3).astype(np.int16))
    np.testing.assert_array_equal(out[1], x >> 5)
    np.testing.assert_array_equal(out[2], (x >> 5) + ((x >> 4) & 1))
    np.testing.assert_array_equal(out[3].view(np.uint16), x.view(np.uint16) >> 5)
    w = out[4].view(np.int32)
    x32 = x.view(np.int32)
    np.testing.assert_array_equal(w[:32], (x32[:32].astype(np.int64) << 16).astype(np.int32))
    np.testing.assert_array_equal(w[32:], 7)


def test_shift_outside_the_bit_width_is_reported(tmp_path, settings):
    kernel = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::LocalTensor<uint16_t> a(AscendC::TPosition::VECCALC, 0, 16);
    AscendC::Duplicate(a, (uint16_t)1, 16);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::ShiftRight(a, a, (uint16_t)17, 16);
}
"""
    path = program(tmp_path / "wide", kernel, 0, 32)
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == "dtype-unsupported"]
    assert found and found[0].line == line_of(path, "(uint16_t)17") and "[0, 16]" in found[0].message


def test_fixed_address_tensor_past_the_ub_is_an_overflow(tmp_path, settings):
    kernel = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::LocalTensor<float> a(AscendC::TPosition::VECIN, AscendC::GetUBSizeInBytes() - 128, 64);
}
"""
    path = program(tmp_path / "past", kernel, 0, 32)
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == "ub-overflow"]
    assert found and found[0].line == line_of(path, "GetUBSizeInBytes() - 128")
    assert report.launches[0].status != "ok"


SAME_STORE = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::LocalTensor<float> t(AscendC::TPosition::VECOUT, 0, 64);
    AscendC::Duplicate(t, VALUE, 64);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::GlobalTensor<float> o;
    o.SetGlobalBuffer((__gm__ float*)out, 64);
    AscendC::DataCopy(o, t, 64);
}
"""


@pytest.mark.parametrize("value,severity", [("2.5f", "warning"), ("float(AscendC::GetBlockIdx())", "error")])
def test_blocks_storing_the_same_values_are_not_a_race(tmp_path, settings, value, severity):
    path = program(tmp_path / "same", SAME_STORE.replace("VALUE", value), 0, 256, blocks=4)
    report = run(settings, path)
    races = [d for d in diagnostics(report) if d.code == "gm-race"]
    assert races and {d.severity for d in races} == {severity}, races
    assert races[0].line == line_of(path, "DataCopy(o, t, 64)")
    assert (report.launches[0].status == "ok") == (severity == "warning")
    if severity == "warning":
        assert "same values" in races[0].message
        np.testing.assert_array_equal(np.fromfile(path.parent / "output" / "out.bin", dtype=np.float32), 2.5)


TPIPE_REUSE = """\
__aicore__ inline void Triple(GM_ADDR xs, GM_ADDR out, AscendC::TPipe* pipe)
{
    AscendC::GlobalTensor<int16_t> x;
    AscendC::GlobalTensor<int16_t> o;
    x.SetGlobalBuffer((__gm__ int16_t*)xs, 128);
    o.SetGlobalBuffer((__gm__ int16_t*)out, 128);
    AscendC::TQue<AscendC::TPosition::VECIN, 1> qin;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> qout;
    pipe->InitBuffer(qin, 1, 256);
    pipe->InitBuffer(qout, 1, 256);
    AscendC::LocalTensor<int16_t> a = qin.AllocTensor<int16_t>();
    AscendC::DataCopy(a, x, 128);
    qin.EnQue(a);
    a = qin.DeQue<int16_t>();
    AscendC::LocalTensor<int16_t> b = qout.AllocTensor<int16_t>();
    AscendC::Muls(b, a, (int16_t)3, 128);
    qout.EnQue(b);
    qin.FreeTensor(a);
    b = qout.DeQue<int16_t>();
    AscendC::DataCopy(o, b, 128);
    qout.FreeTensor(b);
}

extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::TPipe pipe1;
    Triple(xs, out, &pipe1);
    pipe1.Destroy();
    AscendC::TPipe pipe2;
    Triple(xs, out, &pipe2);
    pipe2.Destroy();
}
"""


def test_tpipe_destroy_orders_the_next_pipes_work(tmp_path, settings):
    path = program(tmp_path / "reuse", TPIPE_REUSE, 128, 256)
    x = np.arange(128, dtype=np.int16)
    x.tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.code == "missing-sync"]
    np.testing.assert_array_equal(np.fromfile(path.parent / "output" / "out.bin", dtype=np.int16), x * 3)


DMA_ATOMICS = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::LocalTensor<float> pos(AscendC::TPosition::VECOUT, 0, 64);
    AscendC::LocalTensor<float> neg(AscendC::TPosition::VECOUT, 256, 64);
    AscendC::GlobalTensor<float> o;
    o.SetGlobalBuffer((__gm__ float*)out, 4 * 64);
    float v = float(AscendC::GetBlockIdx() + 1);
    AscendC::Duplicate(pos, v, 64);
    AscendC::Duplicate(neg, -v, 64);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::SetAtomicAdd<float>();
    AscendC::DataCopy(o, pos, 64);
    AscendC::SetAtomicMax<float>();
    AscendC::DataCopy(o[64], pos, 64);
    AscendC::SetAtomicMin<float>();
    AscendC::DataCopy(o[128], neg, 64);
    AscendC::DisableDmaAtomic();
    if (AscendC::GetBlockIdx() == 0) {
        AscendC::DataCopy(o[192], pos, 64);
        AscendC::DataCopy(o[192], pos, 64);
    }
}
"""


def test_dma_atomics_combine_blocks_without_a_race(tmp_path, settings):
    path = program(tmp_path / "atomics", DMA_ATOMICS, 0, 4 * 64 * 4, blocks=3)
    report = run(settings, path, ZERO_GM)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.code == "gm-race"], diagnostics(report)
    out = np.fromfile(path.parent / "output" / "out.bin", dtype=np.float32).reshape(4, 64)
    np.testing.assert_array_equal(out[0], 1 + 2 + 3)     # added onto the zeroed memory
    np.testing.assert_array_equal(out[1], 3)             # max
    np.testing.assert_array_equal(out[2], -3)            # min
    np.testing.assert_array_equal(out[3], 1)             # after DisableDmaAtomic a copy overwrites


def test_dma_atomic_of_an_unsupported_type_does_not_compile(tmp_path, settings):
    kernel = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::SetAtomicAdd<uint64_t>();
}
"""
    path = program(tmp_path / "atomic_u64", kernel, 0, 32)
    report = run(settings, path)
    assert report.status == "compile_error"
    (d,) = [d for d in diagnostics(report) if d.code == "dtype-unsupported"]
    assert d.line == line_of(path, "SetAtomicAdd<uint64_t>") and "SetAtomicAdd" in d.message


GM_SCALARS = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    __gm__ int32_t* o = (__gm__ int32_t*)out;
    if (AscendC::GetBlockIdx() == 0) {
        AscendC::WriteGmByPassDCache<int32_t>(o + 1, 41);
        AscendC::DataSyncBarrier<AscendC::MemDsbT::DDR>();
        AscendC::WriteGmByPassDCache<int32_t>(o, 1);
    } else {
        int32_t flag = AscendC::ReadGmByPassDCache<int32_t>(o);
        int32_t v = AscendC::ReadGmByPassDCache<int32_t>(o + OFFSET);
        AscendC::WriteGmByPassDCache<int32_t>(o + 8, flag + v);
    }
}
"""


def test_gm_scalar_reads_and_writes_bypassing_the_dcache(tmp_path, settings):
    path = program(tmp_path / "bypass", GM_SCALARS.replace("OFFSET", "1"), 0, 64, blocks=2)
    report = run(settings, path)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.severity == "error"], diagnostics(report)
    out = np.fromfile(path.parent / "output" / "out.bin", dtype=np.int32)
    assert (out[0], out[1], out[8]) == (1, 41, 42)


def test_gm_scalar_read_past_the_buffer_is_reported_at_its_line(tmp_path, settings):
    path = program(tmp_path / "bypass_oob", GM_SCALARS.replace("OFFSET", "16"), 0, 64, blocks=2)
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == "gm-out-of-bounds"]
    assert found and found[0].line == line_of(path, "(o + 16)"), diagnostics(report)
    assert report.launches[0].status != "ok"


SCALAR_ATOMICS = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    int32_t before = AscendC::AtomicAdd((__gm__ int32_t*)out, 2);
    AscendC::AtomicCas((__gm__ uint32_t*)out + 1, 0u, 7u + uint32_t(AscendC::GetBlockIdx()));
    AscendC::AtomicMax((__gm__ int32_t*)out + 2, int32_t(AscendC::GetBlockIdx()));
    AscendC::AtomicMin((__gm__ int32_t*)out + 3, -int32_t(AscendC::GetBlockIdx()));
    AscendC::AtomicExch((__gm__ int32_t*)out + 4, before);
}
"""


def test_scalar_gm_atomics_on_the_950(tmp_path, settings):
    path = program(tmp_path / "scalar_atomics", SCALAR_ATOMICS, 0, 32, blocks=4)
    report = run(settings, path, {**ZERO_GM, "__NPU_ARCH__": "3510"})
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.code == "gm-race"], diagnostics(report)
    out = np.fromfile(path.parent / "output" / "out.bin", dtype=np.int32)
    # Blocks run in order: the first Cas finds 0 and stores 7; the last block saw 6 before its add.
    assert list(out[:5]) == [8, 7, 3, -3, 6]


def test_scalar_gm_atomics_are_950_only(tmp_path, settings):
    path = program(tmp_path / "scalar_atomics_910b", SCALAR_ATOMICS, 0, 32, blocks=4)
    report = run(settings, path)
    assert report.status == "compile_error"
    found = [d for d in diagnostics(report) if d.code == "compile-error"]
    assert found and found[0].line == line_of(path, "AtomicAdd(") and "Ascend 950" in found[0].message


TILED_KERNEL = """\
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void scale_tiled(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    uint32_t n = t.totalLength / AscendC::GetBlockNum();
    AscendC::GlobalTensor<float> xg;
    AscendC::GlobalTensor<float> yg;
    xg.SetGlobalBuffer((__gm__ float*)x + n * AscendC::GetBlockIdx(), n);
    yg.SetGlobalBuffer((__gm__ float*)y + n * AscendC::GetBlockIdx(), n);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    AscendC::DataCopy(v, xg, n);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::Muls(v, v, t.factor, n);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, v, n);
}
"""

TILING_HEADER = """\
#pragma once
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleTiling)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(float, factor);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ScaleTiled, ScaleTiling)
}  // namespace optiling
"""

TILED_REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 3.0


def get_inputs():
    return [torch.randn(4 * 256)]


def get_init_inputs():
    return []
"""

TILED_HOST = """\
import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x):
    y = torch.empty_like(x)
    tiling = Tiling(type="optiling::ScaleTiling", totalLength=x.numel(), factor=3.0)
    return Launch(kernel="scale_tiled", block_dim=4, args=[x, y, torch.empty(0, dtype=torch.uint8), tiling],
                  outputs=[y], defines={"SAGE_TILING_HEADER": '"op_host/scale_tiling.h"'})
"""


def test_framework_task_takes_its_tiling_struct_from_the_op_host_header(tmp_path, settings):
    from sage_npu.npu_eval.evaluate import evaluate

    task = tmp_path / "scale_tiled"
    (task / "op_host").mkdir(parents=True)
    (task / "scale_tiled.cpp").write_text(TILED_KERNEL)
    (task / "op_host" / "scale_tiling.h").write_text(TILING_HEADER)
    (task / "reference.py").write_text(TILED_REFERENCE)
    (task / "host.py").write_text(TILED_HOST)
    report = evaluate(task, settings)
    assert report.status == "correct", report.model_dump_json(indent=2)
