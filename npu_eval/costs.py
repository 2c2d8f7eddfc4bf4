"""Per-instruction costs for the pipeline cost model, as data with the source of each number.

The figures are Huawei's public per-API performance model for Atlas A2 (dav-2201), the autofuse
"ATT" tables of hicann/ge at commit 3d7dd1d40a5e (`PUBLIC_SOURCE`); every entry names its file
and line there in `CostTable.sources`. Where that model has no figure for an API the emulator
traces, the cost is derived from the instructions the API issues and says so. The formulas that
use these numbers live in `cost_model.py`; docs/cost-model.md lists every source. Treat every
estimate as an estimate until `sage-npu calibrate` fits it to measured times.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

PUBLIC_SOURCE = "hicann/ge@3d7dd1d40a5e"
_ATT = "compiler/graph/optimize/autofuse/att/gen_model_info/api_perf_register/"
PERF_PARAM = _ATT + "v1/perf_param_v1.cpp"      # the k, b, a, h constants
PERF_UTILS = _ATT + "utils/api_perf_utils.cpp"  # the formulas
PERF_CASES = _ATT + "v1/ascendc_api_perf_v1.cpp"  # which load/store formula applies when
PERF_ANALYSIS = "asc-devkit@82b89a15f263 docs/zh/guide/算子实践参考/性能分析/分析性能数据.md"  # CANN's profiling guide
_MM_HP = "examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_high_performance/README_en.md"
_MEM_GUIDE = "docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/"
_MM_GUIDE = "docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/"
_MM_SCALAR_FIT = (f"asc-devkit@82b89a15f263 {_MM_HP}:107, 138, 169, 203, 244, 288, 341 (Cases 0-6, runtime tilings, "
                  "1.85 GHz: line 447): aic_scalar_time per K step of a core against the GM -> L1 copies per K step "
                  "(1/stepKa + 1/stepKb: 2 on CFG_NORM, 0.75 for Case 4, 0.375 for Cases 5 and 6; stepKb 4 from "
                  "depthB1 8 and the README's rule, lines 234, 274), a least-squares line (docs/cost-model.md)")
L2_SOURCES = {  # asc-devkit at commit 82b89a15f263
    "read": f"asc-devkit@82b89a15f263 {_MM_HP}:319 (Case 6): the pure read bandwidth of L2Cache is about 3 to 4 "
            "times GM's; the same in docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/"
            "Matmul高阶API使能L2-Cache切分.md:7",
    "mixed": f"asc-devkit@82b89a15f263 {_MEM_GUIDE}L2-Cache切分.md:5: L2 read-write mixed bandwidth about 7 TB/s "
             "against GM's 1.6 TB/s",
    "path": f"asc-devkit@82b89a15f263 {_MEM_GUIDE}设置合理的L2-CacheMode.md:25-33: loads (MTE2) and stores (MTE3, "
            "Fixpipe) go through L2; past its capacity the cache replaces data, writing old data back to GM first",
    "line": "asc-devkit@82b89a15f263 docs/zh/guide/算子实践参考/SIMT算子性能优化/概述.md:39: the AI processor "
            "accesses L2 in 128-byte cache lines",
}
BANK_SAMPLE = ("asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/README.md "
               "(commit 82b89a15f263)")


def _at(path: str, lines: str) -> str:
    return f"{PUBLIC_SOURCE} {path}:{lines}"


class VecCost(BaseModel):
    """A vector API's cost per call: k cycles per element plus b (LinearFunc, api_perf_utils.cpp:98-109)."""

    k: float
    b: float


class Transfer(BaseModel):
    """A GM transfer's cycles: bytes / (a + b / active cores) + h (LoadStoreFunc, api_perf_utils.cpp:289-318)."""

    a: float
    b: float
    h: float


class HeadLine(BaseModel):
    """A pipe head that grows with the launch's block count: k * block_dim + b cycles."""

    k: float
    b: float


