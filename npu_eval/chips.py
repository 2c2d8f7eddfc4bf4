"""Chip profiles: the numbers the emulator and the cost model need, each with its source.

Public figures; the cost model's error against a device is unknown until `sage-npu calibrate`.
"""

from __future__ import annotations

from pydantic import BaseModel


class ChipProfile(BaseModel):
    name: str
    family: int  # 910 (910B, Atlas A2) or 310 (310P): selects dtype support in the emulator
    vector_cores: int
    cube_cores: int
    clock_ghz: float
    hbm_gbps: float
    ub_bytes: int  # usable by TPipe::InitBuffer: past it is an ub-overflow error
    ub_reserved_bytes: int = 0  # the top of ub_bytes that is risky: reaching into it is a warning
    npu_arch: int  # __NPU_ARCH__, which the device compiler defines for AI Core code (see _NPU_ARCH_SOURCE)
    # What the host tiling library's platform_ascendc::PlatformAscendC reports (tiling/platform/platform_ascendc.h)
    soc_version: str  # its SocVersion enumerator: ASCEND910B (Atlas A2) or ASCEND310P
    standalone_vector_cores: int = 0  # GetCoreNumVector: the 310P's separate Vector Cores; 0 on Atlas A2
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    bt_bytes: int  # the BiasTable buffer (TPosition C2) Mmad's bias is read from; 0: the chip has none
    fb_bytes: int  # the Fixpipe buffer (TPosition C2PIPE2GM): per-column quantisation words; 0: the chip has none
    l2_bytes: int
    hbm_bytes: int
    lib_api_workspace_bytes: int  # GetLibApiWorkSpaceSize: the system workspace the advanced API reserves
    sources: dict[str, str] = {}

    def compile_defines(self) -> dict[str, str]:
        return {
            "SAGE_CHIP_NAME": f'"{self.name}"',
            "SAGE_CHIP_UB_BYTES": str(self.ub_bytes),
            "SAGE_CHIP_UB_RESERVED_BYTES": str(self.ub_reserved_bytes),
            "SAGE_CHIP_FAMILY": str(self.family),
            # Kernels choose code per architecture with `#if __NPU_ARCH__ == 2201`; undefined, such
            # branches vanish silently and the kernel computes something else.
            "__NPU_ARCH__": str(self.npu_arch),
            # The host tiling library (PlatformAscendC) answers from these; the C++ side defines nothing twice.
            "SAGE_CHIP_SOC_VERSION": self.soc_version,
            "SAGE_CHIP_VECTOR_CORES": str(self.vector_cores),
            "SAGE_CHIP_CUBE_CORES": str(self.cube_cores),
            "SAGE_CHIP_STANDALONE_VECTOR_CORES": str(self.standalone_vector_cores),
            "SAGE_CHIP_L1_BYTES": str(self.l1_bytes),
            "SAGE_CHIP_L0A_BYTES": str(self.l0a_bytes),
            "SAGE_CHIP_L0B_BYTES": str(self.l0b_bytes),
            "SAGE_CHIP_L0C_BYTES": str(self.l0c_bytes),
            "SAGE_CHIP_BT_BYTES": str(self.bt_bytes),
            "SAGE_CHIP_FB_BYTES": str(self.fb_bytes),
            "SAGE_CHIP_L2_BYTES": str(self.l2_bytes),
            "SAGE_CHIP_HBM_BYTES": str(self.hbm_bytes),
            "SAGE_CHIP_HBM_BYTES_PER_CYCLE": str(self.hbm_bytes_per_cycle()),
            "SAGE_CHIP_LIB_API_WORKSPACE_BYTES": str(self.lib_api_workspace_bytes),
        }

    def hbm_bytes_per_cycle(self) -> int:
        """GetCoreMemBw(HBM): the chip's HBM bandwidth in bytes per AI Core clock cycle."""
        return int(self.hbm_gbps / self.clock_ghz)


_A2_SOURCE = "Ascend 910B public specs"
_UB_910B = ("UB 192 KB per vector core (Ascend C documentation). The top 8 KB are reserved on some CANN versions: "
            "data placed above 184 KB was seen silently corrupted (hw-native-sys/pto-isa issue 170), while a "
            "MultiKernelBench kernel using all 192 KB passes on hardware; so past 192 KB is an error, past 184 KB "
            "a warning")

_NPU_ARCH_SOURCE = ("asc-devkit docs/zh/guide/编程指南/语言扩展层/SIMD-BuiltIn关键字.md, __NPU_ARCH__: Atlas A2 "
                    "training/inference series (910B) 2201, Atlas inference series (310P) 2002")

_A2_MEMORY = ("asc-devkit docs/zh/guide/编程指南/高级编程/硬件实现/架构规格/NPU架构版本2201.md: L1 512 KB, L0A 64 KB, "
              "L0B 64 KB, L0C 128 KB, BiasTable 1 KB (ASC_BT_SIZE), Fixpipe Buffer 2 KB; L2 and HBM sizes from the "
              "910B public specs. L2 192 MB also in asc-devkit (82b89a15f263) examples/01_simd_cpp_api/"
              "05_best_practices/01_matrix_compute/matmul_high_performance/README_en.md:321 (Case 6) and "
              "docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/L2-Cache切分.md:5; the cost model's L2 cache "
              "(l2cache.py) holds that many bytes")
_WORKSPACE = ("16 MB on Atlas A2: the system workspace asc-devkit's advanced-API samples reserve "
              "(WORKSPACE_SIZE = 16 * 1024 * 1024) and GetLibApiWorkSpaceSize reports")

