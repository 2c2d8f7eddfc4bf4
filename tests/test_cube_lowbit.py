"""The cube's low-bit paths on the 910B: int4b_t matmuls (two elements a byte, 16 x 64 fractals,
int4 x int4 -> int32) and the 4:2 structured-sparse matmul (LoadDataWithSparse, MmadWithSparse).

One C++ driver (built once) runs each case through the basic API (DataCopy with Nd2NzParams,
LoadData (2D and img2col), LoadDataWithTranspose, Mmad or MmadWithSparse, Fixpipe) on several shapes, full and
tail, and dumps the inputs and C. numpy recomputes C from the doc pages' definitions, written
here independently of sage_sim/cube.h: nibble unpacking (element 2i in the low nibble), and the
sparse selection table of the MmadWithSparse page. Provoked faults are checked for code and line."""

from __future__ import annotations

import numpy as np
import pytest

from sage_npu.npu_eval import api_support
from sage_npu.npu_eval.chips import chip_profile
from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

static uint32_t al(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }
static uint32_t g_seed = 12345;
static uint32_t rnd() { g_seed = g_seed * 1103515245u + 12345u; return g_seed >> 8; }
static void sync_all() { PipeBarrier<PIPE_ALL>(); }

// L0C (M16 x n as NZ) -> GM int32 rows of N, dumped as `name`_c.
static void store_c(const std::string& name, const LocalTensor<int32_t>& c, uint32_t M, uint32_t N,
                    uint8_t unit = 0) {
    int32_t* out = gm_alloc<int32_t>("c", size_t(M) * N);
    GlobalTensor<int32_t> gc;
    gc.SetGlobalBuffer(out, M * N);
    FixpipeParamsV220 fp{uint16_t(N), uint16_t(M), uint16_t(al(M, 16)), N, false};
    fp.unitFlag = unit;
    Fixpipe(gc, c, fp);
    write_raw(name + "_c", out, sizeof(int32_t) * M * N);
}

// Random int4b_t A (M x K) and B (K x N elements), packed two a byte in GM and dumped as name_a/_b.
static void int4_operands(const std::string& name, size_t M, size_t K, size_t N, GlobalTensor<int4b_t>& ga,
                          GlobalTensor<int4b_t>& gb) {
    int8_t* a = gm_alloc<int8_t>("a4", M * K / 2);
    int8_t* b = gm_alloc<int8_t>("b4", K * N / 2);
    for (size_t i = 0; i < M * K / 2; ++i) a[i] = int8_t(rnd());
    for (size_t i = 0; i < K * N / 2; ++i) b[i] = int8_t(rnd());
    write_raw(name + "_a", a, M * K / 2);
    write_raw(name + "_b", b, K * N / 2);
    ga.SetGlobalBuffer(reinterpret_cast<int4b_t*>(a), M * K);
    gb.SetGlobalBuffer(reinterpret_cast<int4b_t*>(b), K * N);
}

// int4b_t: A (M x K) and B packed two a byte in GM. `b_kn`: B is K x N rows (ND), moved to L0B
// with LoadDataWithTranspose's 64 x 64 int4 squares; else B is N x K rows (B transposed, as the
// mmad sample's scenario 4), its NZ copy already ZN and loaded with LoadData. `a3d`: A goes to L0A
// through img2col (LoadData3DParamsV2<int4b_t>: the NZ copy read as a 1 x M16 map of K0 channels).
static void int4_matmul(const std::string& name, uint32_t M, uint32_t K, uint32_t N, bool b_kn, bool a3d = false) {
    const uint32_t M16 = al(M, 16), K0 = al(K, 64), N16 = al(N, 16), N64 = al(N, 64);
    const uint32_t nb = b_kn ? N64 : N16;  // B's columns in L0B (and the Mmad's n)
    GlobalTensor<int4b_t> ga, gb;
    int4_operands(name, M, K, N, ga, gb);
    LocalTensor<int4b_t> a1(TPosition::A1, 0, M16 * K0), b1(TPosition::B1, 128 * 1024, K0 * nb);
    LocalTensor<int4b_t> a2(TPosition::A2, 0, M16 * K0), b2(TPosition::B2, 0, K0 * nb);
    LocalTensor<int32_t> c(TPosition::CO1, 0, M16 * nb);
    // ND -> NZ of int4b_t counts bytes (two elements): dValue and srcDValue are halved.
    DataCopy(a1, ga, Nd2NzParams{1, uint16_t(M), uint16_t(K / 2), 0, uint16_t(K / 2), uint16_t(M16), 1, 0});
    if (b_kn) DataCopy(b1, gb, Nd2NzParams{1, uint16_t(K), uint16_t(N / 2), 0, uint16_t(N / 2), uint16_t(K0), 1, 0});
    else DataCopy(b1, gb, Nd2NzParams{1, uint16_t(N), uint16_t(K / 2), 0, uint16_t(K / 2), uint16_t(N16), 1, 0});
    sync_all();
    const uint8_t pads[4] = {0, 0, 0, 0};
    if (a3d)
        LoadData(a2, a1, LoadData3DParamsV2<int4b_t>(pads, 1, uint16_t(M16), uint16_t(K0), uint16_t(K0), uint16_t(M16),
                                                     0, 0, 1, 1, 1, 1, 1, 1, false, false, 0));
    for (uint32_t i = 0; !a3d && i < M16 / 16; ++i)
        LoadData(a2[i * K0 * 16], a1[i * 16 * 64],
                 LoadData2DParams{0, uint8_t(K0 / 64), uint16_t(M16 / 16), 0, 0, false, 0});
    if (b_kn) {  // per 64 of k: the N64 / 64 squares of that k-block, each into 4 ZN fractals
        for (uint32_t kb = 0; kb < K0 / 64; ++kb)
            LoadDataWithTranspose(b2[kb * (N64 / 16) * 16 * 64], b1,
                                  LoadData2dTransposeParams{uint16_t(kb), uint8_t(N64 / 64), uint16_t(K0 / 64), 3, 0});
    } else {
        LoadData(b2, b1, LoadData2DParams{0, uint8_t(K0 / 64 * N16 / 16), 1, 0, 0, false, 0});
    }
    sync_all();
    Mmad(c, a2, b2, MmadParams{uint16_t(M), uint16_t(nb), uint16_t(K), 0, false, true});
    sync_all();
    store_c(name, c, M, N);
}

