"""Matmul tilings estimate in the order asc-devkit's best-practice pages publish (issue 18).

Each pair is one comparison a public source states ("B is faster than A"), replayed on the bundled
matmul kernels (examples/tasks/matmul_basic and matmul_basic_hp on the basic API, matmul_adv on the
Matmul API) with the source's tiling change and nothing else. The sources are asc-devkit's README files and the
Matmul guide pages (Matmul性能调优案例) at commit 82b89a15f263 (cited by path and line; their text
stays out of this repository); docs/cube.md lists the pairs and every published comparison not
replayed yet, with its reason.
"""

from __future__ import annotations

import math
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "tasks"
HP = "examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_high_performance/README_en.md"
BASIC_HP = "examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_basic_api_high_performance/README_en.md"

# Small integers: every product and every partial sum is exact in float, so C is the same in any
# summation order and the check needs no tolerance (the estimates do not depend on the values).
REFERENCE = """\
import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a.float() @ b.float()


def get_input_groups():
    gen = torch.Generator().manual_seed(5)
    a = torch.randint(-2, 3, ({m}, {k}), generator=gen).half()
    return [[a, torch.randint(-2, 3, ({k}, {n}), generator=gen).half()]]


def get_init_inputs():
    return []
"""


@dataclass(frozen=True)
class Variant:
    """A bundled matmul task with host.py constants (and kernel text) replaced."""

    task: str
    host: tuple[tuple[str, str], ...] = ()
    kernel: tuple[tuple[str, str], ...] = ()
    shape: tuple[int, int, int] = (512, 1024, 1024)
    check: bool = True  # false: estimated without its values (eval --estimate-only), for the sample's own shape
    inputs: str = ""  # a get_input_groups() for the task's own reference.py (else REFERENCE at `shape`)

    def materialise(self, dest: Path) -> Path:
        shutil.copytree(EXAMPLES / self.task, dest)
        m, k, n = self.shape
        if self.inputs:
            own = (dest / "reference.py").read_text()
            (dest / "reference.py").write_text(own[:own.index("def get_input_groups")] + self.inputs)
        else:
            (dest / "reference.py").write_text(REFERENCE.format(m=m, k=k, n=n))
        host = (dest / "host.py").read_text()
        for old, new in self.host:
            assert re.search(old, host, flags=re.M), f"{self.task}/host.py has no {old!r}"
            host = re.sub(old, new, host, flags=re.M)
        (dest / "host.py").write_text(host)
        kernel = dest / f"{self.task}.cpp"
        text = kernel.read_text()
        for old, new in self.kernel:
            assert old in text, f"{self.task}.cpp has no {old!r}"
            text = text.replace(old, new)
        kernel.write_text(text)
        return dest


def basic(base: str = "128, 128, 64", cores: int = 1, buffers: int = 2) -> Variant:
    host = ((r"^BASE_M, BASE_N, BASE_K = .*$", f"BASE_M, BASE_N, BASE_K = {base}"),
            (r"^CUBE_CORES = \d+", f"CUBE_CORES = {cores}"))
    kernel = (("BUFFER_NUM = 2;", f"BUFFER_NUM = {buffers};"),) if buffers != 2 else ()
    return Variant("matmul_basic", host, kernel)


def adv(base: str = "128, 256, 64", cores: int = 1, a: tuple[int, int] = (1, 1), b: tuple[int, int] = (1, 1),
        shape: tuple[int, int, int] = (512, 1024, 1024), mdl: tuple[tuple[str, str], ...] = (),
        mix: bool = False) -> Variant:
    """The Matmul API kernel with its tiling's base block, cores and L1 caching: `a` is (stepKa,
    depthA1), `b` (stepKb, depthB1); `mdl` runs it on CFG_MDL with those MatmulConfig fields set (name,
    C++ value); `mix` as a MIX kernel (no
    ASCENDC_CUBE_ONLY): `cores` counts AIVs, each issuing its rows' matmul to its AI Core's AIC."""
    host = ((r"^BASE_M, BASE_N, BASE_K = .*$", f"BASE_M, BASE_N, BASE_K = {base}"),
            (r"^MAX_CORES = \d+", f"MAX_CORES = {cores}"),
            (r"depthA1=2 \* STEP_K, depthB1=2 \* STEP_K", f"depthA1={a[1]}, depthB1={b[1]}"),
            (r"stepKa=STEP_K", f"stepKa={a[0]}"), (r"stepKb=STEP_K", f"stepKb={b[0]}"))
    kernel: tuple[tuple[str, str], ...] = ()
    if mdl:
        fields = "".join(f"c.{name} = {value}; " for name, value in mdl)
        kernel = (("    AscendC::Matmul<AType, BType, CType> mm;",
                   f"    static constexpr MatmulConfig CFG = [] {{ auto c = CFG_MDL; {fields}return c; }}();\n"
                   "    AscendC::Matmul<AType, BType, CType, CType, CFG> mm;"),)
    if mix:
        host += ((r"block_dim=cores", "block_dim=(cores + 1) // 2"),)
        kernel += (("#define ASCENDC_CUBE_ONLY\n", ""),)
    return Variant("matmul_adv", host, kernel, shape=shape)


@dataclass(frozen=True)
class Pair:
    claim: str           # what the source says is faster
    source: str          # asc-devkit file and line (commit 82b89a15f263)
    slower: Variant
    faster: Variant