_A2_SOURCES = {"cores/clock/hbm": _A2_SOURCE, "ub": _UB_910B, "npu_arch": _NPU_ARCH_SOURCE,
               "memory": _A2_MEMORY, "lib_api_workspace": _WORKSPACE}


def _a2(name: str, vector_cores: int, clock_ghz: float, hbm_gbps: float,
        sources: dict[str, str] | None = None) -> ChipProfile:
    """A dav-2201 part (Atlas A2, and each die of Atlas A3): what differs between them is the core
    count, clock and HBM bandwidth."""
    return ChipProfile(name=name, family=910, vector_cores=vector_cores, cube_cores=vector_cores // 2,
                       clock_ghz=clock_ghz, hbm_gbps=hbm_gbps, ub_bytes=192 * 1024, ub_reserved_bytes=8 * 1024,
                       npu_arch=2201, soc_version="ASCEND910B", l1_bytes=512 * 1024, l0a_bytes=64 * 1024,
                       l0b_bytes=64 * 1024, l0c_bytes=128 * 1024, bt_bytes=1024, fb_bytes=2048, l2_bytes=192 * 1024**2,
                       hbm_bytes=64 * 1024**3,
                       lib_api_workspace_bytes=16 * 1024 * 1024, sources=sources or _A2_SOURCES)


# Atlas A3 (Ascend910_93): the same dav-2201 core; the runtime maps its SoC strings to ASCEND910B.
_A3_ARCH = ("asc-devkit .agent/skills/asc-npu-arch/references/npu-arch-guide.md: Ascend910_93's SocVersion maps to "
            "SocVersion::ASCEND910B at run time, NpuArch DAV_2201 (Atlas A3 training/inference series); "
            "cmake/asc/fwk_modules/util/const_var.py: ascend910_93 builds for Ascend910_9391")
_A3_SOURCES = {**_A2_SOURCES, "npu_arch": _NPU_ARCH_SOURCE + "; " + _A3_ARCH, "soc": _A3_ARCH,
               "cores/clock/hbm": ("assumption from public reporting on Atlas A3 (Ascend 910C): a package holds "
                                   "two 910B-class dies, each seen by the runtime as one device with 24 AI Cores "
                                   "(48 vector cores), 64 GB of HBM and half the package's ~3.2 TB/s; clock as "
                                   "910B2 (assumption: no public per-SKU figure found); UB and buffers: the dav-2201 "
                                   "figures above")}


CHIPS: dict[str, ChipProfile] = {
    p.name: p
    for p in [
        _a2("910B1", vector_cores=48, clock_ghz=1.85, hbm_gbps=1600),
        _a2("910B2", vector_cores=48, clock_ghz=1.8, hbm_gbps=1600),
        _a2("910B3", vector_cores=40, clock_ghz=1.8, hbm_gbps=1600),
        _a2("910B4", vector_cores=40, clock_ghz=1.5, hbm_gbps=800),
        _a2("910_9391", vector_cores=48, clock_ghz=1.8, hbm_gbps=1600, sources=_A3_SOURCES),
        ChipProfile(name="310P3", family=310, vector_cores=8, cube_cores=8, clock_ghz=1.06,
                    hbm_gbps=200, ub_bytes=248 * 1024, npu_arch=2002, soc_version="ASCEND310P",
                    standalone_vector_cores=7, l1_bytes=1024 * 1024, l0a_bytes=64 * 1024, l0b_bytes=64 * 1024,
                    l0c_bytes=256 * 1024, bt_bytes=0, fb_bytes=0, l2_bytes=96 * 1024**2, hbm_bytes=96 * 1024**3,
                    lib_api_workspace_bytes=2 * 1024 * 1024,
                    sources={"cores/clock": "Atlas 300I Duo (310P3) public specs",
                             "ub": "256 KB per AI core, 248 KB usable (Ascend C documentation)",
                             "hbm": "LPDDR4X ~204.8 GB/s, public specs", "npu_arch": _NPU_ARCH_SOURCE,
                             "memory": "Atlas 300I Duo (310P3) public specs: 8 AI Cores and 7 Vector Cores, "
                                       "L1 1 MB, L0C 256 KB, 96 MB L2, 96 GB LPDDR4X per card; no BiasTable (C2 "
                                       "maps to L0C on __NPU_ARCH__ 2002, asc-devkit kernel_utils_mode_cpu.h); "
                                       "no Fixpipe Buffer (Fixpipe is not supported there, its doc page)",
                             "lib_api_workspace": "2 MB on the 310P (CANN's platform library)"}),
    ]
}

DEFAULT_CHIP = "910B2"


class UnknownChip(ValueError):
    pass


def chip_profile(name: str) -> ChipProfile:
    try:
        return CHIPS[name]
    except KeyError:
        raise UnknownChip(f"unknown chip {name!r}; known chips: {', '.join(CHIPS)}") from None


def local_memories(chip: ChipProfile) -> list[tuple[str, int]]:
    """Each local memory of a block and where its window starts in the block's local array, in the
    emulator's order, each from a 4 KB boundary (sim/include/sage_sim/cube.h, Mem and mem_base;
    tests/test_sim_cube.py checks the two agree). The UB is the chip's (a manifest may change it)."""
    sizes = (("UB", chip.ub_bytes), ("L1", chip.l1_bytes), ("L0A", chip.l0a_bytes), ("L0B", chip.l0b_bytes),
             ("L0C", chip.l0c_bytes), ("the BiasTable", chip.bt_bytes), ("the Fixpipe buffer", chip.fb_bytes),
             ("the sparse index buffer", chip.l0b_bytes // 4))
    out, base = [], 0
    for name, size in sizes:
        out.append((name, base))
        base += (size + 4095) // 4096 * 4096
    return out