# ---------------------------------------------------------------- vector APIs
# (api, dtype class, k cycles/element, b cycles/call, line of perf_param_v1.cpp). The dtype class is
# the public table's: integer types take the float figure of their width (api_perf_utils.cpp:67-84).
_PUBLIC_VEC: list[tuple[str, str, float, float, int]] = [
    ("Abs", "float16", 0.0077, 20.0153, 72), ("Abs", "float32", 0.0147, 20.0592, 73),
    ("Adds", "float16", 0.0071, 22.0938, 79), ("Adds", "float32", 0.0141, 22.0936, 80),
    ("Add", "float16", 0.0103, 22.2173, 86), ("Add", "float32", 0.0206, 23.2225, 87),
    ("And", "float16", 0.0107, 17.1393, 93), ("And", "float32", 0.0112, 17.5611, 94),
    ("BlockReduceMax", "float16", 0.0547, 18.0042, 100), ("BlockReduceMax", "float32", 0.0198, 16.7401, 101),
    ("BlockReduceMin", "float16", 0.0547, 18.0092, 107), ("BlockReduceMin", "float32", 0.0198, 16.7413, 108),
    ("Brcb", "float16", 0.0074, 13.0572, 114), ("Brcb", "float32", 0.0146, 13.0732, 115),
    # Cast is keyed by the destination type the trace records: f16->f32, f32->f16, f16->u8.
    ("Cast", "float32", 0.0147, 20.1204, 123), ("Cast", "float16", 0.0087, 20.4393, 124),
    ("Cast", "uint8", 0.0083, 19.9408, 125), ("Cast", "int32", 0.0332, 18.8690, 127),
    ("DataCopy", "float16", 0.0078, 13.0049, 140), ("DataCopy", "float32", 0.0157, 12.9966, 141),  # "Copy"
    ("CompareScalar", "float16", 0.0084, 21.9200, 161), ("CompareScalar", "float32", 0.0160, 21.9712, 162),
    ("Compare", "float16", 0.0155, 21.0340, 189), ("Compare", "float32", 0.0310, 21.0316, 190),
    ("Div", "float16", 0.0460, 29.1233, 287), ("Div", "float32", 0.0454, 29.0892, 288),
    ("Duplicate", "float16", 0.0078, 16.9993, 294), ("Duplicate", "float32", 0.0156, 16.9965, 295),
    ("Erf", "float16", 0.6996, 478.4175, 301), ("Erf", "float32", 0.6038, 458.2933, 302),
    ("Exp", "float16", 0.0311, 28.0144, 308), ("Exp", "float32", 0.0307, 28.0376, 309),
    ("Gather", "float16", 0.1873, 17.0248, 315), ("Gather", "float32", 0.1875, 15.0000, 316),
    ("GatherMask", "float16", 0.0156, 14.0242, 322), ("GatherMask", "float32", 0.0313, 14.0207, 323),
    ("Maxs", "float16", 0.0071, 20.0912, 329), ("Maxs", "float32", 0.0141, 20.0887, 330),
    ("Max", "float16", 0.0111, 20.1200, 336), ("Max", "float32", 0.0215, 20.1333, 337),
    ("Mins", "float16", 0.0071, 20.0896, 343), ("Mins", "float32", 0.0142, 20.0876, 344),
    ("Min", "float16", 0.0111, 20.1104, 350), ("Min", "float32", 0.0215, 20.1271, 351),
    ("Muls", "float16", 0.0071, 23.1006, 357), ("Muls", "float32", 0.0142, 23.0966, 358),
    ("Muls", "int32", 0.0180, 20.7457, 359),
    ("Mul", "float16", 0.0110, 23.1243, 365), ("Mul", "float32", 0.0206, 23.2291, 366),
    ("Or", "float16", 0.0132, 12.4018, 372),  # the table's only row is uint16, the float16 class
    ("PairReduceSum", "float16", 0.0547, 37.159, 378), ("PairReduceSum", "float32", 0.1094, 36.964, 379),
    ("Power", "float16", 0.6647, 2516.53, 273), ("Power", "float32", 0.6199, 730.11, 274),  # PowerAllTensor
    ("Reciprocal", "float16", 0.0078, 21.0076, 385), ("Reciprocal", "float32", 0.0146, 21.0639, 386),
    ("Relu", "float16", 0.0077, 20.0173, 392), ("Relu", "float32", 0.0154, 20.0189, 393),
    ("Rsqrt", "float16", 0.0071, 21.0970, 399), ("Rsqrt", "float32", 0.0143, 21.0979, 400),
    ("Select", "float16", 0.0118, 45.9656, 406), ("Select", "float32", 0.0229, 43.9906, 407),
    ("Sigmoid", "float16", 0.1011, 116.0436, 413), ("Sigmoid", "float32", 0.1256, 115.9747, 414),
    ("Sign", "float16", 0.0855, 119.0821, 420), ("Sign", "float32", 0.1701, 119.0656, 421),
    ("Sqrt", "float16", 0.0312, 29.0056, 427), ("Sqrt", "float32", 0.0313, 28.9961, 428),
    ("Sub", "float16", 0.0107, 22.1226, 434), ("Sub", "float32", 0.0213, 22.1254, 435),
    ("Tanh", "float16", 0.1976, 181.6919, 441), ("Tanh", "float32", 0.1570, 153.9298, 442),
    ("WholeReduceMax", "float16", 0.0547, 21.0027, 448), ("WholeReduceMax", "float32", 0.1094, 20.0051, 449),
    ("WholeReduceMin", "float16", 0.0547, 21.0056, 455), ("WholeReduceMin", "float32", 0.1094, 20.0068, 456),
    ("WholeReduceSum", "float16", 0.0547, 35.0021, 462), ("WholeReduceSum", "float32", 0.1094, 32.0029, 463),
]