WIDE = (512, 2048, 1024)  # N = 2048: eight 256-wide base blocks on each of 4 cores' N
UNIT_FLAG = ("docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/Matmul高阶API使能UnitFlag.md")
PURE_CUBE = ("docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/Matmul高阶API使能纯Cube模式.md")
# The page's one AI Core share (M = 128, K = 64, N = 1280 on an AIC, or 640 on each of its AIVs, lines 52-58)
# with M and N swapped, since matmul_adv splits M: 256 rows on the AIC, or 128 on each AIV.
PURE_CUBE_SHAPE = (256, 64, 128)
K_REORDER = ("docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/Matmul高阶API使能多核K轴错峰访问内存.md")
# The page's A 768 x 6144 and B 6144 x 2048 split 6 x 4 (singleCore [128, 512, 6144], base [128, 256, 64]); here
# split over M only, so all six cores read the same B (N = 512 to keep the run short), K not fully loaded.
K_REORDER_SHAPE = (768, 6144, 512)
PRELOAD = ("docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/Matmul高阶API使能MTE2-Preload.md")
ONE_OF_24 = (128, 512, 1024)  # the page's M = 128, K = 512, N = 24576 over 24 cores: singleCoreN 1024 (lines 54-59)
ONE_OF_20 = (128, 64, 1536)  # the page's M = 128, K = 64, N = 30720 over 20 cores: singleCoreN 1536 (lines 56-57)
PAIRS = [
    Pair("base block [128, 256, 64] beats [64, 64, 64] (Matmul API, one core; published 3.04x)",
         f"{HP}:113-141 (Case 1 against Case 0)", adv("64, 64, 64"), adv("128, 256, 64")),
    Pair("the recommended base block [128, 256, 64] beats [64, 64, 64] on the basic API",
         f"{HP}:129-133 (base block selection); {BASIC_HP}:76-86", basic("64, 64, 64"), basic("128, 256, 64")),
    Pair("several cores beat one (Matmul API; published 19.9x on 24 cores)", f"{HP}:145-172 (Case 2 against Case 1)",
         adv(cores=1), adv(cores=4)),
    Pair("MDL large packets (depthA1 = 4, stepKa = 2) beat one base block per GM -> L1 copy (published 2.44x)",
         f"{HP}:210-247 (Case 4 against Case 3)", adv(cores=4, shape=WIDE),
         adv(cores=4, a=(2, 4), b=(2, 4), shape=WIDE)),
    Pair("filling L1 (depthA1 = 16, stepKa = 8, depthB1 = 8, stepKb = 4) beats depthA1 = 4 (published 1.21x)",
         f"{HP}:252-291 (Case 5 against Case 4)", adv(cores=4, a=(2, 4), b=(2, 4), shape=WIDE),
         adv(cores=4, a=(8, 16), b=(4, 8), shape=WIDE)),
    Pair("L1 and L0 ping-pong (two buffers a queue) beat one buffer: GM -> L1, L1 -> L0 and Mmad overlap",
         f"{BASIC_HP}:76-86 (L1/L0 double buffer ping-pong layout)", basic(buffers=1), basic(buffers=2)),
    Pair("MDL with UnitFlag (enUnitFlag = true) beats it without: Mmad and Fixpipe overlap (published 37.39 -> "
         "34.66 us, 7.3%)", f"{UNIT_FLAG}:56-62, 74, 120",
         adv(shape=ONE_OF_20, a=(1, 8), b=(1, 8), mdl=(("enUnitFlag", "false"),)),
         adv(shape=ONE_OF_20, a=(1, 8), b=(1, 8), mdl=(("enUnitFlag", "true"),))),
    Pair("MDL with MTE2 preload of B (doMTE2Preload = 2) beats it without: the next block's B is copied into "
         "B1's other half while this block computes (published 30.88 -> 28.50 us, 7.7%)", f"{PRELOAD}:54-59, 68, 93",
         adv("128, 128, 64", shape=ONE_OF_24, a=(8, 8), b=(8, 16), mdl=(("doMTE2Preload", "0"),)),
         adv("128, 128, 64", shape=ONE_OF_24, a=(8, 8), b=(8, 16), mdl=(("doMTE2Preload", "2"),))),
    Pair("MDL with staggered K (enableKdimReorderLoad) beats it without when cores read the same matrix: core i "
         "starts at K chunk i, so the cores do not all ask for one address at once (published 98.72 -> 85.68 us)",
         f"{K_REORDER}:40-49, 65, 73, 112",
         adv(cores=6, shape=K_REORDER_SHAPE, a=(4, 8), b=(4, 8), mdl=(("enableKdimReorderLoad", "false"),)),
         adv(cores=6, shape=K_REORDER_SHAPE, a=(4, 8), b=(4, 8), mdl=(("enableKdimReorderLoad", "true"),))),
    Pair("pure Cube mode (ASCENDC_CUBE_ONLY, the AIC calls the Matmul) beats the default MIX mode, where each AIV "
         "sends its call as a message the AIC serves (published 17.85 -> 11.21 us)", f"{PURE_CUBE}:52-58, 66, 158",
         adv(cores=2, shape=PURE_CUBE_SHAPE, a=(4, 8), b=(4, 8), mix=True),
         adv(cores=1, shape=PURE_CUBE_SHAPE, a=(4, 8), b=(4, 8))),
]


# ---- The guide pages' pairs (docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/ of asc-devkit) ----
GUIDE = "docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/"