// The 4:2 index pairs of the doc's densification table (index 0, index 1) and whether the group
// had one nonzero (its second dense value is then 0).
static const uint8_t kPairs[10][3] = {{2, 2, 0}, {1, 2, 0}, {0, 2, 0}, {1, 1, 0}, {0, 1, 0},
                                     {0, 0, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 1}, {0, 0, 1}};

// A (M x K int8) and the 4:2 sparse B as its dense half (bt: N rows of K/2) with the 2-bit index of
// each dense value, in GM as the official sample's gen_data lays it out: Zn fractals of 16 n x 32 kd,
// (kd / 32) * N16 / 16 + n / 16, 8 bytes a row, four codes a byte, low bits first. `bd` and `code`
// (K/2 x N) are dumped for numpy. `bad`: one index set to 3.
struct SparseOperands {
    int8_t *a, *bt;
    uint8_t* idx;
    uint32_t idx_bytes;
};
static SparseOperands sparse_operands(const std::string& name, uint32_t M, uint32_t K, uint32_t N, bool bad) {
    const uint32_t Kd = K / 2, N16 = al(N, 16), kdb = (Kd + 31) / 32;
    int8_t* a = gm_alloc<int8_t>("sa", size_t(M) * K);
    int8_t* bt = gm_alloc<int8_t>("sbt", size_t(N) * Kd);  // B dense, transposed: N rows of Kd
    uint8_t* code = new uint8_t[size_t(Kd) * N]();
    int8_t* bd = new int8_t[size_t(Kd) * N]();
    uint8_t* idx = gm_alloc<uint8_t>("sidx", size_t(kdb) * (N16 / 16) * 128);
    for (uint32_t i = 0; i < M * K; ++i) a[i] = int8_t(rnd());
    for (uint32_t g = 0; g < Kd / 2; ++g)
        for (uint32_t n = 0; n < N; ++n) {
            const uint8_t* p = kPairs[rnd() % 10];
            for (uint32_t h = 0; h < 2; ++h) {
                const uint32_t kd = 2 * g + h;
                code[kd * N + n] = p[h];
                bd[kd * N + n] = h == 1 && p[2] ? 0 : int8_t(rnd());
                bt[n * Kd + kd] = bd[kd * N + n];
            }
        }
    if (bad) code[(Kd - 1) * N + N - 1] = 3;
    // The index in Zn fractals (16 n x 32 kd, 8 bytes a row, four codes a byte, low bits first).
    for (uint32_t kd = 0; kd < Kd; ++kd)
        for (uint32_t n = 0; n < N; ++n) {
            const uint32_t f = (kd / 32) * (N16 / 16) + n / 16, at = f * 128 + (n % 16) * 8 + (kd % 32) / 4;
            idx[at] = uint8_t(idx[at] | code[kd * N + n] << ((kd % 4) * 2));
        }
    write_raw(name + "_a", a, M * K);
    write_raw(name + "_bd", bd, Kd * N);
    write_raw(name + "_code", code, Kd * N);
    return {a, bt, idx, kdb * (N16 / 16) * 128};
}