# APIs without a public figure, costed as the single instruction they issue, named here with why.
_SAME_INSTRUCTION: dict[str, tuple[str, str]] = {
    "Ln": ("Exp", "one transcendental instruction (vln) like Exp's vexp"),
    "Not": ("And", "one bitwise instruction like And"),
    "Xor": ("And", "one bitwise instruction like And"),
    "ShiftLeft": ("Adds", "one element-wise instruction with a scalar operand like Adds"),
    "ShiftRight": ("Adds", "one element-wise instruction with a scalar operand like Adds"),
    "Compares": ("CompareScalar", "the scalar compare under another name"),
    "AddRelu": ("Add", "one fused instruction (vaddrelu) reading two operands like Add"),
    "SubRelu": ("Sub", "one fused instruction (vsubrelu) reading two operands like Sub"),
    "LeakyRelu": ("Muls", "one instruction with a scalar operand (vlrelu) like Muls"),
    "Axpy": ("Mul", "one instruction (vaxpy) reading two operands like Mul"),
    "BlockReduceSum": ("BlockReduceMax", "the same per-block reduction instruction class (vcgadd, vcgmax)"),
    "ReduceDataBlock": ("BlockReduceMax", "BlockReduce* under its CANN 9 name"),
    "RepeatReduceSum": ("WholeReduceSum", "the older spelling of WholeReduceSum"),
    "ReduceRepeat": ("WholeReduceSum", "WholeReduce* under its CANN 9 name"),
    "Gatherb": ("Gather", "a gather by 32-byte block offsets, like Gather"),
    "Broadcast": ("Brcb", "a broadcast of one value per block, like Brcb"),
    "Transpose": ("DataCopy", "moves each element once inside UB, like a UB copy"),
    "TransDataTo5HD": ("DataCopy", "moves each element once inside UB, like a UB copy"),
    "GetCmpMask": ("Duplicate", "one short register transfer: Duplicate's fixed cost"),
    "SetCmpMask": ("Duplicate", "one short register transfer: Duplicate's fixed cost"),
    "Sort32": ("Gather", "assumption: a sorting network reads each element at random like Gather"),
    "MrgSort": ("Gather", "assumption: a merge reads each element at random like Gather"),
    "Sort": ("Gather", "assumption: a merge sort reads each element at random like Gather"),
    "default": ("Adds", "assumption for an API with no figure: one element-wise instruction like Adds"),
}

# APIs that run as repeated passes of a public instruction until one value remains: ReduceSum
# over N elements issues WholeReduceSum over N, then over the ceil(N / per repeat) partial sums, ...
_PASSES: dict[str, str] = {"ReduceSum": "WholeReduceSum", "ReduceMax": "WholeReduceMax",
                           "ReduceMin": "WholeReduceMin", "Sum": "WholeReduceSum"}