def guide_adv(base: str = "128, 256, 64", cores: int = 1, a: tuple[int, int] = (1, 1), b: tuple[int, int] = (1, 1),
              shape: tuple[int, int, int] = (512, 1024, 1024), cfg: str = "CFG_NORM", step_m: int = 1,
              nbuffer33: bool = False, mix: bool = False) -> Variant:
    """adv() on the MatmulConfig preset `cfg` (CFG_NORM is the kernel's default) with stepM `step_m`, with
    `nbuffer33` on the NBuffer33MatmulPolicy, and `mix` as adv()'s."""
    v = adv(base, cores, a, b, shape, mix=mix)
    host = v.host + ((r"stepM=1", f"stepM={step_m}"),) if step_m != 1 else v.host
    policy = (", AscendC::MatmulCallBackFunc<nullptr, nullptr, nullptr>, "
              "AscendC::Impl::Detail::NBuffer33MatmulPolicy") if nbuffer33 else ""
    kernel = v.kernel + ((("    AscendC::Matmul<AType, BType, CType> mm;",
                           f"    AscendC::Matmul<AType, BType, CType, CType, {cfg}{policy}> mm;"),)
                         if cfg != "CFG_NORM" or policy else ())
    return Variant(v.task, host, kernel, v.shape)


def split_k(cores: int, shape: tuple[int, int, int], base: str = "128, 256, 64", a: tuple[int, int] = (1, 1),
            b: tuple[int, int] = (1, 1), mix: bool = False) -> Variant:
    """The Matmul API kernel with K split over `cores` (the EnableMultiCoreSplitK page): every core takes all
    of M and N and K / cores of K, clears C with Fill and adds its part with IterateAll(c, enAtomic = 1);
    `mix` as adv()'s (the cores are AIVs)."""
    v = adv(base, cores, a, b, shape, mix=mix)
    host = v.host + ((r"^    cores = ceil_div\(m, single_m\) \* ceil_div\(n, single_n\)$",
                      "    cores, single_m = MAX_CORES, m  # K split: each core all of M and N, k / cores of K"),
                     (r"singleCoreK=k,", "singleCoreK=k // cores,"))
    kernel = v.kernel + (("const int32_t row0 = AscendC::GetBlockIdx() % mBlocks * tiling.singleCoreM;",
                          "const int32_t row0 = 0, k0 = AscendC::GetBlockIdx() * tiling.singleCoreK;"),
              ("const int32_t col0 = AscendC::GetBlockIdx() / mBlocks * tiling.singleCoreN;",
               "const int32_t col0 = 0;"),
              ("(__gm__ half *)a + int64_t(row0) * tiling.Ka, int64_t(rows) * tiling.Ka);",
               "(__gm__ half *)a + k0, int64_t(rows) * tiling.Ka - k0);"),
              ("(__gm__ half *)b + col0, int64_t(tiling.Kb - 1) * tiling.N + cols);",
               "(__gm__ half *)b + int64_t(k0) * tiling.N, int64_t(tiling.Kb - k0) * tiling.N);"),
              ("    mm.IterateAll(cGm);",
               "    AscendC::Fill(cGm, uint64_t(rows) * tiling.N, 0.0f);\n"
               "    uint8_t enAtomic = 1;\n    mm.IterateAll(cGm, enAtomic);"))
    return Variant(v.task, host, kernel, v.shape)


def ibshare_ab(shape: tuple[int, int, int], base: str, a: tuple[int, int], b: tuple[int, int]) -> Variant:
    """A MIX kernel on one AI Core whose A and B are IBSHARE: both AIVs issue the whole matmul and the
    AIC computes it once (the IBShare page; the emulator's sub-block 0 call)."""
    v = adv(base, 2, a, b, shape, mix=True)
    host = v.host + ((r"^    cores = ceil_div\(m, single_m\) \* ceil_div\(n, single_n\)$",
                      "    cores, single_m = MAX_CORES, m  # both AIVs issue the whole matmul"),)
    kernel = v.kernel + (("const int32_t row0 = AscendC::GetBlockIdx() % mBlocks * tiling.singleCoreM;",
                          "const int32_t row0 = 0;"),
                         ("const int32_t col0 = AscendC::GetBlockIdx() / mBlocks * tiling.singleCoreN;",
                          "const int32_t col0 = 0;"),
                         ("MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;",
                          "MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NONE, true>;"))
    return Variant(v.task, host, kernel, v.shape)


def ibshare_b(shape: tuple[int, int, int], base: str, a: tuple[int, int], b: tuple[int, int],
              share: bool) -> Variant:
    """A MIX kernel on one AI Core, each AIV taking half of M against the same B; with `share` B is
    IBSHARE on CFG_IBSHARE_NORM (the AIC keeps one L1 copy of B for both AIVs' calls), else CFG_NORM."""
    v = guide_adv(base, 2, a, b, shape, cfg="CFG_IBSHARE_NORM" if share else "CFG_NORM", mix=True)
    if share:
        v = replace(v, kernel=v.kernel + (
            ("using BType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;",
             "using BType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, "
             "LayoutMode::NONE, true>;"),))
    return v


