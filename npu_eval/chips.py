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
        }


_A2_SOURCE = "Ascend 910B public specs"
_UB_910B = ("UB 192 KB per vector core (Ascend C documentation). The top 8 KB are reserved on some CANN versions: "
            "data placed above 184 KB was seen silently corrupted (hw-native-sys/pto-isa issue 170), while a "
            "MultiKernelBench kernel using all 192 KB passes on hardware; so past 192 KB is an error, past 184 KB "
            "a warning")

_NPU_ARCH_SOURCE = ("asc-devkit docs/zh/guide/编程指南/语言扩展层/SIMD-BuiltIn关键字.md, __NPU_ARCH__: Atlas A2 "
                    "training/inference series (910B) 2201, Atlas inference series (310P) 2002")

_A2_SOURCES = {"cores/clock/hbm": _A2_SOURCE, "ub": _UB_910B, "npu_arch": _NPU_ARCH_SOURCE}

CHIPS: dict[str, ChipProfile] = {
    p.name: p
    for p in [
        ChipProfile(name="910B1", family=910, vector_cores=48, cube_cores=24, clock_ghz=1.85,
                    hbm_gbps=1600, ub_bytes=192 * 1024, ub_reserved_bytes=8 * 1024,
                    npu_arch=2201, sources=_A2_SOURCES),
        ChipProfile(name="910B2", family=910, vector_cores=48, cube_cores=24, clock_ghz=1.8,
                    hbm_gbps=1600, ub_bytes=192 * 1024, ub_reserved_bytes=8 * 1024,
                    npu_arch=2201, sources=_A2_SOURCES),
        ChipProfile(name="910B3", family=910, vector_cores=40, cube_cores=20, clock_ghz=1.8,
                    hbm_gbps=1600, ub_bytes=192 * 1024, ub_reserved_bytes=8 * 1024,
                    npu_arch=2201, sources=_A2_SOURCES),
        ChipProfile(name="910B4", family=910, vector_cores=40, cube_cores=20, clock_ghz=1.5,
                    hbm_gbps=800, ub_bytes=192 * 1024, ub_reserved_bytes=8 * 1024,
                    npu_arch=2201, sources=_A2_SOURCES),
        ChipProfile(name="310P3", family=310, vector_cores=8, cube_cores=8, clock_ghz=1.06,
                    hbm_gbps=200, ub_bytes=248 * 1024, npu_arch=2002,
                    sources={"cores/clock": "Atlas 300I Duo (310P3) public specs",
                             "ub": "256 KB per AI core, 248 KB usable (Ascend C documentation)",
                             "hbm": "LPDDR4X ~204.8 GB/s, public specs", "npu_arch": _NPU_ARCH_SOURCE}),
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