// A x the 4:2 sparse B through the basic API. `acc`: a second MmadWithSparse accumulates onto the first,
// handing C to the Fixpipe by unit flags (2 then 3 on the Mmads, 3 on the Fixpipe: the UnitFlag page).
static void sparse_matmul(const std::string& name, uint32_t M, uint32_t K, uint32_t N, bool acc, bool bad) {
    const uint32_t Kd = K / 2, M16 = al(M, 16), K32 = al(K, 32), N16 = al(N, 16), kdb = (Kd + 31) / 32;
    const SparseOperands o = sparse_operands(name, M, K, N, bad);
    int8_t *a = o.a, *bt = o.bt;
    uint8_t* idx = o.idx;
    GlobalTensor<int8_t> ga, gb;
    GlobalTensor<uint8_t> gi;
    ga.SetGlobalBuffer(a, M * K);
    gb.SetGlobalBuffer(bt, N * Kd);
    gi.SetGlobalBuffer(idx, kdb * (N16 / 16) * 128);
    LocalTensor<int8_t> a1(TPosition::A1, 0, M16 * K32), b1(TPosition::B1, 128 * 1024, kdb * 32 * N16);
    LocalTensor<uint8_t> i1(TPosition::B1, 256 * 1024, kdb * 8 * N16);
    LocalTensor<int8_t> a2(TPosition::A2, 0, M16 * K32), b2(TPosition::B2, 0, kdb * 32 * N16);
    LocalTensor<int32_t> c(TPosition::CO1, 0, M16 * N16);
    DataCopy(a1, ga, Nd2NzParams{1, uint16_t(M), uint16_t(K), 0, uint16_t(K), uint16_t(M16), 1, 0});
    DataCopy(b1, gb, Nd2NzParams{1, uint16_t(N), uint16_t(Kd), 0, uint16_t(Kd), uint16_t(N16), 1, 0});
    DataCopy(i1, gi, kdb * (N16 / 16) * 128);
    sync_all();
    for (uint32_t i = 0; i < M16 / 16; ++i)
        LoadData(a2[i * K32 * 16], a1[i * 16 * 32],
                 LoadData2DParams{0, uint8_t(K32 / 32), uint16_t(M16 / 16), 0, 0, false, 0});
    LoadDataWithSparse(b2, b1, i1, LoadData2dParams{0, uint8_t(kdb * N16 / 16), 0, 0, 0, false, 0});
    sync_all();
    if (bad) expect("api-misuse", __LINE__ + 1);
    MmadWithSparse(c, a2, b2, MmadParams{uint16_t(M), uint16_t(N), uint16_t(K), uint8_t(acc ? 2 : 0), false, true});
    if (acc) MmadWithSparse(c, a2, b2, MmadParams{uint16_t(M), uint16_t(N), uint16_t(K), 3, false, false});
    sync_all();
    store_c(name, c, M, N, acc ? 3 : 0);
}

// GetSize, GetLength and views of int4b_t tensors count elements, two a byte.
static void int4_sizes() {
    LocalTensor<int4b_t> t(TPosition::A1, 0, 1024);
    LocalTensor<int8_t> i8(TPosition::B1, 4096, 64);
    auto r = i8.ReinterpretCast<int4b_t>();
    std::vector<uint32_t> v{t.GetSize(), t.GetLength(), t[256].GetSize(), t[256].addr_ - t.addr_, r.GetSize(),
                            r.GetLength()};
    write_raw("sizes", v.data(), v.size() * 4);
}