SPLIT_K_PAGE = GUIDE + "Matmul高阶API使能多核切K.md"
MDL_PAGE = GUIDE + "Matmul高阶API使能MDL模板.md"
TILING_PAGE = GUIDE + "Matmul算子优化Tiling策略.md"
SPLIT_K_SHAPE = (16, 1024, 16)  # M = N = 16, K = 1024 (the page's lines 54-55): all of K in L1 at once
MDL_ONE_OF_24 = (128, 1024, 1280)  # M = 128, K = 1024, N = 30720 over 24 cores: singleCoreN 1280 (lines 55-56)
IBSHARE_AB_PAGE = GUIDE + "Matmul高阶API使能IBShare模板共享A和B矩阵数据.md"
IBSHARE_AB_SHAPE = (128, 384, 256)  # one AI Core: A 128 x 384, B 384 x 256 (the page's lines 29, 38)
TILING_SHAPE = (2560, 1024, 512)  # the page's 4096 x 4096 x 5120 scaled: 128 rows of M a core on 20 cores
GUIDE_PAIRS = [
    Pair("two cores splitting K (C cleared, IterateAll with enAtomic 1) beat one core taking all of K, M = N = 16, "
         "K = 1024 (published 19.60 -> 13.70 us, 1.43x)", f"{SPLIT_K_PAGE}:52-55, 64, 99-109, 118",
         guide_adv("128, 256, 64", shape=SPLIT_K_SHAPE, a=(16, 16), b=(16, 16)),
         split_k(2, SPLIT_K_SHAPE, a=(8, 8), b=(8, 8))),
    # The emulator's Norm copies stepKa slices a time as MDL does; the page's Norm copies one base block
    # (lines 73, 79), which is the tiling with stepKa = stepKb = 1.
    Pair("CFG_MDL's large packets (stepKa = stepKb = 4, depth 8) beat CFG_NORM's one base block per GM -> L1 copy, "
         "one core's share of M = 128, K = 1024, N = 30720 on 24 cores (published 83.68 -> 53.4 us, 1.57x)",
         f"{MDL_PAGE}:55-61, 69, 73, 79, 121", guide_adv(shape=MDL_ONE_OF_24),
         guide_adv(shape=MDL_ONE_OF_24, a=(4, 8), b=(4, 8), cfg="CFG_MDL")),
    Pair("20 cores beat 4, base block [64, 64, 256] (published 12045 -> 2532 us, 4.76x; M = K = 4096, N = 5120 "
         "scaled to 2560 x 1024 x 512)", f"{TILING_PAGE}:33-37, 95, 107, 111",
         guide_adv("64, 64, 256", cores=4, shape=TILING_SHAPE), guide_adv("64, 64, 256", cores=20, shape=TILING_SHAPE)),
    Pair("base block [128, 256, 64] beats [64, 64, 256] on 20 cores (published MTE2 2452 -> 808 us, 3.03x)",
         f"{TILING_PAGE}:111-134", guide_adv("64, 64, 256", cores=20, shape=TILING_SHAPE),
         guide_adv("128, 256, 64", cores=20, shape=TILING_SHAPE)),
    Pair("large packets (CFG_MDL, stepKa = stepKb = 4, depth 8: the host rule's largest double-buffered step "
         "that fits L1; the page prints none) beat one base block per GM -> L1 copy (published MTE2 808 -> 591 us, "
         "1.37x)", f"{TILING_PAGE}:141-158",
         guide_adv("128, 256, 64", cores=20, shape=TILING_SHAPE),
         guide_adv("128, 256, 64", cores=20, shape=TILING_SHAPE, a=(4, 8), b=(4, 8), cfg="CFG_MDL")),
]
GUIDE_PAIRS.append(
    Pair("A and B IBSHARE (the two AIVs issue one matmul the AIC computes once) beat the two AIVs each taking half "
         "of K with enAtomic, one AI Core (published 27.11 -> 22.44 us)", f"{IBSHARE_AB_PAGE}:29, 38, 59, 63, 68, 126",
         split_k(2, IBSHARE_AB_SHAPE, a=(3, 6), b=(3, 6), mix=True),
         ibshare_ab(IBSHARE_AB_SHAPE, "128, 256, 64", (6, 6), (6, 6))))
IBSHARE_B_PAGE = GUIDE + "Matmul高阶API使能IBShare模板共享B矩阵数据.md"
IBSHARE_B_SHAPE = (64, 384, 256)  # one AI Core, 32 rows of A on each AIV, one B (the page's lines 51-56)
GUIDE_PAIRS.append(
    Pair("B IBSHARE on CFG_IBSHARE_NORM beats the Norm template: the AIC copies B to L1 once for both AIVs' calls "
         "(published 10.29 -> 9.93 us; MTE2 5.56 -> 4.71 us)", f"{IBSHARE_B_PAGE}:51-56, 64, 68, 101, 105",
         ibshare_b(IBSHARE_B_SHAPE, "32, 256, 64", (6, 6), (6, 6), share=False),
         ibshare_b(IBSHARE_B_SHAPE, "32, 256, 64", (6, 6), (6, 6), share=True)))
NBUFFER33_PAGE = GUIDE + "Matmul高阶API使能NBuffer33模板.md"
NBUFFER33_SHAPE = (256, 192, 256)  # one core's share of M = 256, K = 192, N = 512 on 2 (the page's lines 55-60)
GUIDE_PAIRS.append(
    Pair("NBuffer33MatmulPolicy beats the default MDL policy: A's copy split by row group, so the first group's "
         "work overlaps the second's copy, where the default copies A and B whole first (published 34.01 -> "
         "32.66 us)", f"{NBUFFER33_PAGE}:55-60, 68, 72, 109, 113",
         guide_adv("128, 256, 64", shape=NBUFFER33_SHAPE, a=(3, 6), b=(3, 6), cfg="CFG_MDL", step_m=2),
         guide_adv("128, 256, 64", shape=NBUFFER33_SHAPE, a=(3, 6), b=(3, 6), cfg="CFG_MDL", step_m=2,
                   nbuffer33=True)))
CONSTANT_PAGE = GUIDE + "Matmul高阶API使能Tiling全量常量化.md"
CONSTANT_SHAPE = (128, 64, 1280)  # one AIC's share of M = 128, K = 64, N = 30720 on 24 (the page's lines 55-65)


