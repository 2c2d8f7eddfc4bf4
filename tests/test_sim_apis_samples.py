"""APIs the official asc-devkit samples needed, run as whole programs (`sage-npu run`):
ShiftLeft/ShiftRight (basic_api/kernel_operator_vec_binary_scalar_intf.h), the fixed-address
LocalTensor(pos, addr, tileSize) constructor, DivCeil/AlignUp/GetSystemCycle/GetRuntimeUBSize/
GetSubBlockNum (basic_api/kernel_operator_sys_var_intf.h),
TPipe::Destroy ordering a later TPipe's work, blocks storing identical values to the same
GM bytes (a warning, not a race), the DMA atomics SetAtomicAdd/Max/Min + DisableDmaAtomic,
the GM scalar accesses Read/WriteGmByPassDCache + DataSyncBarrier and the Ascend 950 scalar
atomics (basic_api/kernel_operator_atomic_intf.h), a framework task whose tiling struct comes
from an op_host BEGIN_TILING_DATA_DEF header (kernel_tiling/kernel_tiling.h), DataCopyPad's pad
register (SetPadValue, isPad) and TBufPool (pools carved from the TPipe, nested and shared pools,
Reset, EXTERN_IMPL_BUFPOOL).
The kernels are our own; numpy recomputes the results."""

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


ZERO_GM = {"SAGE_DEVICE_MEM_FILL": "0"}   # zeroed device memory, the default of `sage-npu run`


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


# ---------------------------------------------------------------- DataCopyPad's pad register

PAD_KERNEL = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::LocalTensor<int16_t> ub(AscendC::TPosition::VECIN, 0, 7 * 16);
    AscendC::GlobalTensor<int16_t> x;
    AscendC::GlobalTensor<int16_t> o;
    x.SetGlobalBuffer((__gm__ int16_t*)xs, 20);
    o.SetGlobalBuffer((__gm__ int16_t*)out, 7 * 16);
    // two rows of 10 elements, each padded to 16 on the right with the SetPadValue value
    AscendC::SetPadValue((int16_t)7);
    AscendC::DataCopyPad(ub, x, {2, 20, 0, 0, 0}, AscendC::DataCopyPadExtParams<int16_t>{false, 0, 6, 0});
    // isPad: 2 on the left, 4 on the right, all -3; the register keeps -3 afterwards
    AscendC::DataCopyPad(ub[32], x, {1, 20, 0, 0, 0}, AscendC::DataCopyPadExtParams<int16_t>{true, 2, 4, -3});
    AscendC::DataCopyPad(ub[48], x[10], {1, 20, 0, 0, 0}, AscendC::DataCopyPadExtParams<int16_t>{false, 0, 6, 9});
    // no left/right padding: the alignment fill repeats the row's first element
    AscendC::DataCopyPad(ub[64], x[5], {1, 20, 0, 0, 0}, AscendC::DataCopyPadExtParams<int16_t>{false, 0, 0, 0});
    // SetPadValue again: the next padded copy takes the new value
    AscendC::SetPadValue((int16_t)-100);
    AscendC::DataCopyPad(ub[80], x, {2, 4, 0, 0, 0}, AscendC::DataCopyPadExtParams<int16_t>{false, 1, 2, 0});
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(o, ub, 7 * 16);
}
"""


def test_set_pad_value_fills_data_copy_pad_padding(tmp_path, settings):
    path = program(tmp_path / "pad", PAD_KERNEL, 20, 7 * 16 * 2)
    x = np.arange(1, 21, dtype=np.int16) * 11
    x.tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.severity == "error" or d.code == "uninitialized-read"], \
        diagnostics(report)
    out = np.fromfile(path.parent / "output" / "out.bin", dtype=np.int16).reshape(7, 16)
    np.testing.assert_array_equal(out[0], np.r_[x[:10], [7] * 6])
    np.testing.assert_array_equal(out[1], np.r_[x[10:], [7] * 6])
    np.testing.assert_array_equal(out[2], np.r_[[-3] * 2, x[:10], [-3] * 4])
    np.testing.assert_array_equal(out[3], np.r_[x[10:], [-3] * 6])   # isPad=false: the register, not 9
    np.testing.assert_array_equal(out[4], np.r_[x[5:15], [x[5]] * 6])
    # 2 elements of data after 1 of left padding, right padding and the alignment fill: the new value
    np.testing.assert_array_equal(out[5], np.r_[[-100], x[:2], [-100] * 13])
    np.testing.assert_array_equal(out[6], np.r_[[-100], x[2:4], [-100] * 13])


def test_padding_without_a_pad_value_is_undefined(tmp_path, settings):
    kernel = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::LocalTensor<int16_t> ub(AscendC::TPosition::VECIN, 0, 16);
    AscendC::GlobalTensor<int16_t> x;
    AscendC::GlobalTensor<int16_t> o;
    x.SetGlobalBuffer((__gm__ int16_t*)xs, 10);
    o.SetGlobalBuffer((__gm__ int16_t*)out, 16);
    AscendC::DataCopyPad(ub, x, {1, 20, 0, 0, 0}, AscendC::DataCopyPadExtParams<int16_t>{false, 0, 6, 5});
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(o, ub, 16);
}
"""
    path = program(tmp_path / "nopad", kernel, 10, 32)
    np.arange(10, dtype=np.int16).tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == "uninitialized-read"]
    assert found and found[0].line == line_of(path, "DataCopy(o, ub, 16)"), diagnostics(report)