static void lowbit_faults() {
    LocalTensor<int4b_t> a1(TPosition::A1, 0, 4096), b1(TPosition::B1, 8192, 4096);
    LocalTensor<int4b_t> a2(TPosition::A2, 0, 4096), b2(TPosition::B2, 0, 4096);
    LocalTensor<int8_t> s1(TPosition::B1, 16384, 1024), sa2(TPosition::A2, 8192, 1024), sb2(TPosition::B2, 8192, 1024);
    LocalTensor<uint8_t> idx(TPosition::B1, 32768, 128);
    LocalTensor<int32_t> c(TPosition::CO1, 0, 1024);
    LocalTensor<int8_t> a8(TPosition::A2, 16384, 1024);
    try {
        expect("dtype-unsupported", __LINE__ + 1);  // int4b_t transposes into L0B only
        LoadDataWithTranspose(a2, a1, LoadData2dTransposeParams{0, 1, 0, 0, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        const uint8_t pads[4] = {0, 0, 0, 0};
        expect("dtype-unsupported", __LINE__ + 1);  // img2col has no b4 (nor b8) path into L0B
        LoadData(b2, a1, LoadData3DParamsV2<int4b_t>(pads, 1, 16, 64, 64, 16, 0, 0, 1, 1, 1, 1, 1, 1, false, false, 0));
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // LoadData2D transposes 2-byte types only
        LoadData(b2, b1, LoadData2DParams{0, 1, 0, 0, 0, true, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("dtype-unsupported", __LINE__ + 1);  // int8 x int4
        Mmad(c, a8, b2, MmadParams{16, 16, 64, 0, false, true});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);  // two fractals need 256 index bytes; idx holds 128
        LoadDataWithSparse(sb2, s1, idx, LoadData2dParams{0, 2, 0, 0, 0, false, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // no transpose
        LoadDataWithSparse(sb2, s1, idx, LoadData2dParams{0, 1, 0, 0, 0, true, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // dst must be L0B
        LoadDataWithSparse(sa2, s1, idx, LoadData2dParams{0, 1, 0, 0, 0, false, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // no GEMV
        MmadWithSparse(c, sa2, sb2, MmadParams{1, 16, 64, 0, false, true});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        LoadData(sb2[512], s1, LoadData2DParams{0, 1, 0, 0, 0, false, 0});  // B without its index
        sync_all();
        expect("uninitialized-read", __LINE__ + 1);
        MmadWithSparse(c, sa2, sb2[512], MmadParams{16, 16, 64, 0, false, true});
    } catch (const sage::sim::KernelAbort&) {
    }
}

// ---- the Matmul API's int4b_t and 4:2 sparse forms (lib/matmul_intf.h), host tiling included
using I32Gm = MatmulType<TPosition::GM, CubeFormat::ND, int32_t>;
template <bool TB>
using Int4Mm = Matmul<MatmulType<TPosition::GM, CubeFormat::ND, int4b_t>,
                      MatmulType<TPosition::GM, CubeFormat::ND, int4b_t, TB>, I32Gm, I32Gm, CFG_MDL>;
template <const auto& CFG = CFG_MDL>
using SparseMm = Matmul<MatmulType<TPosition::GM, CubeFormat::ND, int8_t>,
                        SparseMatmulType<TPosition::GM, TPosition::GM, CubeFormat::ND, int8_t, true>, I32Gm, I32Gm,
                        CFG>;

// The host tiling for C (M x N, int32) of A and B in `dt`; l1 > 0 shrinks L1 (more K chunks), a
// fixed base block when bk > 0.
static TCubeTiling lowbit_tiling(matmul_tiling::DataType dt, int M, int N, int K, bool tb, bool bias, bool sparse,
                                 int l1, int bm = -1, int bn = -1, int bk = -1) {
    namespace mt = matmul_tiling;
    mt::MatmulApiTiling api;
    api.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, dt, false);
    api.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, dt, tb);
    api.SetCType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_INT32);
    api.SetBiasType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_INT32);
    api.SetOrgShape(M, N, K);
    api.SetShape(M, N, K);
    api.EnableBias(bias);
    if (sparse) api.SetSparse(true);
    api.SetBufferSpace(l1, -1, -1);
    if (bk > 0) api.SetFixSplit(bm, bn, bk);
    optiling::TCubeTiling t;
    if (api.GetTiling(t) == -1) std::exit(3);
    return t;
}
static int32_t* bias_and_c(const std::string& name, const TCubeTiling& t, GlobalTensor<int32_t>& gbias,
                           GlobalTensor<int32_t>& gc) {
    int32_t* bias = gm_alloc<int32_t>("bias", t.N);
    int32_t* c = gm_alloc<int32_t>("c", size_t(t.M) * t.N);
    for (int j = 0; j < t.N; ++j) bias[j] = int32_t(rnd() % 201) - 100;
    write_raw(name + "_bias", bias, t.N * 4);
    write_raw(name + "_tiling", &t, sizeof(t));
    gbias.SetGlobalBuffer(bias, t.N), gc.SetGlobalBuffer(c, t.M * t.N);
    return c;
}
// C block by block (Iterate + GetTensorC) or whole (IterateAll), then End.
template <class MM, class G>
static void compute_c(MM& mm, G& gc, bool iterate) {
    if (iterate) {
        while (mm.Iterate()) mm.GetTensorC(gc);
    } else {
        mm.IterateAll(gc);
    }
    mm.End();
}
// C = A x B (+ bias) with int4b_t A (M x K) and B (K x N, or N x K with TB), IterateAll or, with
// `iterate`, Iterate + GetTensorC.
template <bool TB>
static void mm_int4(const std::string& name, int M, int N, int K, bool bias, bool iterate, int l1, int bk) {
    TCubeTiling t = lowbit_tiling(matmul_tiling::DataType::DT_INT4, M, N, K, TB, bias, false, l1, -1, -1, bk);
    GlobalTensor<int4b_t> ga, gb;
    int4_operands(name, M, K, N, ga, gb);
    GlobalTensor<int32_t> gbias, gc;
    int32_t* c = bias_and_c(name, t, gbias, gc);
    TPipe pipe;
    Int4Mm<TB> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(ga);
    mm.SetTensorB(gb, TB);
    if (bias) mm.SetBias(gbias);
    compute_c(mm, gc, iterate);
    write_raw(name + "_c", c, size_t(M) * N * 4);
}
// C = A x the 4:2 sparse B (+ bias) through SparseMatmulType and SetSparseIndex.
static void mm_sparse(const std::string& name, int M, int N, int K, bool bias, bool iterate, int l1, int bk) {
    TCubeTiling t = lowbit_tiling(matmul_tiling::DataType::DT_INT8, M, N, K, true, bias, true, l1, -1, -1, bk);
    const SparseOperands o = sparse_operands(name, M, K, N, false);
    GlobalTensor<int8_t> ga, gb;
    GlobalTensor<uint8_t> gi;
    GlobalTensor<int32_t> gbias, gc;
    ga.SetGlobalBuffer(o.a, M * K), gb.SetGlobalBuffer(o.bt, N * K / 2), gi.SetGlobalBuffer(o.idx, o.idx_bytes);
    int32_t* c = bias_and_c(name, t, gbias, gc);
    TPipe pipe;
    SparseMm<> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(ga);
    mm.SetTensorB(gb, true);
    mm.SetSparseIndex(gi);
    if (bias) mm.SetBias(gbias);
    compute_c(mm, gc, iterate);
    write_raw(name + "_c", c, size_t(M) * N * 4);
}

// A constant int4b_t tiling (GetMMConfig + GetMatmulApiTiling, 64 x 128 x 128 blocks of a 64 x 128 x
// 512 shape): its sizes count half-bytes; run with a null TCubeTiling on a 50 x 100 x 512 tail.
static void int4_constant_tiling() {
    using A4 = MatmulType<TPosition::GM, CubeFormat::ND, int4b_t>;
    constexpr static MatmulShapeParams shape{64, 128, 512, 64, 128, 128};
    constexpr static MatmulConfig cfg = GetMMConfig<MatmulConfigMode::CONFIG_MDL>(shape);
    constexpr static MatmulApiStaticTiling st = GetMatmulApiTiling<A4, A4, I32Gm, I32Gm>(cfg);
    int32_t fields[] = {st.stepKa, st.depthA1, st.dbL0A, st.shareL1Size};
    write_raw("c4_static", fields, sizeof(fields));
    const int M = 50, N = 100, K = 512;
    int8_t* a = gm_alloc<int8_t>("a4", size_t(M) * K / 2);
    int8_t* b = gm_alloc<int8_t>("b4", size_t(K) * N / 2);
    int32_t* c = gm_alloc<int32_t>("c", size_t(M) * N);
    for (int i = 0; i < M * K / 2; ++i) a[i] = int8_t(rnd());
    for (int i = 0; i < K * N / 2; ++i) b[i] = int8_t(rnd());
    write_raw("c4_a", a, M * K / 2);
    write_raw("c4_b", b, K * N / 2);
    GlobalTensor<int4b_t> ga, gb;
    GlobalTensor<int32_t> gc;
    ga.SetGlobalBuffer(reinterpret_cast<int4b_t*>(a), M * K), gb.SetGlobalBuffer(reinterpret_cast<int4b_t*>(b), K * N);
    gc.SetGlobalBuffer(c, M * N);
    TPipe pipe;
    Matmul<A4, A4, I32Gm, I32Gm, st> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, (TCubeTiling*)nullptr);
    mm.SetOrgShape(M, N, K);
    mm.SetTail(M, N, K);
    mm.SetTensorA(ga), mm.SetTensorB(gb);
    mm.IterateAll(gc);
    mm.End();
    write_raw("c4_c", c, size_t(M) * N * 4);
}

// The pages' limits on these forms, each refused at its call.
static void matmul_lowbit_faults() {
    TCubeTiling t4 = lowbit_tiling(matmul_tiling::DataType::DT_INT4, 32, 64, 128, false, false, false, -1);
    TCubeTiling ts = lowbit_tiling(matmul_tiling::DataType::DT_INT8, 32, 64, 128, true, false, true, -1);
    int8_t* raw = gm_alloc<int8_t>("raw", 8192);
    GlobalTensor<int4b_t> g4;
    GlobalTensor<int8_t> g8;
    GlobalTensor<uint8_t> gi;
    GlobalTensor<int32_t> gc;
    g4.SetGlobalBuffer(reinterpret_cast<int4b_t*>(raw), 8192), g8.SetGlobalBuffer(raw, 4096);
    gi.SetGlobalBuffer(reinterpret_cast<uint8_t*>(raw), 4096);
    gc.SetGlobalBuffer(reinterpret_cast<int32_t*>(raw), 1024);
    TPipe pipe;
    Int4Mm<false> plain;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), plain, &t4);
    try {
        expect("api-misuse", __LINE__ + 1);  // ISTRANS false: the flag must be false (the SetTensorB page)
        plain.SetTensorB(g4, true);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // B is no SparseMatmulType
        plain.SetSparseIndex(gi);
    } catch (const sage::sim::KernelAbort&) {
    }
    TPipe pipe2;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, int4b_t, true>, MatmulType<TPosition::GM, CubeFormat::ND, int4b_t>,
           I32Gm, I32Gm, CFG_MDL> ta;
    REGIST_MATMUL_OBJ(&pipe2, GetSysWorkSpacePtr(), ta, &t4);
    try {
        expect("api-misuse", __LINE__ + 1);  // int4b_t: the flag must equal ISTRANS (true here)
        ta.SetTensorA(g4);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        ta.SetTensorA(g4, true), ta.SetTensorB(g4);
        expect("dtype-unsupported", __LINE__ + 1);  // an int4b_t A is never transposed on Atlas A2
        ta.IterateAll(gc);
    } catch (const sage::sim::KernelAbort&) {
    }
    TPipe pipe3;
    SparseMm<> sp;
    REGIST_MATMUL_OBJ(&pipe3, GetSysWorkSpacePtr(), sp, &ts);
    try {
        sp.SetTensorA(g8), sp.SetTensorB(g8, true);
        expect("api-misuse", __LINE__ + 1);  // no SetSparseIndex yet
        sp.IterateAll(gc);
    } catch (const sage::sim::KernelAbort&) {
    }
    TPipe pipe4;
    SparseMm<CFG_NORM> norm;
    REGIST_MATMUL_OBJ(&pipe4, GetSysWorkSpacePtr(), norm, &ts);
    try {
        expect("api-misuse", __LINE__ + 1);  // the sparse matmul is the MDL template's only
        norm.SetSparseIndex(gi);
    } catch (const sage::sim::KernelAbort&) {
    }
}
""" + main_calling(
    'int4_matmul("i4_t", 30, 70, 40, false);',
    'int4_matmul("i4_full", 32, 128, 48, false);',
    'int4_matmul("i4_kn", 32, 128, 64, true);',
    'int4_matmul("i4_kn_tail", 17, 70, 40, true);',
    'int4_matmul("i4_kn_wide", 48, 192, 130, true);',
    'int4_matmul("i4_img2col", 40, 70, 50, true, true);',
    'sparse_matmul("sp_sample", 128, 64, 128, false, false);',
    'sparse_matmul("sp_tail", 30, 96, 40, false, false);',
    'sparse_matmul("sp_deep", 16, 256, 32, false, false);',
    'sparse_matmul("sp_acc", 32, 64, 48, true, false);',
    'sparse_matmul("sp_bad", 16, 64, 16, false, true);',
    "int4_sizes();",
    "lowbit_faults();",
    'mm_int4<false>("m4_kn", 40, 100, 200, true, false, -1, -1);',
    'mm_int4<true>("m4_nk", 33, 70, 130, false, true, -1, -1);',
    'mm_int4<false>("m4_chunks", 48, 192, 320, true, true, 40000, 64);',
    'mm_sparse("msp_sample", 128, 300, 64, false, false, -1, -1);',
    'mm_sparse("msp_chunks", 30, 40, 256, true, true, 12000, 64);',
    "int4_constant_tiling();",
    "matmul_lowbit_faults();",
)

INT4 = [("i4_t", 30, 70, 40, False), ("i4_full", 32, 128, 48, False), ("i4_kn", 32, 128, 64, True),
        ("i4_kn_tail", 17, 70, 40, True), ("i4_kn_wide", 48, 192, 130, True), ("i4_img2col", 40, 70, 50, True)]
SPARSE = [("sp_sample", 128, 64, 128, 1), ("sp_tail", 30, 96, 40, 1), ("sp_deep", 16, 256, 32, 1),
          ("sp_acc", 32, 64, 48, 2)]
# The MmadWithSparse page's table: (index 0, index 1) -> the two elements of a group of 4 of A they
# select ("X/X": one element taken twice, the second dense value being 0).
SELECT = {(2, 2): (2, 3), (1, 2): (1, 3), (0, 2): (0, 3), (1, 1): (1, 2), (0, 1): (0, 2), (0, 0): (0, 1),
          (2, 0): (2, 2), (1, 0): (1, 1)}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("cube_lowbit"), DRIVER)


def _unpack4(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """int4b_t pairs to int64: element 2i is byte i's low nibble, 2i + 1 its high one, signed."""
    lo = (raw.astype(np.int64) & 0xF)
    hi = (raw.astype(np.int64) >> 4) & 0xF
    both = np.stack([lo, hi], axis=-1).reshape(-1)
    return np.where(both >= 8, both - 16, both).reshape(rows, cols)


@pytest.mark.parametrize("name, m, k, n, b_kn", INT4)
def test_int4_matmul_is_exact(run, name, m, k, n, b_kn):
    a = _unpack4(run(f"{name}_a", np.uint8), m, k)
    b = _unpack4(run(f"{name}_b", np.uint8), k, n) if b_kn else _unpack4(run(f"{name}_b", np.uint8), n, k).T
    c = run(f"{name}_c", np.int32).reshape(m, n)
    assert np.array_equal(c, (a @ b).astype(np.int32))


def _sparse_ref(a: np.ndarray, bd: np.ndarray, code: np.ndarray) -> np.ndarray:
    """C from the page's definition: dense row 2g + h of B multiplies A's element SELECT[...][h] of group g."""
    kd, n = bd.shape
    b_full = np.zeros((2 * kd, n), np.int64)
    for g in range(kd // 2):
        for j in range(n):
            pick = SELECT[(int(code[2 * g, j]), int(code[2 * g + 1, j]))]
            for h in range(2):
                b_full[4 * g + pick[h], j] += int(bd[2 * g + h, j])
    return (a.astype(np.int64) @ b_full).astype(np.int32)


@pytest.mark.parametrize("name, m, k, n, times", SPARSE)
def test_sparse_matmul_matches_the_selection_table(run, name, m, k, n, times):
    a = run(f"{name}_a", np.int8).reshape(m, k)
    bd = run(f"{name}_bd", np.int8).reshape(k // 2, n)
    code = run(f"{name}_code", np.uint8).reshape(k // 2, n)
    c = run(f"{name}_c", np.int32).reshape(m, n)
    assert np.array_equal(c, times * _sparse_ref(a, bd, code))


def test_int4_tensors_count_elements_two_a_byte(run):
    # 1024 elements, 512 bytes; a view 256 elements in is 128 bytes in; 64 int8 are 128 int4b_t
    assert run("sizes", np.uint32).tolist() == [1024, 512, 768, 128, 128, 64]


def test_each_fault_at_its_line(run):
    expected = [(code, int(line)) for _, code, line in run.rows("EXPECT")]
    found = [(code, int(line)) for _, code, line, _ in run.rows("FAULT")]
    assert sorted(set(found)) == sorted(set(expected)), (found, expected)
    bad = [msg for _, code, _, msg in run.rows("FAULT") if "index 3" in msg]
    assert bad and "0, 1 or 2" in bad[0]


def test_sparse_apis_are_910b_only_by_their_pages():
    for api in ("MmadWithSparse", "LoadDataWithSparse"):
        assert api_support.unsupported(api, 910) is None
        assert api_support.unsupported(api, 310) is not None


CHIP = chip_profile("910B2")  # the chip the drivers are built for (tests/sim_driver.py)
# The Matmul API's forms: name, M, N, K, B transposed (int4b_t) or the sparse B, bias.
MM_INT4 = [("m4_kn", 40, 100, 200, False, True), ("m4_nk", 33, 70, 130, True, False),
           ("m4_chunks", 48, 192, 320, False, True)]
MM_SPARSE = [("msp_sample", 128, 300, 64, False), ("msp_chunks", 30, 40, 256, True)]
TILING = ("usedCoreNum M N Ka Kb singleCoreM singleCoreN singleCoreK baseM baseN baseK depthA1 depthB1 stepM stepN "
          "isBias transLength iterateOrder shareMode shareL1Size shareL0CSize shareUbSize batchM batchN singleBatchM "
          "singleBatchN stepKa stepKb").split()


def _tiling(run: Run, name: str) -> dict[str, int]:
    return dict(zip(TILING, run(f"{name}_tiling", np.int32)[: len(TILING)].tolist(), strict=True))


@pytest.mark.parametrize("name, m, n, k, tb, bias", MM_INT4)
def test_matmul_api_int4_is_exact(run, name, m, n, k, tb, bias):
    a = _unpack4(run(f"{name}_a", np.uint8), m, k)
    b = _unpack4(run(f"{name}_b", np.uint8), n, k).T if tb else _unpack4(run(f"{name}_b", np.uint8), k, n)
    want = a @ b + (run(f"{name}_bias", np.int32).astype(np.int64) if bias else 0)
    assert np.array_equal(run(f"{name}_c", np.int32).reshape(m, n), want.astype(np.int32))


@pytest.mark.parametrize("name, m, n, k, tb, bias", MM_INT4)
def test_int4_host_tiling_counts_half_bytes(run, name, m, n, k, tb, bias):
    """Two int4b_t a byte: the L1 use is depth * (baseM + baseN) * baseK / 2 (+ the bias), base K and N
    whole 64-element squares, L0A/L0B double-buffered at baseK / 2 bytes a row."""
    t = _tiling(run, name)
    assert (t["M"], t["N"], t["Ka"]) == (m, n, k)
    assert t["baseK"] % 64 == 0 and t["baseN"] % 64 == 0 and t["baseM"] % 16 == 0
    assert 2 * t["baseM"] * t["baseK"] // 2 <= CHIP.l0a_bytes and 2 * t["baseN"] * t["baseK"] // 2 <= CHIP.l0b_bytes
    l1 = t["depthA1"] * (t["baseM"] + t["baseN"]) * t["baseK"] // 2 + (t["baseN"] * 4 if bias else 0)
    assert t["shareL1Size"] == l1 <= CHIP.l1_bytes


def test_int4_tiling_with_a_small_l1_loads_k_in_chunks(run):
    t = _tiling(run, "m4_chunks")
    # 320 of K is five 64 slices: stepKa 2 would fit but leave a short last load, so 1 (a factor of 5)
    assert (t["baseK"], t["stepKa"], t["depthA1"]) == (64, 1, 2)


@pytest.mark.parametrize("name, m, n, k, bias", MM_SPARSE)
def test_matmul_api_sparse_b_matches_the_selection_table(run, name, m, n, k, bias):
    a = run(f"{name}_a", np.int8).reshape(m, k)
    bd = run(f"{name}_bd", np.int8).reshape(k // 2, n)
    code = run(f"{name}_code", np.uint8).reshape(k // 2, n)
    want = _sparse_ref(a, bd, code).astype(np.int64) + (run(f"{name}_bias", np.int32) if bias else 0)
    assert np.array_equal(run(f"{name}_c", np.int32).reshape(m, n), want.astype(np.int32))


def test_sparse_host_tiling_holds_the_dense_half_and_the_index(run):
    """SetSparse(true): B's L1 is its dense half (baseK / 2 bytes a column) plus the 2-bit index of each
    dense value (baseK / 8 bytes a column); K in whole 64s."""
    t = _tiling(run, "msp_chunks")
    assert t["baseK"] == 64 and t["stepKb"] == 1 and t["depthB1"] == 2  # 256 of K in four chunks
    slice_bytes = t["baseM"] * t["baseK"] + t["baseN"] * t["baseK"] // 2 + t["baseN"] * t["baseK"] // 8
    assert t["shareL1Size"] == t["depthA1"] * slice_bytes + t["baseN"] * 4


def test_sparse_index_refusals_name_the_page(run):
    msgs = [m for _, code, _, m in run.rows("FAULT") if "SetSparseIndex" in m or "SparseMatmulType" in m]
    assert any("MDL" in m for m in msgs) and any("not a SparseMatmulType" in m for m in msgs)
    assert any("before SetSparseIndex" in m for m in msgs)


MIXED_SPARSE_PROGRAM = r"""#include <cstdint>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

using I32 = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int32_t>;

// A mixed kernel: the Matmul is a client on the AIVs, where the sparse form is not served.
__global__ __mix__(1, 2) void mm(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* idx, __gm__ uint8_t* c,
                                 TCubeTiling t) {
    AscendC::TPipe pipe;
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int8_t>,
                    AscendC::SparseMatmulType<AscendC::TPosition::GM, AscendC::TPosition::GM, CubeFormat::ND, int8_t,
                                              true>, I32, I32, CFG_MDL> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<int8_t> ga, gb;
    AscendC::GlobalTensor<uint8_t> gi;
    AscendC::GlobalTensor<int32_t> gc;
    ga.SetGlobalBuffer((__gm__ int8_t*)a, 32 * 64), gb.SetGlobalBuffer((__gm__ int8_t*)b, 32 * 32);
    gi.SetGlobalBuffer((__gm__ uint8_t*)idx, 256), gc.SetGlobalBuffer((__gm__ int32_t*)c, 32 * 32);
    mm.SetTensorA(ga);
    mm.SetTensorB(gb, true);
    mm.SetSparseIndex(gi);
    mm.IterateAll(gc);
}

int main() {
    namespace mt = matmul_tiling;
    mt::MatmulApiTiling api;
    api.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_INT8);
    api.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_INT8, true);
    api.SetCType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_INT32);
    api.SetShape(32, 32, 64);
    api.SetSparse(true);
    optiling::TCubeTiling t;
    if (api.GetTiling(t) != 0) return 2;
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    uint8_t *da, *db, *di, *dc;
    aclrtMalloc((void**)&da, 32 * 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&db, 32 * 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&di, 256, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&dc, 32 * 32 * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    mm<<<1, nullptr, stream>>>(da, db, di, dc, t);
    aclrtSynchronizeStream(stream);
    aclFinalize();
    return 0;
}
"""


def test_set_sparse_index_in_a_mixed_kernel_is_refused_at_its_line(tmp_path):
    """The SetSparseIndex page: pure cube mode only (a mixed kernel's Matmul client refuses it)."""
    from sage_npu.npu_eval.program import run_program
    from sage_npu.npu_eval.settings import EvalSettings

    path = tmp_path / "mixed_sparse.asc"
    path.write_text(MIXED_SPARSE_PROGRAM)
    report = run_program(path, [], EvalSettings(cache_dir=tmp_path / "cache"), cwd=tmp_path)
    line = next(i for i, s in enumerate(MIXED_SPARSE_PROGRAM.splitlines(), 1) if "mm.SetSparseIndex(" in s)
    found = [d for launch in report.launches for d in launch.diagnostics if d.code == "api-misuse"]
    assert found and all(d.line == line for d in found), report
    assert "mixed kernel" in found[0].message and "pure cube mode" in found[0].message


def test_an_int4_constant_tiling_counts_half_bytes_and_runs(run):
    """GetMatmulApiTiling with int4b_t: a 128-of-K slice of A and B is (64 + 128) * 128 / 2 bytes; all
    four fit L1 (no double buffer); the Matmul runs on it with a null TCubeTiling."""
    step_ka, depth_a1, db_l0a, share_l1 = run("c4_static", np.int32).tolist()
    assert (step_ka, depth_a1, db_l0a) == (4, 4, 2)
    assert share_l1 == 4 * (64 + 128) * 128 // 2 + 128 * 4  # and the bias buffer (enableSetBias)
    a, b = _unpack4(run("c4_a", np.uint8), 50, 512), _unpack4(run("c4_b", np.uint8), 512, 100)
    assert np.array_equal(run("c4_c", np.int32).reshape(50, 100), (a @ b).astype(np.int32))