def constant_tiling(shape: tuple[int, int, int]) -> Variant:
    """adv() on a fully constant tiling (the page's steps 1-3: GetMMConfig on the single-core shape and base
    block, GetMatmulApiTiling, REGIST_MATMUL_OBJ with a null tiling); its L1 steps are the host rule's."""
    m, k, n = shape
    v = adv(shape=shape)
    kernel = v.kernel + (
        ("    AscendC::Matmul<AType, BType, CType> mm;",
         f"    constexpr static MatmulShapeParams SHAPE{{{m}, {n}, {k}, 128, 256, 64}};\n"
         "    constexpr static MatmulConfig CFG = GetMMConfig<MatmulConfigMode::CONFIG_MDL>(SHAPE);\n"
         "    constexpr static auto CONSTANT_CFG = AscendC::GetMatmulApiTiling<AType, BType, CType, CType>(CFG);\n"
         "    AscendC::Matmul<AType, BType, CType, CType, CONSTANT_CFG> mm;"),
        ("REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);",
         "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, (TCubeTiling*)nullptr);"))
    return Variant(v.task, v.host, kernel, v.shape)


# The order of this pair follows from the Init figures taken from the same page (costs.py
# matmul_init_cycles, matmul_static_init_cycles): it checks that a constant tiling reaches the cost
# model (its records say so), not the model's figures.
GUIDE_PAIRS.append(
    Pair("a fully constant tiling (GetMatmulApiTiling, a null TCubeTiling) beats the tiling from the host on CFG_MDL, "
         "pure Cube mode, one AIC's share (published aic_time 10.62 -> 7.87 us; scalar 6.32 -> 3.38 us)",
         f"{CONSTANT_PAGE}:55-65, 73, 77, 136, 140",
         guide_adv(shape=CONSTANT_SHAPE, a=(4, 8), b=(4, 8), cfg="CFG_MDL"), constant_tiling(CONSTANT_SHAPE)))
PAIRS += GUIDE_PAIRS

# matmul_high_performance Case 2 against Case 3: the 24 cores split M x N = 2 x 12 (singleCoreN = ceil(N / 12)
# = 683, so every N block but the first starts off a 512-byte boundary of B and C) against 4 x 6 (singleCoreN
# 1536, a multiple of 256 halves: every offset aligned; the last block the tail 512). N stays the README's
# 8192, so both splits and their tails are the sample's; M = 8192 / 4 keeps several base blocks of M a core
# (8 and 4: B is re-read from L2 as on the device) and K = 8192 / 32 keeps each variant under ~20 s. The
# sample's B is transposed ([N, K]); matmul_adv reads B as [K, N], so here the N offset misaligns B's reads
# as well as C's writes (docs/cube.md, "Matmul tilings in the published order").
SPLIT_SHAPE = (2048, 256, 8192)


def core_split(m_by_n: tuple[int, int], align_n: int) -> Variant:
    """matmul_adv on the sample's Case 2/3 tiling (base [128, 256, 64], depths and steps 1) with the cores
    split m_by_n along M and N, each core's N rounded up to align_n elements."""
    v = adv(cores=m_by_n[0] * m_by_n[1], shape=SPLIT_SHAPE)
    host = ((r"^SPLIT_N = \d+", f"SPLIT_N = {m_by_n[1]}"), (r"^ALIGN_N = \d+", f"ALIGN_N = {align_n}"))
    return replace(v, host=v.host + host)


PAIRS.append(Pair("a 4 x 6 split of M and N over 24 cores, each core's N offset 512-byte aligned, beats 2 x 12 "
                  "(published 12541.22 -> 12283.84 us, 2.05%; MTE2 15.3% less)",
                  f"{HP}:145-206 (Case 3 against Case 2)", core_split((2, 12), 1), core_split((4, 6), 256)))


# matmul_high_performance Case 6 against Case 5: the sample's own shape, M = N = K = 8192 (A, B and C 128 MB each
# in half; here C is float, 256 MB), past the 192 MB L2, so it is estimated without its values
# (--estimate-only). Case 5 is the 4 x 6 split with L1 filled (depthA1 16, stepKa 8, depthB1 8, stepKb 4); Case 6
# runs the same cores over A's two halves of M one after the other (singleCoreM 1024 instead of 2048), so B,
# read by every core in each half, is found in L2 the second time.
L2_SHAPE = (8192, 8192, 8192)
_BODY = ("    // Blocks run down M first", "    mm.IterateAll(cGm);\n")
L2_HALVES_BODY = """\
    // The sample's Case 6: A's two halves of M one after the other, all cores on one half at a time; within a
    // half the blocks run down M first (block i takes the half's block (i % mBlocks, i / mBlocks)).
    const int32_t halfM = tiling.M / 2;
    const int32_t mBlocks = (halfM + tiling.singleCoreM - 1) / tiling.singleCoreM;
    const int32_t col0 = AscendC::GetBlockIdx() / mBlocks * tiling.singleCoreN;
    const int32_t cols = tiling.N - col0 < tiling.singleCoreN ? tiling.N - col0 : tiling.singleCoreN;
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> cGm;
    bGm.SetGlobalBuffer((__gm__ half *)b + col0, int64_t(tiling.Kb - 1) * tiling.N + cols);
    for (int32_t part = 0; part < 2; ++part) {
        const int32_t row0 = part * halfM + AscendC::GetBlockIdx() % mBlocks * tiling.singleCoreM;
        const int32_t left = (part + 1) * halfM - row0;
        const int32_t rows = left < tiling.singleCoreM ? left : tiling.singleCoreM;
        aGm.SetGlobalBuffer((__gm__ half *)a + int64_t(row0) * tiling.Ka, int64_t(rows) * tiling.Ka);
        cGm.SetGlobalBuffer((__gm__ float *)c + int64_t(row0) * tiling.N + col0, int64_t(rows - 1) * tiling.N + cols);
        if (rows < tiling.singleCoreM || cols < tiling.singleCoreN) {
            mm.SetTail(rows, cols);
        }
        mm.SetTensorA(aGm, false);
        mm.SetTensorB(bGm, false);
        mm.IterateAll(cGm);
    }
"""


