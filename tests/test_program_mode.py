"""Program mode (`sage-npu run FILE`): whole Ascend C programs, kernels and host main(), built for
the CPU and run in the sandbox. The programs are written here in the style of the official
samples (a `.asc` with an ACL host reading and writing .bin files through its own
data_utils.h; a CPU-debug program with GmAlloc + ICPU_RUN_KF); each marks the line a finding
must be reported at with `// expect: <code>`."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from sage_npu.npu_eval.program import ProgramReport, map_column, rewrite, run_program
from sage_npu.npu_eval.run_cli import add_run_parser
from sage_npu.npu_eval.settings import EvalSettings


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    # The programs live in per-test folders (their paths are part of the build), so a cache of
    # their own keeps the user's build cache free of them.
    return EvalSettings(cache_dir=tmp_path_factory.mktemp("program-builds"))

DATA_UTILS = """\
// Reads and writes raw .bin files, as the samples' data_utils.h do.
#pragma once
#include <cstdio>
#include <string>

inline bool ReadFile(const std::string& path, size_t& fileSize, void* buffer, size_t bufferSize)
{
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        std::printf("[ERROR] cannot open %s\\n", path.c_str());
        return false;
    }
    fileSize = std::fread(buffer, 1, bufferSize, f);
    std::fclose(f);
    return true;
}

inline bool WriteFile(const std::string& path, const void* buffer, size_t size)
{
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        return false;
    }
    std::fwrite(buffer, 1, size, f);
    std::fclose(f);
    return true;
}
"""

# A vector kernel: each block scales its slice by `scale` and adds `bias`.
AXPB_KERNEL = """\
#include "acl/acl.h"
#include "kernel_operator.h"
#include "data_utils.h"

#ifdef ASCENDC_CPU_DEBUG
#include "cpu_debug_launch.h"
#endif

