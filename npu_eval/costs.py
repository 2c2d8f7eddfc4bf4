"""Per-instruction costs for the pipeline cost model, as data with the source of each number.

Public figures are few; where none exists the number is a labelled assumption, to be replaced
by `sage-npu calibrate` from measured kernel times. Treat every estimate as +/-20% at best
until calibrated on a device.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

# Vector instructions: cycles per 256-byte repeat, by API (and "API.dtype" where a dtype differs:
# a repeat holds 128 halves but only 64 floats, which the byte count already reflects; the
# entries below are for ops whose per-repeat cost itself depends on the dtype). Elementwise
# arithmetic retires one repeat per cycle; transcendental and division ops take several.
_VEC_PER_REPEAT = {
    "default": 1.0,
    "Div": 4.0, "Exp": 4.0, "Ln": 4.0, "Sqrt": 4.0, "Rsqrt": 4.0, "Reciprocal": 4.0,
    "Exp.float32": 6.0, "Ln.float32": 6.0, "Div.float32": 6.0,  # assumption: fp32 transcendentals iterate more
    "ReduceSum": 2.0, "ReduceMax": 2.0, "ReduceMin": 2.0,
    "Sum": 2.0,  # assumption: the high-level Sum is a row reduction, costed like ReduceSum
    "Cast": 1.0, "Compare": 1.0, "CompareScalar": 1.0, "Compares": 1.0, "Select": 1.0,
    # Gathers and sorts (assumptions, calibrate): GatherMask streams like an elementwise op; Gather
    # and Gatherb read one address per element or block, taken as 2 cycles per repeat; Sort32 and
    # MrgSort are multi-pass sorting networks, and their trace records 8 bytes per sorted element,
    # so a "repeat" there is 32 elements: taken as 4 cycles. Transposes move a 16x16 tile per repeat.
    "GatherMask": 1.0, "Gather": 2.0, "Gatherb": 2.0, "Sort32": 4.0, "Sort": 4.0, "MrgSort": 4.0,
    "Transpose": 1.0, "TransDataTo5HD": 1.0,
    # Bit shifts by a scalar are single-pass elementwise ops (assumption, calibrate).
    "ShiftLeft": 1.0, "ShiftRight": 1.0,
}


# ---- The cube unit (MTE1, M, FIX pipes): a block of its own, costed from what the emulator traces
# for LoadData (MTE1: bytes moved), Mmad (M: `elems` = fractal steps, one 16 x 16 output fractal
# times 32 bytes of k each: 16x16x16 for half/bfloat16, 16x16x32 for int8, 16x16x8 for float) and
# Fixpipe (FIX: output bytes).
_CUBE_SOURCES = {
    "mmad_cycles_per_fractal": "Ascend 910B public peak: 313 TFLOPS fp16 over 24 cube cores at 1.8 GHz is ~3.6k "
                               "multiply-adds per core per cycle, i.e. one 16x16x16 fp16 fractal step (4096) per "
                               "cycle; int8 doubles the k per step (16x16x32), fp32 halves it (16x16x8), as the cube "
                               "reads 32 bytes of k per step. Assumption beyond that: calibrate",
    "mmad_startup_cycles": "assumption (pipeline fill of one Mmad), calibrate",
    "mte1_bytes_per_cycle": "assumption: L1 -> L0A/L0B at 256 bytes per cycle (half a 512-byte fractal), "
                            "calibrate",
    "mte1_startup_cycles": "assumption, calibrate",
    "fix_bytes_per_cycle": "assumption: Fixpipe writes 64 output bytes per cycle (one 16-element float row), "
                           "calibrate",
    "fix_startup_cycles": "assumption (the FIX pipe's setup and the write's latency to L1/GM), calibrate",
}


class CubeCosts(BaseModel):
    """Per-instruction cycles of the cube unit's pipes: LoadData on MTE1, Mmad on M, Fixpipe on FIX."""

    mmad_cycles_per_fractal: float = Field(default=1.0, description="M: cycles per fractal step (16x16 outputs "
                                           "times 32 bytes of k)")
    mmad_startup_cycles: float = Field(default=20.0, description="M: fixed cycles per Mmad")
    mte1_bytes_per_cycle: float = Field(default=256.0, description="MTE1: L1 -> L0A/L0B/BiasTable bytes per cycle")
    mte1_startup_cycles: float = Field(default=16.0, description="MTE1: fixed cycles per LoadData")
    fix_bytes_per_cycle: float = Field(default=64.0, description="FIX: L0C -> GM/L1 output bytes per cycle")
    fix_startup_cycles: float = Field(default=40.0, description="FIX: fixed cycles per Fixpipe")
    sources: dict[str, str] = Field(default_factory=lambda: dict(_CUBE_SOURCES))

    def cycles(self, pipe: str, elems: int, moved: int) -> float:
        """Cycles one cube instruction occupies its pipe: `elems` and `moved` as the emulator traces them."""
        if pipe == "M":
            return self.mmad_startup_cycles + self.mmad_cycles_per_fractal * elems
        if pipe == "MTE1":
            return self.mte1_startup_cycles + moved / self.mte1_bytes_per_cycle
        return self.fix_startup_cycles + moved / self.fix_bytes_per_cycle