def l1_filled(shape: tuple[int, int, int] = L2_SHAPE, check: bool = False) -> Variant:
    """The sample's Case 5 on matmul_adv: 24 cores split 4 x 6, N offsets 512-byte aligned, L1 filled."""
    v = adv(cores=24, a=(8, 16), b=(4, 8), shape=shape)
    host = ((r"^SPLIT_N = \d+", "SPLIT_N = 6"), (r"^ALIGN_N = \d+", "ALIGN_N = 256"))
    return replace(v, host=v.host + host, check=check)


def l2_halves(shape: tuple[int, int, int] = L2_SHAPE, check: bool = False) -> Variant:
    """The sample's Case 6: Case 5 run over A's two halves of M, one after the other."""
    v = l1_filled(shape, check)
    text = (EXAMPLES / "matmul_adv" / "matmul_adv.cpp").read_text()
    body = text[text.index(_BODY[0]):text.index(_BODY[1]) + len(_BODY[1])]
    host = ((r"single_m = round_up\(ceil_div\(m, split_m\), 16\)",
             "single_m = round_up(ceil_div(m // 2, split_m), 16)"),
            (r"cores = ceil_div\(m, single_m\)", "cores = ceil_div(m // 2, single_m)"))
    return replace(v, host=v.host + host, kernel=v.kernel + ((body, L2_HALVES_BODY),))


PAIRS.append(Pair("L2 cache splitting (A's two halves of M one after the other, B found in L2 the second time) "
                  "beats one pass when A, B and C exceed the 192 MB L2 (published 4156.76 -> 4088.36 us, 1.6%)",
                  f"{HP}:296-345 (Case 6 against Case 5)", l1_filled(), l2_halves()))



# matmul_basic_api_high_performance Scenario 2 against 1: the basic-API kernel laid out as the sample's
# (examples/tasks/matmul_basic_hp: a 4 x 6 grid of core blocks, large packets of 8 and 4 k steps, two in L1 each)
# at the sample's 8192^3, estimate-only; Scenario 2 covers M in two passes (singleCoreM 1024), so B's columns,
# read by every core of a column in the first pass, are found in L2 in the second.
def basic_hp(rounds: int, shape: tuple[int, int, int] = L2_SHAPE, check: bool = False) -> Variant:
    """matmul_basic_hp covering M in `rounds` passes."""
    return Variant("matmul_basic_hp", ((r"^L2_ROUNDS = \d+", f"L2_ROUNDS = {rounds}"),), shape=shape, check=check)


PAIRS.append(Pair("L2 cache splitting on the basic API (the cores cover M in two passes, B found in L2 the second "
                  "time) beats one pass (published Task Duration 4121.16 -> 4081.64 us, MTE2 3552.248 -> 3487.068 us)",
                  f"{BASIC_HP}:337-347 (Scenario 2 against 1)", basic_hp(1), basic_hp(2)))

# The L2 Cache page's pair (Matmul高阶API使能L2-Cache切分.md): A [30720, 4096] and B [4096, 1024] half (the page's
# table prints A as 30720 x 1024; its sample, matmul_l2cache, and the product's K say 4096), 24 cores, each tile one
# [128, 256] base block with all of K (CFG_MDL, UnitFlag on, stepKa = stepKb = 4, depth 8: the sample's constant
# tiling), the tiles dealt to the cores in turn. A alone is 251 MB, past the 192 MB L2. The slower side walks the
# whole of M at a time, so each pass over A reads it from HBM again; the faster side groups the tiles into L2
# blocks of 24 tile rows (A's 24 MB of them, B 8 MB and C's 12 MB fit: the sample's split search gives 24 rows at
# this shape) and finishes a block, all of N, before the next, so A's rows are re-read from L2.
L2_PAGE = GUIDE + "Matmul高阶API使能L2-Cache切分.md"
L2_PAGE_SHAPE = (30720, 4096, 1024)
L2_TILES_BODY = """\
    // L2 blocks of L2_ROWS tile rows of C (all of N), one after the other; tile t of the whole goes to core
    // t % cores. In a block, tile j is row j % rows, column (j / rows + j % rows) % nTiles: the cores busy at one
    // time read different rows of A and different columns of B (a diagonal), and each row of A is read
    // nTiles times within the block, while it is still in L2.
    constexpr int32_t L2_ROWS = {rows};
    const int32_t mTiles = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    const int32_t nTiles = (tiling.N + tiling.singleCoreN - 1) / tiling.singleCoreN;
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> cGm;
    for (int32_t t = AscendC::GetBlockIdx(); t < mTiles * nTiles; t += AscendC::GetBlockNum()) {{
        const int32_t first = t / (L2_ROWS * nTiles) * L2_ROWS;
        const int32_t inBlock = mTiles - first < L2_ROWS ? mTiles - first : L2_ROWS;
        const int32_t j = t % (L2_ROWS * nTiles);
        const int32_t row0 = (first + j % inBlock) * tiling.singleCoreM;
        const int32_t col0 = (j / inBlock + j % inBlock) % nTiles * tiling.singleCoreN;
        const int32_t rows = tiling.M - row0 < tiling.singleCoreM ? tiling.M - row0 : tiling.singleCoreM;
        const int32_t cols = tiling.N - col0 < tiling.singleCoreN ? tiling.N - col0 : tiling.singleCoreN;
        aGm.SetGlobalBuffer((__gm__ half *)a + int64_t(row0) * tiling.Ka, int64_t(rows) * tiling.Ka);
        bGm.SetGlobalBuffer((__gm__ half *)b + col0, int64_t(tiling.Kb - 1) * tiling.N + cols);
        cGm.SetGlobalBuffer((__gm__ float *)c + int64_t(row0) * tiling.N + col0, int64_t(rows - 1) * tiling.N + cols);
        mm.SetTail(rows, cols);
        mm.SetTensorA(aGm, false);
        mm.SetTensorB(bGm, false);
        mm.IterateAll(cGm);
    }}
"""