__global__ __vector__ void axpb_custom(__gm__ uint8_t* x, __gm__ uint8_t* y, uint32_t totalLength, float scale)
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    uint32_t blockLength = totalLength / AscendC::GetBlockNum();
    xGm.SetGlobalBuffer((__gm__ float*)x + blockLength * AscendC::GetBlockIdx(), blockLength);
    yGm.SetGlobalBuffer((__gm__ float*)y + blockLength * AscendC::GetBlockIdx(), blockLength);
    pipe.InitBuffer(inQueue, 1, blockLength * sizeof(float));
    pipe.InitBuffer(outQueue, 1, blockLength * sizeof(float));
    AscendC::LocalTensor<float> xLocal = inQueue.AllocTensor<float>();
    AscendC::DataCopy(xLocal, xGm, blockLength);
    inQueue.EnQue(xLocal);
    xLocal = inQueue.DeQue<float>();
    AscendC::LocalTensor<float> yLocal = outQueue.AllocTensor<float>();
    AscendC::Muls(yLocal, xLocal, scale, blockLength);
    AscendC::Adds(yLocal, yLocal, 1.0f, blockLength);
    outQueue.EnQue<float>(yLocal);
    inQueue.FreeTensor(xLocal);
    yLocal = outQueue.DeQue<float>();
    AscendC::DataCopy(yGm, yLocal, blockLength);
    outQueue.FreeTensor(yLocal);
}
"""

ACL_MAIN = """\
int32_t main(int32_t argc, char* argv[])
{
    uint32_t numBlocks = 4;
    constexpr uint32_t totalLength = 4 * 512;
    size_t byteSize = totalLength * sizeof(float);
    uint8_t* xHost = nullptr;
    uint8_t* yHost = nullptr;
    uint8_t* xDevice = nullptr;
    uint8_t* yDevice = nullptr;

    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMallocHost((void**)(&xHost), byteSize);
    aclrtMallocHost((void**)(&yHost), byteSize);
    aclrtMalloc((void**)&xDevice, byteSize, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&yDevice, byteSize, ACL_MEM_MALLOC_HUGE_FIRST);
    size_t got = 0;
    if (!ReadFile("./input/input_x.bin", got, xHost, byteSize)) {
        return 7;
    }
    aclrtMemcpy(xDevice, byteSize, xHost, byteSize, ACL_MEMCPY_HOST_TO_DEVICE);
    float scale = argc > 1 ? std::atof(argv[1]) : 2.0f;
    axpb_custom<<<numBlocks, nullptr, stream>>>(xDevice, yDevice, totalLength, scale);
    aclError ret = aclrtSynchronizeStream(stream);
    aclrtMemcpy(yHost, byteSize, yDevice, byteSize, ACL_MEMCPY_DEVICE_TO_HOST);
    WriteFile("./output/output.bin", yHost, byteSize);
    std::printf("synchronize: %d\\n", ret);
    aclrtFree(xDevice);
    aclrtFree(yDevice);
    aclrtFreeHost(xHost);
    aclrtFreeHost(yHost);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, f"the program has no {old!r}"
    return text.replace(old, new, 1)


def write_program(folder: Path, name: str, text: str, with_data: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data_utils.h").write_text(DATA_UTILS)
    path = folder / name
    path.write_text(text)
    if with_data:
        (folder / "input").mkdir(exist_ok=True)
        (folder / "output").mkdir(exist_ok=True)
    return path


def expect_line(path: Path, code: str) -> int:
    lines = [i for i, t in enumerate(path.read_text().splitlines(), 1) if re.search(rf"//\s*expect:\s*{code}\b", t)]
    assert len(lines) == 1, f"{path.name} marks {len(lines)} lines with expect: {code}"
    return lines[0]


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


def all_diagnostics(report: ProgramReport):
    return list(report.diagnostics) + [d for lr in report.launches for d in lr.diagnostics]


def run(settings: EvalSettings, path: Path, *args: str, **kw) -> ProgramReport:
    return run_program(path, list(args), settings, cwd=path.parent, **kw)


# ---- the rewrite (no compiler) ----

def test_rewrite_keeps_lines_and_skips_comments_and_strings():
    src = (b"// launch it as k<<<8, nullptr, s>>>(x);\n"
           b'const char* doc = "k<<<1, nullptr, s>>>(x)";\n'
           b"void f() {\n"
           b"    ns::add<256><<<blocks, nullptr,\n"
           b"        stream>>>(a, (uint8_t*)b + 4,\n"
           b"                  n);\n"
           b"}\n")
    rw = rewrite(src)
    assert len(rw.launches) == 1
    ln = rw.launches[0]
    assert (ln.kernel, ln.line, ln.column) == ("ns::add<256>", 4, 5)
    assert ln.args == ["a", "(uint8_t*)b + 4", "n"]
    assert rw.text.count("\n") == src.count(b"\n")
    out = rw.text.splitlines()
    assert out[0].startswith("// launch it as k<<<") and "k<<<1" in out[1]
    assert "::sage::sim::kernel_launch(" in out[3] and "ns::add<256>, blocks, nullptr," in out[3]
    assert out[4] == "        stream)(a, (uint8_t*)b + 4,"


def test_launch_configuration_on_its_own_line():
    src = b"    pad<ROWS, COLS>\n        <<<numBlocks, nullptr, stream>>>(xDevice, zDevice);\n"
    rw = rewrite(src)
    (ln,) = rw.launches
    assert (ln.kernel, ln.line, ln.args) == ("pad<ROWS, COLS>", 1, ["xDevice", "zDevice"])
    lines = rw.text.splitlines()
    assert lines[0].endswith("pad<ROWS, COLS>")
    assert lines[1] == "        , numBlocks, nullptr, stream)(xDevice, zDevice);"


def test_columns_on_a_rewritten_line_map_back_to_the_original():
    src = b"    k<<<8, nullptr, s>>>(x, y);\n"
    rw = rewrite(src)
    new = rw.text.splitlines()[0]
    edits = rw.edits[1]
    for token in ("k", "8", "nullptr", "x", "y", ";"):
        orig_col = src.decode().index(token, 4) + 1
        new_col = new.index(token, new.index("}, ") + 3 if token == "k" else new.index("}, ")) + 1
        assert map_column(edits, new_col) == orig_col, token
    assert map_column(edits, 2) == 2  # before the launch: untouched


# ---- running programs ----

def test_acl_program_reads_and_writes_its_files(tmp_path, settings):
    path = write_program(tmp_path / "axpb", "axpb.asc", AXPB_KERNEL + ACL_MAIN)
    x = np.arange(2048, dtype=np.float32) / 7
    x.tofile(path.parent / "input" / "input_x.bin")
    report = run(settings, path, "3.0", stdout=None)
    assert report.status == "ok", report.model_dump_json(indent=2)
    assert report.exit_code == 0 and report.program_exit_code == 0
    out = np.fromfile(path.parent / "output" / "output.bin", dtype=np.float32)
    np.testing.assert_allclose(out, x * 3 + 1, rtol=1e-6)
    assert "synchronize: 0" in report.stdout
    (launch,) = report.launches
    assert (launch.kernel, launch.block_dim, launch.status) == ("axpb_custom", 4, "ok")
    assert launch.line == line_of(path, "axpb_custom<<<") and launch.column == 5
    assert launch.timing is not None and launch.timing.estimated_us > 0
    assert not all_diagnostics(report)
    # Program mode runs through the sandbox's one entry, which records the layers that held.
    assert "seccomp" in report.protections
    assert ("nobody" in report.protections) == (os.geteuid() == 0)


def test_faulting_launch_is_reported_at_its_line_and_fails_the_stream(tmp_path, settings):
    kernel = edit(AXPB_KERNEL, "AscendC::DataCopy(yGm, yLocal, blockLength);",
                  "AscendC::DataCopy(yGm, yLocal, blockLength + 8);  // expect: ub-out-of-bounds")
    main = edit(ACL_MAIN, "    aclrtMemcpy(yHost, byteSize, yDevice, byteSize, ACL_MEMCPY_DEVICE_TO_HOST);",
                "    aclrtMemcpy(yHost, byteSize + 4, yDevice, byteSize + 4, "
                "ACL_MEMCPY_DEVICE_TO_HOST);  // expect: gm-out-of-bounds")
    path = write_program(tmp_path / "oob", "oob.asc", kernel + main)
    np.zeros(2048, dtype=np.float32).tofile(path.parent / "input" / "input_x.bin")
    report = run(settings, path, stdout=None)
    assert report.status == "faulted" and report.exit_code == 1
    (launch,) = report.launches
    assert launch.status == "runtime_error"
    (d,) = [d for d in launch.diagnostics if d.code == "ub-out-of-bounds"]
    assert (Path(d.file), d.line) == (path, expect_line(path, "ub-out-of-bounds"))
    # On the device a faulting kernel fails the next synchronisation; the program sees it.
    assert "synchronize: 507015" in report.stdout
    # The host copy past the end of a device buffer, at its own line, naming the buffer by the launch's argument.
    (h,) = [d for d in report.diagnostics if d.code == "gm-out-of-bounds"]
    assert (Path(h.file), h.line) == (path, expect_line(path, "gm-out-of-bounds"))
    assert "'yDevice'" in h.message


def test_cpu_debug_program_with_gmalloc_and_icpu_run_kf(tmp_path, settings):
    text = """\
#include "kernel_operator.h"
#include "acl/acl.h"
#include "tikicpulib.h"
#include "data_utils.h"

struct NegTiling {
    uint32_t blockLength;
};

extern "C" __global__ __aicore__ void neg_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(NegTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + t.blockLength * AscendC::GetBlockIdx(), t.blockLength);
    yGm.SetGlobalBuffer((__gm__ half*)y + t.blockLength * AscendC::GetBlockIdx(), t.blockLength);
    pipe.InitBuffer(buf, t.blockLength * sizeof(half));
    AscendC::LocalTensor<half> v = buf.Get<half>();
    AscendC::DataCopy(v, xGm, t.blockLength);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(v, v, (half)-1.0f, t.blockLength);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, v, t.blockLength);
}

int32_t main(int32_t argc, char* argv[])
{
    uint32_t blockDim = 2;
    size_t n = 2 * 128;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(n * sizeof(half));
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(n * sizeof(half));
    uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(sizeof(NegTiling));
    reinterpret_cast<NegTiling*>(tiling)->blockLength = 128;
    for (size_t i = 0; i < n; ++i) {
        reinterpret_cast<uint16_t*>(x)[i] = aclFloatToFloat16(float(i) / 4);
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(neg_custom, blockDim, x, y, tiling);
    WriteFile("./output/output.bin", y, n * sizeof(half));
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    AscendC::GmFree((void*)tiling);
    return 0;
}
"""
    path = write_program(tmp_path / "neg", "neg.cpp", text)
    report = run(settings, path, stdout=None)
    assert report.status == "ok", report.model_dump_json(indent=2)
    out = np.fromfile(path.parent / "output" / "output.bin", dtype=np.float16)
    np.testing.assert_array_equal(out, -(np.arange(256, dtype=np.float16) / 4))
    (launch,) = report.launches
    assert (launch.kernel, launch.block_dim, launch.line) == ("neg_custom", 2, line_of(path, "ICPU_RUN_KF("))
    assert launch.timing is not None


TEMPLATE_PROGRAM = """\
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"

template <uint32_t blockLength>
__global__ __vector__ void fill_custom(__gm__ float* z, float value)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    AscendC::GlobalTensor<float> zGm;
    zGm.SetGlobalBuffer(z + blockLength * AscendC::GetBlockIdx(), blockLength);
    pipe.InitBuffer(buf, blockLength * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    AscendC::Duplicate(v, value, blockLength);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, v, blockLength);
}

int main()
{
    constexpr uint32_t total = 4 * 256;
    float* zDevice = nullptr;
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMalloc((void**)&zDevice, total * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    fill_custom<256><<<4, nullptr, stream>>>(zDevice, 1.5f);
    aclrtSynchronizeStream(stream);
    fill_custom<128><<<8, nullptr, stream>>>(zDevice, 2.5f);
    aclrtSynchronizeStream(stream);
    std::vector<float> z(total);
    aclrtMemcpy(z.data(), total * sizeof(float), zDevice, total * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("z[0]=%g z[1023]=%g\\n", z[0], z[total - 1]);
    aclrtFree(zDevice);
    return z[0] == 2.5f ? 3 : 4;
}
"""


def test_template_kernel_launched_twice_gives_two_reports_and_the_exit_code(tmp_path, settings):
    path = write_program(tmp_path / "fill", "fill.asc", TEMPLATE_PROGRAM, with_data=False)
    report = run(settings, path, stdout=None)
    assert report.status == "failed" and report.exit_code == 3 and report.program_exit_code == 3
    assert "z[0]=2.5 z[1023]=2.5" in report.stdout
    first, second = report.launches
    assert (first.index, first.kernel, first.block_dim, first.status) == (1, "fill_custom<256>", 4, "ok")
    assert (second.index, second.kernel, second.block_dim, second.status) == (2, "fill_custom<128>", 8, "ok")
    assert first.line == line_of(path, "fill_custom<256><<<") and second.line == line_of(path, "fill_custom<128><<<")
    assert first.timing is not None and second.timing is not None


def test_compile_error_names_the_original_line_and_column(tmp_path, settings):
    text = edit(TEMPLATE_PROGRAM, "fill_custom<128><<<8, nullptr, stream>>>(zDevice, 2.5f);",
                "fill_custom<128><<<8, nullptr, stream>>>(zDevice, 2.5f, undefinedName);")
    path = write_program(tmp_path / "bad", "bad.asc", text, with_data=False)
    report = run(settings, path)
    assert report.status == "compile_error" and report.exit_code == 1 and not report.launches
    line = line_of(path, "undefinedName")
    (d,) = [d for d in report.diagnostics if d.line == line]
    assert Path(d.file) == path and "undefinedName" in d.message
    assert d.column == path.read_text().splitlines()[line - 1].index("undefinedName") + 1


def test_cube_api_gets_one_actionable_line(tmp_path, settings):
    text = edit(TEMPLATE_PROGRAM, "    AscendC::PipeBarrier<PIPE_ALL>();\n",
                "    AscendC::MmadBitMode(v, v, v, AscendC::MmadParams());\n")
    path = write_program(tmp_path / "cube", "cube.asc", text, with_data=False)
    report = run(settings, path)
    assert report.status == "compile_error"
    msgs = [d for d in report.diagnostics if "MmadBitMode" in d.message]
    assert msgs and msgs[0].line == line_of(path, "AscendC::MmadBitMode(")
    assert "cube" in msgs[0].message and "not emulate" in msgs[0].message and len(msgs[0].message) <= 200


def test_hanging_program_ends_in_a_timeout_report(tmp_path, settings):
    text = edit(TEMPLATE_PROGRAM, "    aclrtFree(zDevice);\n", "    while (z[0] > 0) {\n        z[1] += 1;\n    }\n")
    path = write_program(tmp_path / "hang", "hang.asc", text, with_data=False)
    report = run(settings, path, timeout_s=1.5)
    assert report.status == "timeout" and report.exit_code == 1
    assert [lr.status for lr in report.launches] == ["ok", "ok"]
    (d,) = [d for d in report.diagnostics if d.code == "timeout"]
    assert "host code" in d.message and "2 kernel launch" in d.message
    # The program counter the timeout stopped names the loop (symbolized in a twin with line tables).
    assert Path(d.file) == path and d.line in (line_of(path, "while (z[0] > 0)"), line_of(path, "z[1] += 1"))


def test_cli_json_report_and_exit_code(tmp_path, settings, capfd):
    path = write_program(tmp_path / "axpb", "axpb.asc", AXPB_KERNEL + ACL_MAIN)
    np.ones(2048, dtype=np.float32).tofile(path.parent / "input" / "input_x.bin")
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true")
    common.add_argument("--chip")
    add_run_parser(sub, common)
    args = parser.parse_args(["run", str(path), "--json", "--", "0.5"])
    old = os.getcwd()
    os.chdir(path.parent)
    try:
        code = args.func(args, lambda: settings)
    finally:
        os.chdir(old)
    out = capfd.readouterr().out
    data = json.loads(out)
    assert code == 0 and data["status"] == "ok" and data["args"] == ["0.5"]
    assert data["launches"][0]["kernel"] == "axpb_custom" and "synchronize: 0" in data["stdout"]
    np.testing.assert_allclose(np.fromfile(path.parent / "output" / "output.bin", dtype=np.float32), 1.5)


def test_missing_program_is_a_usage_error(tmp_path, capfd):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub, [])
    args = parser.parse_args(["run", str(tmp_path / "nope.asc")])
    assert args.func(args) == 2
    assert "no such file" in capfd.readouterr().err


def test_crash_in_a_kernel_names_the_launch(tmp_path, settings):
    text = edit(TEMPLATE_PROGRAM,
        "    AscendC::DataCopy(zGm, v, blockLength);\n",
        "    AscendC::DataCopy(zGm, v, blockLength);\n    if (value > 2.0f) {\n"
        "        *(volatile int*)nullptr = 1;\n    }\n")
    path = write_program(tmp_path / "crash", "crash.asc", text, with_data=False)
    report = run(settings, path)
    assert report.status == "crash" and report.exit_code == 1
    first, second = report.launches
    assert first.status == "ok" and second.status == "crash"
    (d,) = [d for d in second.diagnostics if d.code == "crash"]
    assert "SIGSEGV" in d.message and "null pointer" in d.message
    assert Path(d.file) == path and d.line == line_of(path, "AscendC::DataCopy(zGm, v, blockLength);")


FRESH_MEMORY = """\
#include <cstdio>
#include "acl/acl.h"

int main()
{
    unsigned char host[4] = {1, 1, 1, 1};
    void* dev = nullptr;
    aclrtMalloc(&dev, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(host, sizeof(host), dev, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("fresh: %d %d\\n", host[0], host[3]);
    aclrtFree(dev);
    return 0;
}
"""


@pytest.mark.parametrize("flags,expected", [([], "fresh: 0 0"), (["--strict-device-memory"], "fresh: 90 90"),
                                            (["--zero-device-memory"], "fresh: 0 0")])
def test_cli_fresh_device_memory_is_zero_unless_strict(tmp_path, settings, capfd, flags, expected):
    path = write_program(tmp_path / "fresh", "fresh.cpp", FRESH_MEMORY, with_data=False)
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true")
    add_run_parser(sub, common)
    args = parser.parse_args(["run", str(path), "--json", *flags])
    old = os.getcwd()
    os.chdir(path.parent)   # the run works in a copy of the current directory
    try:
        assert args.func(args, lambda: settings) == 0
    finally:
        os.chdir(old)
    data = json.loads(capfd.readouterr().out)
    assert expected in data["stdout"], data["stdout"]


UNWRITTEN_READS = """\
#include "acl/acl.h"
#include "kernel_operator.h"

// Reads x (each scenario at its own line, so each can be reported) and writes z.
__global__ __vector__ void probe(__gm__ float* x, __gm__ float* z, uint32_t which)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    AscendC::GlobalTensor<float> xGm, zGm;
    xGm.SetGlobalBuffer(x, 64);
    zGm.SetGlobalBuffer(z, 64);
    pipe.InitBuffer(buf, 64 * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    if (which == 0) AscendC::DataCopy(v, xGm, 64);  // read: copied in whole
    if (which == 1) AscendC::DataCopy(v, xGm, 64);  // read: half copied in
    if (which == 2) AscendC::DataCopy(v, xGm, 64);  // read: set by aclrtMemset
    if (which == 3) AscendC::DataCopy(v, xGm, 64);  // read: written by the previous launch
    if (which == 4) AscendC::DataCopy(v, xGm, 64);  // read: device-to-device copy of unwritten memory
    if (which == 5) v.SetValue(0, xGm.GetValue(63));  // read: one element nobody wrote
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, v, 64);
}

int main()
{
    constexpr size_t bytes = 64 * sizeof(float);
    float host[64];
    for (int i = 0; i < 64; ++i) host[i] = float(i);
    aclrtSetDevice(0);
    float *x[6], *z = nullptr, *blank = nullptr;
    for (auto& p : x) aclrtMalloc((void**)&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&z, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&blank, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x[0], bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(x[1], bytes, host, bytes / 2, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemset(x[2], bytes, 0, bytes);
    aclrtMemcpy(x[4], bytes, blank, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE);
    aclrtMemcpy(x[5], bytes, host, bytes / 2, ACL_MEMCPY_HOST_TO_DEVICE);
    for (uint32_t which = 0; which < 3; ++which) probe<<<1, nullptr, nullptr>>>(x[which], z, which);
    probe<<<1, nullptr, nullptr>>>(x[0], x[3], 0);  // a kernel writes x[3] ...
    probe<<<1, nullptr, nullptr>>>(x[3], z, 3);     // ... so this read is fine
    probe<<<1, nullptr, nullptr>>>(x[4], z, 4);
    probe<<<1, nullptr, nullptr>>>(x[5], z, 5);
    aclrtSynchronizeDevice();
    return 0;
}
"""


def test_a_kernel_reading_device_memory_nobody_wrote_gets_a_warning_at_its_line(tmp_path, settings):
    path = write_program(tmp_path / "unwritten", "unwritten.asc", UNWRITTEN_READS, with_data=False)
    report = run(settings, path)
    assert report.status == "ok", report.diagnostics
    found = {(d.line, d.severity): d.message for lr in report.launches for d in lr.diagnostics
             if d.code == "uninitialized-gm-read"}
    bad = {line_of(path, f"// read: {what}") for what in ("half copied in", "device-to-device copy",
                                                          "one element nobody wrote")}
    assert {line for line, _ in found} == bad, found
    assert {sev for _, sev in found} == {"warning"}
    half = found[(line_of(path, "// read: half copied in"), "warning")]
    assert "x[32]" not in half and "[32]" in half and "aclrtMalloc at unwritten.asc:" in half, half
    assert "[63]" in found[(line_of(path, "// read: one element nobody wrote"), "warning")]


HELLO = """\
#include "utils/debug/asc_printf.h"
#include "debug/asc_printf.h"
#include "acl/acl.h"

__global__ __vector__ void hello_world() { printf("Hello from block %d\\\\n", int(AscendC::GetBlockIdx())); }

int main()
{
    aclrtSetDevice(0);
    hello_world<<<2, nullptr, nullptr>>>();
    aclrtSynchronizeDevice();
    return 0;
}
"""


def test_the_device_printf_header_at_asc_devkits_path_and_the_older_one(tmp_path, settings):
    path = write_program(tmp_path / "hello", "hello.asc", HELLO, with_data=False)
    report = run(settings, path, stdout=None)
    assert report.status == "ok", report.diagnostics
    assert "Hello from block 0" in report.stdout and "Hello from block 1" in report.stdout, report.stdout


# A launch argument that is host memory: legal while the kernel never reads it (the samples pass
# an unset bias pointer when there is no bias); a read through it faults at the kernel's line.
HOST_ARG = """\
#include <cstdlib>
#include "acl/acl.h"
#include "kernel_operator.h"

__global__ __vector__ void scale(__gm__ float* x, __gm__ float* bias, __gm__ float* z, uint32_t useBias)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    AscendC::GlobalTensor<float> xGm, biasGm, zGm;
    xGm.SetGlobalBuffer(x, 64);
    biasGm.SetGlobalBuffer(bias, 64);
    zGm.SetGlobalBuffer(z, 64);
    pipe.InitBuffer(buf, 64 * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    AscendC::DataCopy(v, xGm, 64);
    if (useBias) AscendC::DataCopy(v, biasGm, 64);  // read: bias
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zGm, v, 64);
}

int main(int argc, char** argv)
{
    constexpr size_t bytes = 64 * sizeof(float);
    float host[64] = {};
    aclrtSetDevice(0);
    float *x = nullptr, *z = nullptr;
    float* garbage = reinterpret_cast<float*>(std::malloc(bytes));  // host memory, never copied to the device
    aclrtMalloc((void**)&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&z, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    uint32_t useBias = argc > 1 ? 1 : 0;
    scale<<<1, nullptr, nullptr>>>(x, garbage, z, useBias);
    aclrtSynchronizeDevice();
    return 0;
}
"""


def test_a_host_pointer_argument_the_kernel_never_reads_runs_clean(tmp_path, settings):
    path = write_program(tmp_path / "hostarg", "hostarg.asc", HOST_ARG, with_data=False)
    report = run(settings, path)
    assert report.status == "ok" and all_diagnostics(report) == [], all_diagnostics(report)


def test_a_read_through_a_host_pointer_argument_faults_at_the_kernels_line(tmp_path, settings):
    path = write_program(tmp_path / "hostarg", "hostarg.asc", HOST_ARG, with_data=False)
    report = run(settings, path, "use-bias")
    assert report.status == "faulted"
    (d,) = [d for d in all_diagnostics(report) if d.severity == "error"]
    assert d.line == line_of(path, "// read: bias") and Path(d.file) == path, d
    assert "argument 2 ('garbage') of scale" in d.message and "host memory" in d.message, d.message
    assert "aclrtMalloc" in d.message


# asc_dump (asc-devkit utils/debug/asc_dump.h): elements from a raw GM or local-memory address,
# in DumpTensor's format; the named forms check the memory their name says.
ASC_DUMP = """\
#include "acl/acl.h"
#include "kernel_operator.h"
#include "utils/debug/asc_dump.h"

__global__ __vector__ void show(__gm__ float* x, uint32_t misuse)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(x, 64);
    pipe.InitBuffer(buf, 64 * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    AscendC::DataCopy(v, xGm, 64);
    AscendC::PipeBarrier<PIPE_ALL>();
    asc_dump_gm<float>(x + 1, 7, 4);
    asc_dump_ubuf<float>((__ubuf__ float*)v.GetPhyAddr(), 8, 3);
    asc_dump<float>((__ubuf__ float*)v.GetPhyAddr(2), 9, 2);
    if (misuse) asc_dump_l1buf<float>((__cbuf__ float*)v.GetPhyAddr(), 10, 4);  // misuse: not L1
}

int main(int argc, char** argv)
{
    constexpr size_t bytes = 64 * sizeof(float);
    float host[64];
    for (int i = 0; i < 64; ++i) host[i] = float(i) + 0.5f;
    aclrtSetDevice(0);
    float* x = nullptr;
    aclrtMalloc((void**)&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    show<<<1, nullptr, nullptr>>>(x, argc > 1 ? 1 : 0);
    aclrtSynchronizeDevice();
    return 0;
}
"""


def test_asc_dump_prints_each_memory_in_the_dumptensor_format(tmp_path, settings):
    path = write_program(tmp_path / "ascdump", "ascdump.asc", ASC_DUMP, with_data=False)
    report = run(settings, path)
    assert report.status == "ok", all_diagnostics(report)
    assert ("DumpTensor: desc=7, data_type=float32, position=GM, block=0\n[1.5, 2.5, 3.5, 4.5]\n"
            in report.stdout), report.stdout
    assert "desc=8, addr=0, data_type=float32, position=UB, block=0\n[0.5, 1.5, 2.5]\n" in report.stdout
    assert "desc=9, addr=8, data_type=float32, position=UB, block=0\n[2.5, 3.5]\n" in report.stdout


def test_asc_dump_l1buf_on_a_ub_address_is_misuse_at_its_line(tmp_path, settings):
    path = write_program(tmp_path / "ascdump", "ascdump.asc", ASC_DUMP, with_data=False)
    report = run(settings, path, "misuse")
    assert report.status == "faulted"
    (d,) = [d for d in all_diagnostics(report) if d.severity == "error"]
    assert d.code == "api-misuse" and d.line == line_of(path, "// misuse: not L1"), d
    assert "asc_dump_l1buf" in d.message and "Unified Buffer" in d.message and "L1 Buffer" in d.message, d.message