class CostTable(BaseModel):
    issue_cycles: float = Field(default=4.0, description="scalar-unit cycles to issue one API call")
    vec_startup_cycles: float = Field(default=16.0, description="fixed cycles per vector instruction (the b of k*N+b)")
    vec_cycles_per_repeat: dict[str, float] = Field(default_factory=lambda: dict(_VEC_PER_REPEAT),
                                                    description="the k of k*N+b, per 256-byte repeat, by API")
    mte_setup_cycles: float = Field(
        default=40.0, description="cycles a transfer occupies its MTE pipe beyond its bytes"
    )
    mte2_latency_cycles: float = Field(default=300.0, description="GM->UB: cycles from a transfer's end on the pipe "
                                       "until its data is visible to a waiting pipe")
    mte3_latency_cycles: float = Field(default=300.0, description="UB->GM: the same for writes")
    mte_core_bytes_per_cycle: float = Field(default=64.0, description="peak GM bandwidth one core's MTE reaches")
    mte_burst_cycles: float = Field(
        default=8.0, description="extra cycles per burst of a strided (multi-burst) transfer"
    )
    mte_unaligned_factor: float = Field(default=1.25, description="slowdown of a transfer whose GM address is not "
                                        "512-byte aligned")
    ub_copy_bytes_per_cycle: float = Field(default=256.0, description="UB->UB DataCopy rate")
    scalar_ub_cycles: float = Field(default=8.0, description="LocalTensor GetValue/SetValue")
    scalar_gm_cycles: float = Field(default=300.0, description="GlobalTensor GetValue/SetValue (a GM round trip)")
    event_cycles: float = Field(default=1.0, description="a queue or flag operation on its pipe")
    launch_overhead_us: float = Field(default=25.0, description="host launch to kernel start, reported apart")
    cube: CubeCosts = Field(default_factory=CubeCosts, description="the cube unit's pipes (MTE1, M, FIX)")
    sources: dict[str, str] = Field(default_factory=dict)

    def vec_per_repeat(self, api: str, dtype: str = "") -> float:
        """k for an API on a dtype: "Exp.float32" if the table has it, else "Exp", else "default"."""
        t = self.vec_cycles_per_repeat
        return t.get(f"{api}.{dtype}", t.get(api, t.get("default", 1.0)))


_SOURCES = {
    "vec_cycles_per_repeat": "256 bytes per repeat per cycle for elementwise ops (Ascend C documentation: vector ops "
                             "read 256 bytes per repeat); multi-cycle ops: assumption, calibrate",
    "vec_startup_cycles": "assumption (pipeline fill of one vector instruction), calibrate",
    "mte_setup_cycles": "assumption: back-to-back transfers stream; Ascend C documentation: full bandwidth wants "
                        "transfers of 16 KB or more (at 64 B/cycle, 40 cycles of setup leave 16 KB at 87%)",
    "mte2_latency_cycles": "assumption: ~170 ns GM access latency at 1.8 GHz, paid by whoever waits on the data",
    "mte3_latency_cycles": "as mte2_latency_cycles",
    "mte_core_bytes_per_cycle": "assumption: ~115 GB/s per core at 1.8 GHz, so ~14 cores saturate 1.6 TB/s HBM",
    "issue_cycles": "assumption, calibrate",
    "mte_burst_cycles": "assumption, calibrate",
    "mte_unaligned_factor": "Ascend C documentation: full bandwidth wants 512-byte aligned GM addresses; the size of "
                            "the loss is an assumption, calibrate",
    "scalar_ub_cycles": "assumption: scalar UB access costs a few cycles plus pipeline sync",
    "scalar_gm_cycles": "assumption: a GM round trip, same order as the MTE latency",
    "launch_overhead_us": "public measurements: end-to-end launch overhead measured publicly about 20-30 us on 910B",
}


def default_costs(family: int) -> CostTable:
    t = CostTable(sources=dict(_SOURCES))
    if family == 310:
        # 310P: the same vector ISA width; a slower memory system (LPDDR4X).
        t.mte_core_bytes_per_cycle = 32.0
        t.sources["mte_core_bytes_per_cycle"] = "assumption for 310P3 (LPDDR4X ~200 GB/s shared by 8 cores)"
    return t
