"""The host tiling library's foundation: platform_ascendc::PlatformAscendC answers with the chip
profile's numbers (npu_eval/chips.py passes them as SAGE_CHIP_* defines, so C++ and Python read one
definition), and the GE shape types and `tiling/tiling_api.h` are found at the paths CANN host code
includes them by, in a plain host build and in program mode (`sage-npu run`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sage_npu.npu_eval.build import compile_flags
from sage_npu.npu_eval.chips import CHIPS, ChipProfile
from sage_npu.npu_eval.program import run_program
from sage_npu.npu_eval.settings import EvalSettings

HOST = r"""
#include <cstdio>
#include "tiling/tiling_api.h"

using platform_ascendc::CoreMemType;

int main()
{
    auto* p = platform_ascendc::PlatformAscendCManager::GetInstance();
    uint64_t l0a, l0b, l0c, l1, l2, ub, hbm, bw;
    p->GetCoreMemSize(CoreMemType::L0_A, l0a);
    p->GetCoreMemSize(CoreMemType::L0_B, l0b);
    p->GetCoreMemSize(CoreMemType::L0_C, l0c);
    p->GetCoreMemSize(CoreMemType::L1, l1);
    p->GetCoreMemSize(CoreMemType::L2, l2);
    p->GetCoreMemSize(CoreMemType::UB, ub);
    p->GetCoreMemSize(CoreMemType::HBM, hbm);
    p->GetCoreMemBw(CoreMemType::HBM, bw);
    std::printf("aiv %u\naic %u\ncore %u\nvector %u\nworkspace %u\nsoc %d\n", p->GetCoreNumAiv(),
                p->GetCoreNumAic(), p->GetCoreNum(), p->GetCoreNumVector(), p->GetLibApiWorkSpaceSize(),
                static_cast<int>(p->GetSocVersion()));
    std::printf("l0a %llu\nl0b %llu\nl0c %llu\nl1 %llu\nl2 %llu\nub %llu\nhbm %llu\nbw %llu\n",
                (unsigned long long)l0a, (unsigned long long)l0b, (unsigned long long)l0c,
                (unsigned long long)l1, (unsigned long long)l2, (unsigned long long)ub,
                (unsigned long long)hbm, (unsigned long long)bw);
    platform_ascendc::PlatformAscendC fromContext(nullptr);  // op_host: PlatformAscendC(context->GetPlatformInfo())
    std::printf("same %d\n", fromContext.GetCoreNumAiv() == p->GetCoreNumAiv() ? 1 : 0);
    std::printf("blocks %u\n", p->CalcTschNumBlocks(p->GetCoreNumAiv(), p->GetCoreNumAic(), p->GetCoreNumAiv()));
    AscendC::TensorShape shape{{4, 16}};
    ge::Shape empty;
    std::printf("dims %zu\nsize %lld\nempty %lld\n", shape.GetDimNum(), (long long)shape.GetShapeSize(),
                (long long)empty.GetShapeSize());
    return 0;
}
"""

SOC = {"ASCEND910B": 1, "ASCEND310P": 2}  # their places in platform_ascendc::SocVersion


def host_answers(tmp_path: Path, chip: ChipProfile) -> dict[str, int]:
    src = tmp_path / "host.cpp"
    src.write_text(HOST)
    binary = tmp_path / f"host_{chip.name}"
    build = subprocess.run(["g++", *compile_flags(chip, "-O0", {}), str(src), "-o", str(binary)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    out = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


@pytest.mark.parametrize("name", ["910B2", "910B4", "310P3"])
def test_the_platform_library_answers_with_the_chip_profile(tmp_path, name):
    chip = CHIPS[name]
    got = host_answers(tmp_path, chip)
    assert got["aiv"] == chip.vector_cores and got["aic"] == chip.cube_cores
    assert got["core"] == chip.vector_cores  # Vector cores on Atlas A2, AI Cores on the (coupled) 310P
    assert got["vector"] == chip.standalone_vector_cores
    assert got["workspace"] == chip.lib_api_workspace_bytes
    assert got["soc"] == SOC[chip.soc_version]
    assert (got["l0a"], got["l0b"], got["l0c"], got["l1"]) == (chip.l0a_bytes, chip.l0b_bytes, chip.l0c_bytes,
                                                                chip.l1_bytes)
    assert (got["l2"], got["ub"], got["hbm"]) == (chip.l2_bytes, chip.ub_bytes, chip.hbm_bytes)
    assert got["bw"] == chip.hbm_bytes_per_cycle() > 0
    assert got["same"] == 1
    ratio = max(1, chip.vector_cores // chip.cube_cores)
    assert got["blocks"] == -(-chip.vector_cores // ratio)
    assert (got["dims"], got["size"], got["empty"]) == (2, 64, 0)


def test_atlas_a2_figures_are_the_documented_ones():
    # asc-devkit docs/zh/guide/.../NPU架构版本2201.md: UB 192 KB, L1 512 KB, L0A/L0B 64 KB, L0C 128 KB.
    chip = CHIPS["910B2"]
    assert (chip.ub_bytes, chip.l1_bytes, chip.l0a_bytes, chip.l0b_bytes, chip.l0c_bytes) == (
        192 * 1024, 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024)
    assert chip.soc_version == "ASCEND910B"


PROGRAM = r"""#include <cstdio>
#include "acl/acl.h"
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
#include "tiling/platform/platform_ascendc.h"

__global__ __vector__ void noop(GM_ADDR x) {}

int32_t main()
{
    auto* p = platform_ascendc::PlatformAscendCManager::GetInstance();
    AscendC::TensorShape shape{{16}};
    std::printf("cores %u elems %lld\n", p->GetCoreNumAiv(), (long long)shape.GetShapeSize());
    return 0;
}
"""


def test_program_mode_host_code_finds_the_tiling_library(tmp_path):
    path = tmp_path / "prog" / "prog.asc"
    path.parent.mkdir()
    path.write_text(PROGRAM)
    report = run_program(path, [], EvalSettings(cache_dir=tmp_path / "cache"), cwd=path.parent, stdout=None)
    assert report.status == "ok", report.diagnostics
    assert f"cores {CHIPS['910B2'].vector_cores} elems 16" in report.stdout, report.stdout


def test_a_task_modes_op_host_tiling_header_finds_it(tmp_path):
    # Task mode compiles op_host/<op>_tiling.h into the kernel (SAGE_TILING_HEADER, see
    # kernel_tiling/kernel_tiling.h); CANN op projects include the tiling library there.
    (tmp_path / "op_host").mkdir()
    (tmp_path / "op_host" / "op_tiling.h").write_text(
        '#include "register/tilingdata_base.h"\n#include "tiling/tiling_api.h"\n'
        "BEGIN_TILING_DATA_DEF(OpTiling)\nTILING_DATA_FIELD_DEF(uint32_t, tmpSize);\nEND_TILING_DATA_DEF;\n"
        "inline uint32_t Cores() { return platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreNum(); }\n")
    kernel = tmp_path / "op.cpp"
    kernel.write_text('#include "kernel_operator.h"\nstatic_assert(sizeof(OpTiling) == 4, "tiling");\n')
    flags = compile_flags(CHIPS["910B2"], "-O0", {"SAGE_TILING_HEADER": '"op_host/op_tiling.h"'})
    build = subprocess.run(["g++", *flags, "-iquote", str(tmp_path), "-fsyntax-only", str(kernel)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