# ---------------------------------------------------------------- TBufPool

POOL_STAGE = """\
template <class Pool>
__aicore__ inline uintptr_t Stage(Pool& pool, AscendC::GlobalTensor<int16_t>& x, AscendC::GlobalTensor<int16_t> o,
                                  int16_t k)
{
    AscendC::TQue<AscendC::TPosition::VECIN, 1> qin;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> qout;
    pool.InitBuffer(qin, 1, 256);
    pool.InitBuffer(qout, 1, 256);
    AscendC::LocalTensor<int16_t> a = qin.AllocTensor<int16_t>();
    uintptr_t at = reinterpret_cast<uintptr_t>(a.GetPhyAddr());
    AscendC::DataCopy(a, x, 128);
    qin.EnQue(a);
    a = qin.DeQue<int16_t>();
    AscendC::LocalTensor<int16_t> b = qout.AllocTensor<int16_t>();
    AscendC::Muls(b, a, k, 128);
    qout.EnQue(b);
    qin.FreeTensor(a);
    b = qout.DeQue<int16_t>();
    AscendC::DataCopy(o, b, 128);
    qout.FreeTensor(b);
    return at;
}
"""

POOL_KERNEL = POOL_STAGE + """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::GlobalTensor<int16_t> x;
    AscendC::GlobalTensor<int16_t> o;
    x.SetGlobalBuffer((__gm__ int16_t*)xs, 128);
    o.SetGlobalBuffer((__gm__ int16_t*)out, 3 * 128);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> before;
    pipe.InitBuffer(before, 64);
    AscendC::TBufPool<AscendC::TPosition::VECCALC> whole, first, second;
    pipe.InitBufPool(whole, 2048);
    whole.InitBufPool(first, 512);
    whole.InitBufPool(second, 512, first);     // shares first's memory
    uintptr_t a1 = Stage(first, x, o, 2);
    first.Reset();
    uintptr_t a2 = Stage(second, x, o[128], 3);  // the same UB bytes, after the Reset
    second.Reset();
    uintptr_t a3 = Stage(whole, x, o[256], 5);  // the rest of the outer pool
    whole.Reset();
    uintptr_t base = reinterpret_cast<uintptr_t>(before.Get<int16_t>().GetPhyAddr());
    AscendC::printf("addr %d %d %d\\n", int(a1 - base), int(a2 - base), int(a3 - base));
}
"""


def test_tbufpool_carves_shares_and_reuses_after_reset(tmp_path, settings):
    path = program(tmp_path / "pool", POOL_KERNEL, 128, 3 * 128 * 2)
    x = np.arange(-64, 64, dtype=np.int16)
    x.tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert not [d for d in diagnostics(report) if d.severity == "error" or d.code == "missing-sync"], \
        diagnostics(report)
    out = np.fromfile(path.parent / "output" / "out.bin", dtype=np.int16).reshape(3, 128)
    np.testing.assert_array_equal(out, np.stack([x * 2, x * 3, x * 5]))
    # TBuf at 0 (64 bytes), the outer pool from 64: the nested pool first, then its sharer at the
    # same bytes, then the outer pool's own buffers after the 512 bytes the nested pool took
    assert "addr 64 64 576" in report.stdout, report.stdout