def l2_tiles(rows_per_block: int | None, shape: tuple[int, int, int] = L2_PAGE_SHAPE, check: bool = False) -> Variant:
    """The L2 Cache page's kernel on matmul_adv: [128, 256] tiles over 24 cores in L2 blocks of `rows_per_block`
    tile rows (None: the whole of M, no L2 split)."""
    v = adv("128, 256, 64", cores=24, a=(4, 8), b=(4, 8), shape=shape, mdl=(("enUnitFlag", "true"),))
    host = ((r"single_m = round_up\(ceil_div\(m, split_m\), 16\)", "single_m = BASE_M  # a tile: one base block"),
            (r"single_n = min\(n, round_up\(ceil_div\(n, SPLIT_N\), ALIGN_N\)\)", "single_n = BASE_N"),
            (r"cores = ceil_div\(m, single_m\) \* ceil_div\(n, single_n\)", "cores = MAX_CORES"))
    text = (EXAMPLES / "matmul_adv" / "matmul_adv.cpp").read_text()
    body = text[text.index(_BODY[0]):text.index(_BODY[1]) + len(_BODY[1])]
    rows = rows_per_block or -(-shape[0] // 128)
    return replace(v, host=v.host + host, kernel=v.kernel + ((body, L2_TILES_BODY.format(rows=rows)),), check=check)


PAIRS.append(Pair("L2 cache splitting (the tiles in L2 blocks of 24 tile rows, all of N, one block after another) "
                  "beats dealing the tiles over the whole of M when A, B and C exceed the L2 (published aic_time "
                  "867 -> 805.6 us, MTE2 10.7% less)", f"{L2_PAGE}:30, 39, 55, 172", l2_tiles(None), l2_tiles(24)))


# The grouped matmul's pairs (quant_grouped_matmul: per group of rows of x its own int8 weight in NZ, the int32
# product dequantised per column and per row, FasterGelu, half out; the AIC hands each [128, 256] base block to the
# AIVs through a workspace slot). The GroupedMatmul tuning page (Atlas A2, 8 cores; x [1024, 1024] in 8 groups,
# weight [8, 1024, 8192], y [1024, 8192]; here N halved) first runs two AIVs per AIC instead of one, the kernel
# being vector-bound. asc-devkit's quant_group_matmul sample (Atlas A2: 24 cores, x [8192, 1024] in groups of 1024,
# N 8192; here one group of 1024 rows, N 4096, on 8 cores: each weight column still read by eight row blocks) goes
# from one AIV and one workspace slot (Scenario 0) to two AIVs (1), then to four slots (2). The page's two later
# steps (four slots for two, double-buffered UB) are not counted: docs/cube.md says why.
GROUPED_PAGE = "docs/zh/guide/算子实践参考/优秀实践/GroupedMatmul算子性能调优案例.md"
GROUPED_SAMPLE = ("examples/01_simd_cpp_api/05_best_practices/03_fusion_compute/quant_group_matmul_high_performance/"
                  "README_en.md")
GROUPED_INPUTS = """\
def get_input_groups():
    return [_case(torch.Generator().manual_seed(3), {sizes}, {k}, {n})]


def get_init_inputs():
    return []
"""


def grouped(ratio: int, slots: int, buffers: int, sizes: tuple[int, ...] = (128,) * 8, k: int = 1024, n: int = 4096,
            cores: int = 8, check: bool = False) -> Variant:
    """quant_grouped_matmul with `ratio` AIVs per AIC, `slots` workspace slots and `buffers` UB buffers a queue."""
    host = tuple((rf"^{name} = \d+", f"{name} = {v}")
                 for name, v in (("MAX_AI_CORES", cores), ("RATIO", ratio), ("SLOTS", slots), ("BUFFER_NUM", buffers)))
    return Variant("quant_grouped_matmul", host=host, shape=(sum(sizes), k, n), check=check,
                   inputs=GROUPED_INPUTS.format(sizes=list(sizes), k=k, n=n))


PAIRS += [
    Pair("two AIVs per AIC (MIX_AIC_1_2, alternate row chunks of each block) beat one when the vector side bounds "
         "the kernel (published 218.1 -> 154.2 us)", f"{GROUPED_PAGE}:211, 15, 106",
         grouped(1, 2, 1), grouped(2, 2, 1)),
    Pair("__mix__(1, 2) beats __mix__(1, 1) with one workspace slot (Scenario 1 against 0, Atlas A2: published "
         "583.512 -> 353.887 us)", f"{GROUPED_SAMPLE}:387, 80-84, 382",
         grouped(1, 1, 2, sizes=(1024,)), grouped(2, 1, 2, sizes=(1024,))),
    Pair("a four-slot Cube-Vector pipeline beats one slot on __mix__(1, 2) (Scenario 2 against 1, Atlas A2: "
         "published 353.887 -> 299.286 us)", f"{GROUPED_SAMPLE}:388, 80-84, 382",
         grouped(2, 1, 2, sizes=(1024,)), grouped(2, 4, 2, sizes=(1024,))),
]


@pytest.fixture(scope="module")
def estimates(tmp_path_factory) -> dict[Variant, float]:
    """Every variant's estimate, each evaluated once (variants sharing a kernel share its build); no
    advice (each finding re-estimates the kernel: twice the time of the estimate again)."""
    cache = tmp_path_factory.getbasetemp() / "cube-order-cache"
    checked = Evaluator(EvalSettings(trials=1, advise=False, cache_dir=cache))
    unchecked = Evaluator(EvalSettings(check=False, advise=False, run_timeout_s=600, cache_dir=cache))
    root = tmp_path_factory.mktemp("cube-order")
    out: dict[Variant, float] = {}
    try:
        for v in dict.fromkeys(x for p in PAIRS for x in (p.slower, p.faster)):
            r = (checked if v.check else unchecked).evaluate(v.materialise(root / f"v{len(out)}")).report
            assert r.status == ("correct" if v.check else "estimated"), (v, [d.message for d in r.diagnostics][:2])
            assert r.timing is not None
            out[v] = r.timing.estimated_us
    finally:
        checked.close()
        unchecked.close()
    return out


def test_the_l2_kernels_are_right_at_a_shape_they_can_check(tmp_path):
    """The L2 splitting variants' own check, at a shape small enough to compute (both halves or passes, or several
    L2 blocks, the last one short, with tails in M and N)."""
    with Evaluator(EvalSettings(trials=1, advise=False)) as ev:
        for v in (l1_filled((1000, 256, 2000), True), l2_halves((1000, 256, 2000), True),
                  l2_tiles(None, (1000, 256, 1000), True), l2_tiles(3, (1000, 256, 1000), True),
                  basic_hp(2, (1000, 256, 2000), True)):
            r = ev.evaluate(v.materialise(tmp_path / f"v{hash(v)}")).report
            assert r.status == "correct", [d.message for d in r.diagnostics][:2]


def test_the_grouped_variants_are_right_at_a_shape_they_can_check(tmp_path):
    """The grouped pairs' settings the bundled example does not run (one AIV, one or two slots, single-buffered
    queues), checked against the reference at a small shape with partial blocks."""
    with Evaluator(EvalSettings(trials=1, advise=False)) as ev:
        for v in (grouped(1, 1, 1, sizes=(100, 37), k=256, n=512, cores=4, check=True),
                  grouped(2, 2, 1, sizes=(100, 37), k=256, n=512, cores=4, check=True)):
            r = ev.evaluate(v.materialise(tmp_path / f"v{hash(v)}")).report
            assert r.status == "correct", [d.message for d in r.diagnostics][:2]


def pair_id(p: Pair) -> str:
    """The source's sample folder (a README) or page name, and its first lines."""
    path, lines = p.source.split(":")[:2]
    name = Path(path).parent.name if path.endswith("README_en.md") else Path(path).stem
    return f"{name}:{lines.split()[0].rstrip(',')}"


@pytest.mark.parametrize("pair", PAIRS, ids=[pair_id(p) for p in PAIRS])
def test_published_pair_estimates_in_the_published_order(pair, estimates):
    slow, fast = estimates[pair.slower], estimates[pair.faster]
    assert fast < slow, f"{pair.claim} ({pair.source}): estimated {fast:.1f} us against {slow:.1f} us"


# The pair with a published ratio the L2 model should move toward (issue 19): on one core the matmul re-reads
# A N/baseN and B M/baseM times, and the device reads them the second time from L2.
BASE_BLOCK = PAIRS[0]
PUBLISHED_BASE_BLOCK_RATIO = 759363.98 / 249467.08  # HP:141, Task Duration of Case 0 over Case 1 (3.04x)


@pytest.fixture(scope="module")
def without_l2(tmp_path_factory) -> dict[Variant, float]:
    """The base-block pair estimated with L2 hits as slow as HBM reads (l2_read_speedup 1: the model before
    the L2 cache), through a cost profile as `sage-npu calibrate` writes one."""
    from sage_npu.npu_eval.calibrate import save_user_costs
    from sage_npu.npu_eval.costs import default_costs

    profiles = tmp_path_factory.mktemp("no-l2-profile")
    save_user_costs(profiles, "910B2", default_costs(910).model_copy(update={"l2_read_speedup": 1.0}))
    ev = Evaluator(EvalSettings(trials=1, profile_dir=profiles,
                                cache_dir=tmp_path_factory.getbasetemp() / "cube-order-cache"))
    root = tmp_path_factory.mktemp("cube-order-no-l2")
    out: dict[Variant, float] = {}
    try:
        for v in (BASE_BLOCK.slower, BASE_BLOCK.faster):
            r = ev.evaluate(v.materialise(root / f"v{len(out)}")).report
            assert r.timing is not None
            out[v] = r.timing.estimated_us
    finally:
        ev.close()
    return out


def test_l2_moves_the_base_block_ratio_toward_the_published_one(estimates, without_l2):
    def off(ratio: float) -> float:  # how far from the published ratio, either way
        return abs(math.log(ratio / PUBLISHED_BASE_BLOCK_RATIO))

    slow, fast = BASE_BLOCK.slower, BASE_BLOCK.faster
    assert estimates[slow] < without_l2[slow] and estimates[fast] < without_l2[fast]
    assert off(estimates[slow] / estimates[fast]) < off(without_l2[slow] / without_l2[fast])


def test_docs_name_every_pair():
    doc = (ROOT / "docs" / "cube.md").read_text()
    for p in PAIRS:
        for cited in re.findall(r"(\w+)/README_en\.md:(\d+-\d+)", p.source):
            assert f"{cited[0]}/README_en.md:{cited[1]}" in doc, p.source
        if p.source.startswith(GUIDE):  # a guide page: its name and every line it is cited by
            assert p.source.removeprefix(GUIDE) in doc, p.source
        elif p.source.startswith("docs/"):  # another guide page
            assert Path(p.source).name in doc, p.source