def _vector_block() -> tuple[dict[str, VecCost], dict[str, str]]:
    table: dict[str, VecCost] = {}
    sources: dict[str, str] = {}
    for api, dt, k, b, line in _PUBLIC_VEC:
        table[f"{api}.{dt}"] = VecCost(k=k, b=b)
        sources[f"vec:{api}.{dt}"] = _at(PERF_PARAM, str(line))
    for api, (base, why) in _SAME_INSTRUCTION.items():
        for dt in ("float16", "float32"):
            if f"{base}.{dt}" in table:
                table[f"{api}.{dt}"] = table[f"{base}.{dt}"]
                sources[f"vec:{api}.{dt}"] = f"no public figure: {why} ({sources[f'vec:{base}.{dt}']})"
    for api, base in _PASSES.items():
        sources[f"vec:{api}"] = (f"no public figure: derived from the {base} passes it issues "
                                 f"({_at(PERF_PARAM, '445-465')})")
    return table, sources


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
    # vector unit
    vec: dict[str, VecCost] = Field(default_factory=dict, description='"API.dtype class" -> k, b')
    vec_passes: dict[str, str] = Field(default_factory=lambda: dict(_PASSES),
                                       description="APIs costed as repeated passes of another")
    vec_head_cycles: float = 37.37
    bank_read_read_factor: float = Field(default=4167 / 2390, description="per-element cost of a vector "
                                         "instruction whose two sources start in the same UB bank group")
    bank_read_write_factor: float = Field(default=3751 / 2390, description="... whose source and destination "
                                          "share a bank with a shifted bank-group order")
    # data movement (MTE2 GM->UB, MTE3 UB->GM)
    load: Transfer = Transfer(a=9.9074, b=15.8960, h=27.01)
    load_small: Transfer = Transfer(a=7.9052, b=7.3100, h=27.01)
    small_load_below_bytes: int = 25000
    load_stride_k: float = 0.07
    store: Transfer = Transfer(a=9.96, b=3.79, h=12.09)
    store_stride_k: float = 0.02
    stride_mod_256: float = Field(default=128.0, description="the GM stride (mod 256) of a multi-burst "
                                  "transfer; the trace does not record it")
    store_middle_bytes_per_cycle: float = 2.0
    store_middle_h: float = 1.3
    store_small_a: HeadLine = HeadLine(k=-0.101, b=-2.2)
    store_small_b: HeadLine = HeadLine(k=8.89, b=96.24)
    read_write_sharing: bool = Field(default=True, description="a read and a write running at once share the "
                                     "chip's GM bandwidth: their combined rate past a core's share of it slows the "
                                     "later one (cost_model.gm_share_extra)")
    l2_read_speedup: float = Field(default=3.5, description="how many times faster a GM read streams when its "
                                   "bytes are in the L2 cache than from HBM (l2cache.py)")
    l2_line_bytes: int = Field(default=128, description="the L2 cache line: the granule the L2 model tracks")
    stride_from_trace: bool = Field(default=False, description="a load's stride term takes its recorded GM row "
                                    "stride (mod 256) where the trace has it, instead of stride_mod_256 (stores "
                                    "keep stride_mod_256)")
    unaligned_bandwidth: float = Field(default=0.7, description="share of the bandwidth a transfer whose GM "
                                       "address is not 512-byte aligned reaches")
    # the cube's GM -> L1 copies (MTE2 into L1): chip-wide rates the cores loading at once share
    cube_load_hbm_gbps: float | None = Field(default=1800.0, description="GM -> L1: the chip's HBM read rate, "
                                             "GB/s, shared by the active cores (None: the GM -> UB figures)")
    cube_load_l2_gbps: float | None = Field(default=5000.0, description="GM -> L1: the chip's L2 read rate for "
                                            "bytes found in L2, GB/s, shared by the active cores")
    cube_load_core_bytes_per_cycle: float | None = Field(default=36.5, description="GM -> L1: what one core's "
                                                         "stream from HBM reaches, bytes a cycle, before its share "
                                                         "(None: the public one-core GM -> UB load figure)")
    # fixed costs per kernel
    mte2_head: HeadLine = HeadLine(k=32.72, b=1575.03)
    mte2_head_small: HeadLine = HeadLine(k=15.89, b=882.09)
    mte3_head_cycles: float = 497.36
    op_head_cycles: float = 300.0
    # scalar unit and synchronisation
    issue_cycles: float = Field(default=4.0, description="scalar-unit cycles to issue one API call")
    scalar_ub_cycles: float = Field(default=8.0, description="LocalTensor GetValue/SetValue")
    scalar_gm_cycles: float = Field(default=300.0, description="GlobalTensor GetValue/SetValue (a GM round trip)")
    # the Matmul API's own scalar work on the core that computes (protocol.MATMUL_* records)
    matmul_init_cycles: float = Field(default=6542.0, description="a Matmul object's Init with a TCubeTiling "
                                      "from the host (its copy and the set-up derived from it)")
    matmul_static_init_cycles: float = Field(default=4042.0, description="a Matmul object's Init with a "
                                             "compile-time constant tiling")
    matmul_kstep_cycles: float = Field(default=245.0, description="one K step of a Matmul's Mmad loop: the "
                                       "addresses and sizes of its L1 -> L0 loads and Mmad")
    matmul_copy_cycles: float = Field(default=103.0, description="one GM -> L1 copy a Matmul issues: its "
                                      "Nd2NzParams and addresses")
    matmul_static_share: float = Field(default=0.552, description="the share of a K step's and a copy's scalar "
                                       "work left with a constant tiling")
    matmul_serve_cycles: float = Field(default=1872.0, description="the AIC's server handling one Matmul "
                                       "message from an AIV in a mixed kernel (reading and decoding it)")
    event_cycles: float = Field(default=14.0, description="a flag or queue hand-over between two pipes")
    barrier_cycles: float = Field(default=20.0, description="a PipeBarrier draining its pipe")
    launch_overhead_us: float = Field(default=25.0, description="host launch to kernel start, reported apart")
    cube: CubeCosts = Field(default_factory=CubeCosts, description="the cube unit's pipes (MTE1, M, FIX)")
    sources: dict[str, str] = Field(default_factory=dict)

    def vec_cost(self, api: str, dtype: str) -> VecCost:
        """k and b for an API on a dtype: its own row, its dtype class's, the float16 one, else the default."""
        t = self.vec
        got = t.get(f"{api}.{dtype}") or t.get(f"{api}.{dtype_class(dtype)}") or t.get(f"{api}.float16")
        return got or t.get(f"default.{dtype_class(dtype)}") or VecCost(k=0.0071, b=22.0938)