POOL_OVERFLOW = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::TPipe pipe;
    AscendC::TBufPool<AscendC::TPosition::VECCALC> pool;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> qin;
    AscendC::TBuf<AscendC::TPosition::VECCALC> tmp;
    pipe.InitBufPool(pool, 1000);
    pool.InitBuffer(qin, 2, 256);
    pool.InitBuffer(tmp, 512 + 32);
}
"""


def test_tbufpool_buffers_past_the_pool_are_an_overflow_at_their_line(tmp_path, settings):
    path = program(tmp_path / "over", POOL_OVERFLOW, 0, 32)
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == "ub-overflow"]
    assert found and found[0].line == line_of(path, "pool.InitBuffer(tmp"), diagnostics(report)
    assert found[0].severity == "error" and report.launches[0].status != "ok"
    # 1000 bytes round up to 1024; 2 x 256 taken at the earlier line; 544 more end 32 bytes past it
    msg = found[0].message
    assert "1024 bytes" in msg and f"2 x 256 at line {line_of(path, 'pool.InitBuffer(qin')}" in msg, msg
    assert "32 bytes" in msg, msg


@pytest.mark.parametrize("after,code", [
    ("qin.AllocTensor<int16_t>();", "use-after-free"),    # a queue of the reset pool
    ("pool.InitBuffer(other, 1, 64);", "ub-overflow"),    # the 910B's Reset empties the pool
])
def test_tbufpool_reset_takes_its_buffers_back(tmp_path, settings, after, code):
    kernel = """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::TPipe pipe;
    AscendC::TBufPool<AscendC::TPosition::VECCALC> pool;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> qin, other;
    pipe.InitBufPool(pool, 1024);
    pool.InitBuffer(qin, 1, 256);
    pool.Reset();
    AFTER
}
""".replace("AFTER", after)
    path = program(tmp_path / "reset", kernel, 0, 32)
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == code]
    assert found and found[0].line == line_of(path, after), diagnostics(report)
    assert f"line {line_of(path, 'pool.Reset()')}" in found[0].message, found[0].message


CUSTOM_POOL = """\
// Our own pool: each queue buffer gets a 64-byte gap after it.
class GappedPool {
public:
    __aicore__ inline GappedPool() { Init(); }
    template <class Q>
    __aicore__ inline bool InitBuffer(Q& que, uint8_t num, uint32_t len)
    {
        auto handle = this->GetBufHandle(this->GetCurBufSize());
        uint32_t at = this->GetCurAddr();
        que.InitStartBufHandle(handle, num, len);
        for (uint32_t i = 0; i < num; i++) {
            que.InitBufHandle(this, i, handle, at + i * (len + 64), len);
        }
        this->SetCurAddr(at + num * (len + 64));
        this->SetCurBufSize(this->GetCurBufSize() + num);
        return true;
    }
    EXTERN_IMPL_BUFPOOL(GappedPool, AscendC::TPosition::VECCALC, 4);
};

""" + POOL_STAGE + """\
extern "C" __global__ __aicore__ void probe(GM_ADDR xs, GM_ADDR out)
{
    AscendC::GlobalTensor<int16_t> x;
    AscendC::GlobalTensor<int16_t> o;
    x.SetGlobalBuffer((__gm__ int16_t*)xs, 128);
    o.SetGlobalBuffer((__gm__ int16_t*)out, 128);
    AscendC::TPipe pipe;
    GappedPool pool;
    pipe.InitBufPool(pool, POOL_BYTES);
    Stage(pool, x, o, 7);
    pool.Reset();
}
"""


def test_custom_pool_places_buffers_inside_its_memory(tmp_path, settings):
    path = program(tmp_path / "custom", CUSTOM_POOL.replace("POOL_BYTES", "2 * (256 + 64)"), 128, 256)
    x = np.arange(128, dtype=np.int16)
    x.tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    assert report.status == "ok", report.model_dump_json(indent=2)
    np.testing.assert_array_equal(np.fromfile(path.parent / "output" / "out.bin", dtype=np.int16), x * 7)


def test_custom_pool_placing_past_its_memory_is_an_overflow(tmp_path, settings):
    path = program(tmp_path / "custom_over", CUSTOM_POOL.replace("POOL_BYTES", "512"), 128, 256)
    np.arange(128, dtype=np.int16).tofile(path.parent / "input" / "x.bin")
    report = run(settings, path)
    found = [d for d in diagnostics(report) if d.code == "ub-overflow"]
    # the second queue's buffer starts at 320 and ends at 576, past the 512-byte pool
    assert found and found[0].line == line_of(path, "que.InitBufHandle(this"), diagnostics(report)
    assert "64 bytes past its end" in found[0].message, found[0].message