_INT16_CLASS = {"int8", "uint8", "int16", "uint16"}
_INT32_CLASS = {"int32", "uint32", "int64", "uint64", "float32"}
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
               "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1}


def dtype_class(dtype: str) -> str:
    """The public table's row for a dtype: 8/16-bit types read float16's, 32/64-bit ones float32's."""
    return "float32" if dtype in _INT32_CLASS else "float16"


_SOURCES = {
    "vec": "k*N+b per API and dtype class: " + _at(PERF_PARAM, "67-465") + "; formula LinearFunc "
           + _at(PERF_UTILS, "98-109") + "; dtype classes " + _at(PERF_UTILS, "67-84"),
    "vec_passes": "no public figure: reductions to one value as their WholeReduce passes",
    "vec_head_cycles": "kVecheadcost " + _at(PERF_PARAM, "19"),
    "bank_read_read_factor": f"{BANK_SAMPLE}: scenario 3 (src0/src1 in one bank group) 4167 cycles against "
                             "scenario 1 (no conflict) 2390",
    "bank_read_write_factor": f"{BANK_SAMPLE}: scenario 5 (src0/dst in one bank, shifted) 3751 cycles against "
                              "scenario 4 (same bank, aligned: no conflict) 2389",
    "load": "Load a, b, h " + _at(PERF_PARAM, "486-495") + "; formula " + _at(PERF_UTILS, "289-318"),
    "load_small": "LoadSmallBlk " + _at(PERF_PARAM, "466-475"),
    "small_load_below_bytes": "kLoadSizeThres " + _at(PERF_CASES, "22") + "; cases " + _at(PERF_CASES, "21-44"),
    "load_stride_k": "LoadStride k " + _at(PERF_PARAM, "496-505") + "; formula " + _at(PERF_UTILS, "111-123"),
    "store": "Store a, b, h " + _at(PERF_PARAM, "506-515") + "; cases " + _at(PERF_CASES, "158-216"),
    "store_stride_k": "StoreStride k " + _at(PERF_PARAM, "516-525"),
    "stride_mod_256": "assumption: the trace has no GM stride; its mean mod 256 taken as 128",
    "store_middle_bytes_per_cycle": "StoreMiddleBlk a " + _at(PERF_PARAM, "536-545"),
    "store_middle_h": "StoreMiddleBlk h " + _at(PERF_PARAM, "536-545"),
    "store_small_a": "StoreSmallBlk ak, ab " + _at(PERF_PARAM, "546-555") + "; formula " + _at(PERF_UTILS, "330-354"),
    "store_small_b": "StoreSmallBlk bk, bb " + _at(PERF_PARAM, "546-555"),
    "store_large_blk_penalty": "StoreLargeBlk hl=1 " + _at(PERF_PARAM, "526-535") + "; penalty "
                               + _at(PERF_UTILS, "313-316"),
    "read_write_sharing": f"{PERF_ANALYSIS}:10 (the note under 理论参数): transfers running at once share the "
                          "bandwidth; with MTE2 and MTE3 reading and writing GM together the pipeline takes "
                          "(MTE2 bytes + MTE3 bytes) / GM bandwidth (the chip's, chips.py); a core's share is that "
                          "over the active cores",
    "l2_read_speedup": "assumption within a public range: 3.5, the middle of 'about 3 to 4 times' ("
                       + L2_SOURCES["read"] + "; the mixed read-write figure, 7 TB/s over 1.6, is 4.4x: "
                       + L2_SOURCES["mixed"] + "). The public ratio is of the chip's bandwidths; that a core's "
                       "rate for a read that hits (the public per-core load rate a + b / cores, capped by its L2 "
                       "share) scales by it too is an assumption. Stores keep the public store figures, which were "
                       "measured with every write going through L2 (" + L2_SOURCES["path"] + ")",
    "l2_line_bytes": "assumption from " + L2_SOURCES["line"] + " (stated for the SIMT chips; no dav-2201 figure "
                     "found)",
    "cube_load_hbm_gbps": "asc-devkit 82b89a15f263 examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/"
                          "matmul_basic_api_high_performance/README_en.md:397-401 (Atlas A2: HBM about 1.8 TB/s; "
                          "MTE2 time = bytes first read from HBM / 1.8 TB/s + bytes read from L2 / 5 TB/s); a "
                          "core's rate is the smaller of the public one-core load figure and its share",
    "cube_load_l2_gbps": "asc-devkit 82b89a15f263 examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/"
                         "matmul_basic_api_high_performance/README_en.md:397-401 (Atlas A2: L2 peak about 5 TB/s); "
                         "a core's rate is the smaller of the one-core load figure times l2_read_speedup and its "
                         "share",
    "cube_load_core_bytes_per_cycle": "derived, a lower bound: asc-devkit 82b89a15f263 docs/zh/guide/算子实践参考/"
                                      "优秀实践/Matmul性能调优案例/Matmul高阶API使能MDL模板.md:55-60, 121 (24 cores, "
                                      "each reading its own 2.62 MB of B from HBM and A's 1.31 MB from L2, MTE2 "
                                      "46.24 us on average): the rate that alone accounts for that time with A at the "
                                      "L2 share; per-copy costs would make it higher (docs/cost-model.md)",
    "stride_from_trace": "off: the public model's meaning of its stride is not settled (docs/cost-model.md)",
    "unaligned_bandwidth": "CANN data-movement best practice: GM addresses aligned to 32 bytes but not 512 reach "
                           "as little as 70% of the bandwidth",
    "mte2_head": "kMte2PipeHeadNormalK/B " + _at(PERF_PARAM, "21-22") + ", chosen at 25000 bytes "
                 + _at(PERF_PARAM, "47-57"),
    "mte2_head_small": "kMte2PipeHeadSmallK/B " + _at(PERF_PARAM, "23-24"),
    "mte3_head_cycles": "kMte3PipeHeadcost " + _at(PERF_PARAM, "25"),
    "op_head_cycles": "kOpHeadCost " + _at(PERF_PARAM, "589-591"),
    "issue_cycles": "assumption: the scalar unit's issue of one API call (loop control, address arithmetic), "
                    "charged on S; calibrate",
    "scalar_ub_cycles": "assumption: scalar UB access costs a few cycles plus pipeline sync",
    "scalar_gm_cycles": "assumption: a GM round trip, ~170 ns at 1.8 GHz",
    "matmul_init_cycles": f"asc-devkit@82b89a15f263 {_MM_GUIDE}Matmul高阶API使能Tiling全量常量化.md:73: the first "
                          "MTE2 at 3.536 us (the tiling copied from the host and the Matmul's set-up), at 1.85 GHz",
    "matmul_static_init_cycles": f"asc-devkit@82b89a15f263 {_MM_GUIDE}Matmul高阶API使能Tiling全量常量化.md:136: the "
                                 "first MTE2 at 2.185 us with the tiling constant, at 1.85 GHz",
    "matmul_kstep_cycles": "fitted: " + _MM_SCALAR_FIT,
    "matmul_copy_cycles": "fitted: " + _MM_SCALAR_FIT,
    "matmul_static_share": f"asc-devkit@82b89a15f263 {_MM_HP}:341, 376: aic_scalar_time 1753.463 -> 968.616 us, "
                           "Case 7 (constant tiling) against Case 6 (the same kernel on a runtime tiling)",
    "matmul_serve_cycles": f"derived: asc-devkit@82b89a15f263 {_MM_GUIDE}Matmul高阶API使能纯Cube模式.md:52-58, 66, 158 "
                           "(one AI Core: aic_scalar_time 15.02 us in MIX mode, 5.17 us pure Cube): the MIX side's "
                           "extra work, less the second object's Init, one K step and two copies at the figures "
                           "above, over its six messages (Init, IterateAll and End from each AIV), at 1.85 GHz "
                           "(docs/cost-model.md)",
    "event_cycles": "assumption: a cross-pipe hand-over (SetFlag to WaitFlag, EnQue to DeQue) takes about the "
                    "fixed cost of a short instruction (Duplicate's b, 17 cycles, " + _at(PERF_PARAM, "294") + ")",
    "barrier_cycles": "assumption: a PipeBarrier drains its pipe, about one instruction's fixed cost (~20 cycles, "
                      "the b of the element-wise rows of " + _at(PERF_PARAM, "67-465") + ")",
    "launch_overhead_us": "public measurements: end-to-end launch overhead measured publicly about 20-30 us on 910B",
}


def default_costs(family: int) -> CostTable:
    vec, vec_sources = _vector_block()
    t = CostTable(vec=vec, sources={**_SOURCES, **vec_sources})
    if family == 310:
        # 310P: no public per-API model; the A2 figures with its slower memory (the HBM share caps the
        # per-core rate in cost_model.py) until calibrated.
        t.sources["load"] = "assumption for 310P3: the Atlas A2 figures, capped by its LPDDR4X share; calibrate"
        # no public 310P figure for the cube's GM -> L1 path: its copies take the GM -> UB figures
        t.cube_load_hbm_gbps = t.cube_load_l2_gbps = t.cube_load_core_bytes_per_cycle = None
        t.sources["cube_load_hbm_gbps"] = t.sources["cube_load_l2_gbps"] = t.sources[
            "cube_load_core_bytes_per_cycle"] = (
            "310P3: no public figure; GM -> L1 copies use the GM -> UB load figures")
        t.sources["l2_read_speedup"] = ("assumption for 310P3: the Atlas A2 ratio (no public 310P figure); "
                                        + t.sources["l2_read_speedup"])
    return t
