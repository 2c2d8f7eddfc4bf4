"""The Matmul high-level API on the emulated cube (lib/matmul_intf.h) and its host tiling
(matmul_tiling::MatmulApiTiling / MultiCoreMatmulTiling).

One C++ driver fills tilings on the host side, runs whole matmuls through REGIST_MATMUL_OBJ,
SetTensorA/B (both transposes), SetBias, SetTail, IterateAll (to GM and to the UB) and
Iterate/GetTensorC for half, bfloat16_t, float and int8_t, the policies (NBuffer33, triangles), C
into a kernel CO1 tensor and two objects sharing one TPipe, and dumps inputs, outputs and the
tilings; numpy recomputes C the way the cube does (exact products summed over k in order in
float32, int32 for int8) and checks the tilings fit the 910B's L1/L0. Provoked faults are checked
for code and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings
from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

template <typename T>
constexpr matmul_tiling::DataType dt() {
    if constexpr (std::is_same_v<T, half>) return matmul_tiling::DataType::DT_FLOAT16;
    else if constexpr (std::is_same_v<T, bfloat16_t>) return matmul_tiling::DataType::DT_BF16;
    else if constexpr (std::is_same_v<T, int8_t>) return matmul_tiling::DataType::DT_INT8;
    else if constexpr (std::is_same_v<T, int32_t>) return matmul_tiling::DataType::DT_INT32;
    else return matmul_tiling::DataType::DT_FLOAT;
}

// A in GM as ND, or in TSCM as NZ; C where `c` says.
static TCubeTiling host_tiling(matmul_tiling::MatmulApiTilingBase& api, matmul_tiling::DataType in,
                               matmul_tiling::DataType out, matmul_tiling::DataType bias_t, int M, int N, int K,
                               bool ta, bool tb, bool bias,
                               matmul_tiling::TPosition a = matmul_tiling::TPosition::GM,
                               matmul_tiling::TPosition c = matmul_tiling::TPosition::GM) {
    namespace mt = matmul_tiling;
    api.SetAType(a, a == mt::TPosition::TSCM ? mt::CubeFormat::NZ : mt::CubeFormat::ND, in, ta);
    api.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, in, tb);
    api.SetCType(c, mt::CubeFormat::ND, out);
    api.SetBiasType(mt::TPosition::GM, mt::CubeFormat::ND, bias_t);
    api.SetOrgShape(M, N, K);
    api.SetShape(M, N, K);
    api.EnableBias(bias);
    api.SetBufferSpace(-1, -1, -1);
    optiling::TCubeTiling t;
    if (api.GetTiling(t) == -1) std::exit(3);
    return t;
}
static void dump_tiling(const std::string& name, const TCubeTiling& t) { write_raw(name + "_tiling", &t, sizeof(t)); }

// C (M x N) = A (M x K, or K x M stored when ta) x B (K x N, or N x K when tb) [+ bias], on one core.
// mode 0: IterateAll to GM; 1: Iterate + GetTensorC to GM; 2: IterateAll to a UB tensor; 3: Iterate +
// GetTensorC to the UB block by block; 4: the asynchronous mode as the GetTensorC page shows it (one
// Iterate<false>, then a GetTensorC<false> a block, to the UB); 5: while (Iterate<false>()) with
// GetTensorC<false> to GM. A MatmulType's ISTRANS is the transpose flag (the SetTensorA/B pages: true
// lets the call's flag decide, false needs the flag false).
template <typename U, typename C, typename L, CubeFormat CF = CubeFormat::ND, CubeFormat AF = CubeFormat::ND,
          bool TA = false, bool TB = false>
static void mm(const std::string& name, int M, int N, int K, bool ta, bool tb, bool bias, int mode) {
    constexpr int e = 32 / int(sizeof(C));  // elements of C per 32 bytes
    const int NC = CF == CubeFormat::ND_ALIGN ? (N + e - 1) / e * e : N;
    U* a = gm_alloc<U>("a", size_t(M) * K);
    U* b = gm_alloc<U>("b", size_t(K) * N);
    L* bs = gm_alloc<L>("bias", N);
    C* c = gm_alloc<C>("c", size_t(M) * NC);
    for (int i = 0; i < M * K; ++i) a[i] = U(float(int((i * 7 + 3) % 17) - 8) * (sizeof(U) == 1 ? 1.0f : 0.37f));
    for (int i = 0; i < K * N; ++i) b[i] = U(float(int((i * 5 + 1) % 13) - 6) * (sizeof(U) == 1 ? 1.0f : 0.21f));
    for (int j = 0; j < N; ++j) bs[j] = L(int(j % 9) - 4);
    write_raw(name + "_a", a, sizeof(U) * M * K);
    write_raw(name + "_b", b, sizeof(U) * K * N);
    write_raw(name + "_bias", bs, sizeof(L) * N);
    matmul_tiling::MatmulApiTiling api;
    TCubeTiling t = host_tiling(api, dt<U>(), dt<C>(), dt<L>(), M, N, K, ta, tb, bias);
    dump_tiling(name, t);
    GlobalTensor<U> ga, gb;
    GlobalTensor<L> gbias;
    GlobalTensor<C> gc;
    ga.SetGlobalBuffer(a, M * K);
    gb.SetGlobalBuffer(b, K * N);
    gbias.SetGlobalBuffer(bs, N);
    gc.SetGlobalBuffer(c, M * NC);
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, AF, U, TA>, MatmulType<TPosition::GM, CubeFormat::ND, U, TB>,
           MatmulType<TPosition::GM, CF, C>, MatmulType<TPosition::GM, CubeFormat::ND, L>>
        obj;
    if (mode == 1) {  // the other spelling: register without a tiling, then Init
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj);
        obj.Init(&t);
    } else {
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    }
    obj.SetTensorA(ga, ta);
    // a half B declared without ISTRANS but set transposed: transposed, with a warning at the call
    if (tb && !TB) expect("api-misuse", __LINE__ + 1);
    obj.SetTensorB(gb, tb);
    if (bias) obj.SetBias(gbias);
    if (mode == 0) {
        obj.IterateAll(gc);
    } else if (mode == 1) {
        while (obj.Iterate()) obj.GetTensorC(gc);
    } else if (mode == 5) {
        GlobalTensor<C> ws;
        ws.SetGlobalBuffer(gm_alloc<C>("ws", size_t(M) * N), size_t(M) * N);
        obj.SetWorkspace(ws);
        while (obj.template Iterate<false>()) obj.template GetTensorC<false>(gc);
    } else if (mode == 3 || mode == 4) {  // each block into a VECIN queue's buffer, placed by GetOffsetC
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, t.baseM * t.baseN * sizeof(C));
        GlobalTensor<C> ws;
        ws.SetGlobalBuffer(gm_alloc<C>("ws", size_t(M) * N), size_t(M) * N);
        obj.SetWorkspace(ws);
        const int blocks = (M + t.baseM - 1) / t.baseM * ((N + t.baseN - 1) / t.baseN);
        if (mode == 4) obj.template Iterate<false>();
        for (int n = 0; mode == 4 ? n < blocks : obj.Iterate(); ++n) {
            LocalTensor<C> blk = q.AllocTensor<C>();
            if (mode == 4) obj.template GetTensorC<false>(blk, 0, true);
            else obj.GetTensorC(blk, 0, true);
            q.EnQue(blk);
            blk = q.DeQue<C>();
            MatrixOffset at = obj.GetOffsetC();
            for (int i = 0; i < at.height; ++i)
                memcpy(c + size_t(at.row + i) * N + at.col, blk.data() + i * t.baseN, at.width * sizeof(C));
            q.FreeTensor(blk);
        }
    } else {
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, M * N * sizeof(C));
        LocalTensor<C> uc = ub.Get<C>();
        obj.IterateAll(uc);
        memcpy(c, uc.data(), size_t(M) * N * sizeof(C));
    }
    obj.End();
    write_raw(name + "_c", c, sizeof(C) * M * NC);
}

// B in NZ in GM (K x N in C0-column blocks of all K, the layout quant_group_matmul_high_performance's
// weights have): the ND B is written for the check, its NZ copy (K to 16 rows, N to C0 columns) is
// what the Matmul reads. N = 80 ends in a part column block.
template <typename U, typename C>
static void nz_b(const std::string& name, int M, int N, int K) {
    constexpr int c0 = 32 / int(sizeof(U));
    const int kAl = (K + 15) / 16 * 16, nAl = (N + c0 - 1) / c0 * c0;
    U* a = gm_alloc<U>((name + "_a").c_str(), size_t(M) * K);
    U* b = gm_alloc<U>((name + "_b").c_str(), size_t(K) * N);
    U* nz = gm_alloc<U>((name + "_nz").c_str(), size_t(kAl) * nAl);
    C* c = gm_alloc<C>((name + "_c").c_str(), size_t(M) * N);
    for (int i = 0; i < M * K; ++i) a[i] = U(float(int((i * 7 + 3) % 17) - 8) * (sizeof(U) == 1 ? 1.0f : 0.37f));
    for (int i = 0; i < K * N; ++i) b[i] = U(float(int((i * 5 + 1) % 13) - 6) * (sizeof(U) == 1 ? 1.0f : 0.21f));
    for (int i = 0; i < kAl * nAl; ++i) nz[i] = U(0.0f);
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n) nz[(size_t(n / c0) * kAl + k) * c0 + n % c0] = b[size_t(k) * N + n];
    write_raw(name + "_a", a, sizeof(U) * M * K);
    write_raw(name + "_b", b, sizeof(U) * K * N);
    matmul_tiling::MatmulApiTiling api;
    TCubeTiling t = host_tiling(api, dt<U>(), dt<C>(), dt<C>(), M, N, K, false, false, false);
    GlobalTensor<U> ga, gb;
    GlobalTensor<C> gc;
    ga.SetGlobalBuffer(a, M * K), gb.SetGlobalBuffer(nz, kAl * nAl), gc.SetGlobalBuffer(c, M * N);
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, U>, MatmulType<TPosition::GM, CubeFormat::NZ, U>,
           MatmulType<TPosition::GM, CubeFormat::ND, C>> obj;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    obj.SetTensorA(ga), obj.SetTensorB(gb);
    obj.IterateAll(gc);
    obj.End();
    write_raw(name + "_c", c, sizeof(C) * M * N);
}

// Two blocks share C by rows, each with its own core's singleCoreM rows and a SetTail on the last
// (MultiCoreMatmulTiling's split), as the official matmul sample does.
static void multicore(int M, int N, int K) {
    matmul_tiling::MultiCoreMatmulTiling api;
    api.SetDim(4);
    TCubeTiling t = host_tiling(api, matmul_tiling::DataType::DT_FLOAT16, matmul_tiling::DataType::DT_FLOAT,
                                matmul_tiling::DataType::DT_FLOAT, M, N, K, false, false, false);
    dump_tiling("mc", t);
}

// A constant tiling (GetMMConfig + GetMatmulApiTiling) for 64 x 96 x 80 with 32 x 48 x 32 blocks,
// registered with a null TCubeTiling, run on a 50 x 70 x 80 tail (SetOrgShape + SetTail).
static void constant_tiling() {
    using A = MatmulType<TPosition::GM, CubeFormat::ND, half>;
    using CT = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    constexpr static MatmulShapeParams shape{64, 96, 80, 32, 48, 32};
    constexpr static MatmulConfig cfg = GetMMConfig<MatmulConfigMode::CONFIG_MDL>(shape);
    constexpr static MatmulApiStaticTiling st = GetMatmulApiTiling<A, A, CT, CT>(cfg);
    const int M = 50, N = 70, K = 80;
    half* a = gm_alloc<half>("a", M * K);
    half* b = gm_alloc<half>("b", K * N);
    float* c = gm_alloc<float>("c", M * N);
    for (int i = 0; i < M * K; ++i) a[i] = half(float((i * 7 + 3) % 17 - 8) * 0.25f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float((i * 5 + 1) % 13 - 6) * 0.5f);
    write_raw("ct_a", a, sizeof(half) * M * K);
    write_raw("ct_b", b, sizeof(half) * K * N);
    int32_t fields[] = {st.singleCoreM, st.baseM, st.baseN, st.baseK, st.stepKa, st.depthA1, st.dbL0A, st.isBias};
    write_raw("ct_static", fields, sizeof(fields));
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> gc;
    ga.SetGlobalBuffer(a, M * K), gb.SetGlobalBuffer(b, K * N), gc.SetGlobalBuffer(c, M * N);
    TPipe pipe;
    Matmul<A, A, CT, CT, st> obj;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, (TCubeTiling*)nullptr);
    obj.SetOrgShape(M, N, K);
    obj.SetTail(M, N, K);
    obj.SetTensorA(ga), obj.SetTensorB(gb);
    obj.IterateAll(gc);
    obj.End();
    write_raw("ct_c", c, sizeof(float) * M * N);
}

// IterateBatch: A [B=2, S=20, N=1, G=3, D=40] and B^T [2, 24, 1, 3, 40] in BSNGD into C in BNGS1S2
// (six 20 x 24 matrices one after another); then NORMAL with A broadcast (batchA 1, batchB 3) and a
// bias per batch.
template <LayoutMode LA, LayoutMode LC>
using BatchMm = Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half, false, LA>,
                       MatmulType<TPosition::GM, CubeFormat::ND, half, true, LA>,  // the call's flag decides
                       MatmulType<TPosition::GM, CubeFormat::ND, float, false, LC>,
                       MatmulType<TPosition::GM, CubeFormat::ND, float>>;
static void batches() {
    namespace mt = matmul_tiling;
    const int S = 20, NN = 24, D = 40, BT = 2, G = 3, NB = BT * G;
    half* a = gm_alloc<half>("a", NB * S * D);
    half* b = gm_alloc<half>("b", NB * NN * D);
    float* c = gm_alloc<float>("c", NB * S * NN);
    float* bias = gm_alloc<float>("bias", 3 * NN);
    for (int i = 0; i < NB * S * D; ++i) a[i] = half(float((i * 7 + 3) % 17 - 8) * 0.25f);
    for (int i = 0; i < NB * NN * D; ++i) b[i] = half(float((i * 5 + 1) % 13 - 6) * 0.5f);
    for (int i = 0; i < 3 * NN; ++i) bias[i] = float(i % 11 - 5);
    write_raw("bt_a", a, sizeof(half) * NB * S * D);
    write_raw("bt_b", b, sizeof(half) * NB * NN * D);
    write_raw("bt_bias", bias, sizeof(float) * 3 * NN);
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> gc, gbias;
    ga.SetGlobalBuffer(a, NB * S * D), gb.SetGlobalBuffer(b, NB * NN * D), gc.SetGlobalBuffer(c, NB * S * NN);
    gbias.SetGlobalBuffer(bias, 3 * NN);
    {
        mt::MultiCoreMatmulTiling api;
        api.SetDim(1);
        api.SetALayout(BT, S, 1, G, D), api.SetBLayout(BT, NN, 1, G, D), api.SetCLayout(BT, S, 1, G, NN);
        api.SetBatchNum(NB);
        TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT,
                                    S, NN, D, false, true, false);
        dump_tiling("bt", t);
        TPipe pipe;
        BatchMm<LayoutMode::BSNGD, LayoutMode::BNGS1S2> obj;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
        obj.SetTensorA(ga, false), obj.SetTensorB(gb, true);
        obj.IterateBatch(gc, NB, NB, false);
        write_raw("bt_c", c, sizeof(float) * NB * S * NN);
        try {
            expect("api-misuse", __LINE__ + 1);
            obj.IterateBatch(gc, 2, 3, false);
        } catch (const sage::sim::KernelAbort&) {
        }
    }
    {  // NORMAL: A's first 20 x 40 matrix against three 40 x 24 B matrices (b read as K x N), bias per batch
        mt::BatchMatmulTiling api;
        api.SetBatchInfoForNormal(1, 3, S, NN, D);
        api.SetBatchNum(3);
        TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT,
                                    S, NN, D, false, false, true);
        TPipe pipe;
        BatchMm<LayoutMode::NORMAL, LayoutMode::NORMAL> obj;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
        obj.SetTensorA(ga), obj.SetTensorB(gb), obj.SetBias(gbias);
        obj.IterateBatch(gc, 1, 3, false);
        write_raw("bn_c", c, sizeof(float) * 3 * S * NN);
    }
}

// Two isA2B2Shared objects (one L0A/L0B for both) run one after the other, the first Init-ed twice
// (REGIST_MATMUL_OBJ, then again: it keeps its buffers); both C must be the cube's.
constexpr MatmulConfig kA2B2 = [] { MatmulConfig c = CFG_NORM; c.isA2B2Shared = true; return c; }();
using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using FloatGm = MatmulType<TPosition::GM, CubeFormat::ND, float>;
static void shared() {
    const int M = 48, N = 64, K = 96;
    half* a = gm_alloc<half>("sh_a", size_t(M) * K);
    half* b = gm_alloc<half>("sh_b", size_t(K) * N);
    float* c1 = gm_alloc<float>("sh_c1", size_t(M) * N);
    float* c2 = gm_alloc<float>("sh_c2", size_t(M) * N);
    for (int i = 0; i < M * K; ++i) a[i] = half(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    write_raw("sh_a", a, sizeof(half) * M * K);
    write_raw("sh_b", b, sizeof(half) * K * N);
    matmul_tiling::MatmulApiTiling api;
    TCubeTiling t = host_tiling(api, matmul_tiling::DataType::DT_FLOAT16, matmul_tiling::DataType::DT_FLOAT,
                                matmul_tiling::DataType::DT_FLOAT, M, N, K, false, false, false);
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> g1, g2;
    ga.SetGlobalBuffer(a, M * K);
    gb.SetGlobalBuffer(b, K * N);
    g1.SetGlobalBuffer(c1, M * N);
    g2.SetGlobalBuffer(c2, M * N);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, kA2B2> m1, m2;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), m1, &t, m2, &t);
    m1.Init(&t);
    m1.SetTensorA(ga);
    m1.SetTensorB(gb);
    m1.IterateAll(g1);
    m1.End();
    m2.SetTensorA(ga);
    m2.SetTensorB(gb);
    m2.IterateAll(g2);
    m2.End();
    write_raw("sh_c1", c1, sizeof(float) * M * N);
    write_raw("sh_c2", c2, sizeof(float) * M * N);
}

// Split K (EnableMultiCoreSplitK) as the launch's cores would run it, one after another here: each
// core's offsets from the tiling as asc-devkit's matmul_splitk kernel computes them, its part of K
// accumulated into the cleared C with enAtomic 1 (and into a second C with 2, max); then the whole
// matmul twice into a third C under the kernel's own SetAtomicAdd around Iterate/GetTensorC.
static void split_k(int M, int N, int K, int dim) {
    namespace mt = matmul_tiling;
    half* a = gm_alloc<half>("sk_a", size_t(M) * K);
    half* b = gm_alloc<half>("sk_b", size_t(K) * N);
    float* c[3] = {gm_alloc<float>("sk_c_add", size_t(M) * N), gm_alloc<float>("sk_c_max", size_t(M) * N),
                   gm_alloc<float>("sk_c_twice", size_t(M) * N)};
    for (int i = 0; i < M * K; ++i) a[i] = half(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    write_raw("sk_a", a, sizeof(half) * M * K);
    write_raw("sk_b", b, sizeof(half) * K * N);
    mt::MultiCoreMatmulTiling api;
    api.SetDim(dim);
    api.EnableMultiCoreSplitK(true);
    TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M, N,
                                K, false, false, false);
    dump_tiling("sk", t);
    mt::MultiCoreMatmulTiling biased;
    biased.EnableMultiCoreSplitK(true);
    biased.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT16);
    biased.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT16);
    biased.SetShape(M, N, K), biased.EnableBias(true);
    optiling::TCubeTiling unused;
    int64_t refused = biased.GetTiling(unused);
    write_raw("sk_bias_refused", &refused, sizeof(refused));
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> gc[3];
    ga.SetGlobalBuffer(a, M * K), gb.SetGlobalBuffer(b, K * N);
    for (int i = 0; i < 3; ++i) gc[i].SetGlobalBuffer(c[i], M * N);
    InitGlobalMemory(gc[0], uint64_t(M) * N, 0.0f);
    InitGlobalMemory(gc[1], uint64_t(M) * N, -1e30f);
    InitGlobalMemory(gc[2], uint64_t(M) * N, 0.0f);
    const int mDim = (t.M + t.singleCoreM - 1) / t.singleCoreM, kDim = (t.Ka + t.singleCoreK - 1) / t.singleCoreK;
    const int perK = t.usedCoreNum / kDim;
    for (int core = 0; core < t.usedCoreNum; ++core) {
        const int mi = (core % perK) % mDim, ni = (core % perK) / mDim, ki = core / perK;
        for (int op = 1; op <= 2; ++op) {
            TPipe pipe;
            Matmul<HalfGm, HalfGm, FloatGm, FloatGm> obj;
            REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
            obj.SetTensorA(ga[mi * t.Ka * t.singleCoreM + ki * t.singleCoreK]);
            obj.SetTensorB(gb[ki * t.singleCoreK * t.N + ni * t.singleCoreN]);
            obj.IterateAll(gc[op - 1][mi * t.N * t.singleCoreM + ni * t.singleCoreN], uint8_t(op));
            obj.End();
        }
    }
    matmul_tiling::MatmulApiTiling one;
    TCubeTiling whole = host_tiling(one, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M,
                                    N, K, false, false, false);
    for (int round = 0; round < 2; ++round) {
        TPipe pipe;
        Matmul<HalfGm, HalfGm, FloatGm, FloatGm> obj;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &whole);
        obj.SetTensorA(ga), obj.SetTensorB(gb);
        SetAtomicAdd<float>();
        while (obj.Iterate()) obj.GetTensorC(gc[2]);
        SetAtomicNone();
        if (round == 1) {
            try {
                expect("api-misuse", __LINE__ + 1);
                obj.IterateAll(gc[2], 4);
            } catch (const sage::sim::KernelAbort&) {
            }
        }
        obj.End();
    }
    write_raw("sk_c_add", c[0], sizeof(float) * M * N);
    write_raw("sk_c_max", c[1], sizeof(float) * M * N);
    write_raw("sk_c_twice", c[2], sizeof(float) * M * N);
}

// Quantised C (SetQuantScalar / SetQuantVector): int8 x int8 with an int32 bias into half (DEQF16) or
// int8 (REQ8), half x half into int8 (QF322B8_PRE). Words: a scale per column (or one), and for int8
// out a 9-bit offset and the sign bit. N = 300 is two base blocks (baseN 256), so the words of the
// second block start at column 256. ub: Iterate + GetTensorC into the UB block by block.
template <typename U, typename C>
static void quant(const std::string& name, bool vec, bool ub) {
    namespace mt = matmul_tiling;
    const int M = 24, N = 300, K = 64;
    constexpr bool b8 = sizeof(C) == 1;
    U* a = gm_alloc<U>("a", size_t(M) * K);
    U* b = gm_alloc<U>("b", size_t(K) * N);
    int32_t* bs = gm_alloc<int32_t>("bias", N);
    uint64_t* w = gm_alloc<uint64_t>("words", N);
    C* c = gm_alloc<C>("c", size_t(M) * N);
    for (int i = 0; i < M * K; ++i) a[i] = U(float(int((i * 7 + 3) % 17) - 8) * (sizeof(U) == 1 ? 1.0f : 0.37f));
    for (int i = 0; i < K * N; ++i) b[i] = U(float(int((i * 5 + 1) % 13) - 6) * (sizeof(U) == 1 ? 1.0f : 0.21f));
    for (int j = 0; j < N; ++j) bs[j] = j % 9 - 4;
    for (int j = 0; j < N; ++j) {
        // half inputs give small sums (0.37 x 0.21 steps): scale them up to reach int8's range
        const float scale = (vec ? 0.03f + 0.011f * float(j % 13) : 0.1f) * (sizeof(U) == 2 ? 20.0f : 1.0f);
        uint32_t bits;
        memcpy(&bits, &scale, 4);
        const uint64_t offset = b8 ? uint64_t(int64_t(vec ? j % 7 - 3 : 5) & 0x1FF) << 37 : 0;
        w[j] = (bits & 0xFFFFE000u) | offset | (b8 ? uint64_t(1) << 46 : 0);
    }
    const bool bias = sizeof(U) == 1;
    write_raw(name + "_a", a, sizeof(U) * M * K);
    write_raw(name + "_b", b, sizeof(U) * K * N);
    write_raw(name + "_bias", bs, sizeof(int32_t) * N);
    write_raw(name + "_words", w, sizeof(uint64_t) * (vec ? N : 1));
    mt::MatmulApiTiling api;
    api.SetDequantType(vec ? mt::DequantType::TENSOR : mt::DequantType::SCALAR);
    TCubeTiling t = host_tiling(api, dt<U>(), sizeof(C) == 1 ? mt::DataType::DT_INT8 : mt::DataType::DT_FLOAT16,
                                mt::DataType::DT_INT32, M, N, K, false, false, bias);
    GlobalTensor<U> ga, gb;
    GlobalTensor<int32_t> gbias;
    GlobalTensor<uint64_t> gw;
    GlobalTensor<C> gc;
    ga.SetGlobalBuffer(a, M * K), gb.SetGlobalBuffer(b, K * N), gbias.SetGlobalBuffer(bs, N);
    gw.SetGlobalBuffer(w, N), gc.SetGlobalBuffer(c, M * N);
    TPipe pipe;
    using L = std::conditional_t<sizeof(U) == 1, int32_t, float>;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, U>, MatmulType<TPosition::GM, CubeFormat::ND, U>,
           MatmulType<TPosition::GM, CubeFormat::ND, C>, MatmulType<TPosition::GM, CubeFormat::ND, L>>
        obj;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    obj.SetTensorA(ga), obj.SetTensorB(gb);
    if constexpr (sizeof(U) == 1) obj.SetBias(gbias);
    if (vec) obj.SetQuantVector(gw);
    else obj.SetQuantScalar(w[0]);
    if (!ub) {
        obj.IterateAll(gc);
    } else {
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, t.baseM * t.baseN * sizeof(C));
        while (obj.Iterate()) {
            LocalTensor<C> blk = q.AllocTensor<C>();
            obj.GetTensorC(blk, 0, true);
            q.EnQue(blk);
            blk = q.DeQue<C>();
            MatrixOffset at = obj.GetOffsetC();
            for (int i = 0; i < at.height; ++i)
                memcpy(c + size_t(at.row + i) * N + at.col, blk.data() + i * t.baseN, at.width * sizeof(C));
            q.FreeTensor(blk);
        }
    }
    obj.End();
    write_raw(name + "_c", c, sizeof(C) * M * N);
}

// A quantisation on types it does not apply to, and a quantising Matmul run without its scale.
static void quant_faults() {
    half* a = gm_alloc<half>("qf_a", 32 * 32);
    int8_t* a8 = gm_alloc<int8_t>("qf_a8", 32 * 32);
    half* c = gm_alloc<half>("qf_c", 32 * 32);
    for (int i = 0; i < 32 * 32; ++i) a[i] = half(1.0f), a8[i] = 1;
    GlobalTensor<half> ga, gc;
    GlobalTensor<int8_t> ga8;
    ga.SetGlobalBuffer(a, 32 * 32), gc.SetGlobalBuffer(c, 32 * 32), ga8.SetGlobalBuffer(a8, 32 * 32);
    matmul_tiling::MatmulApiTiling api;
    TCubeTiling t = host_tiling(api, matmul_tiling::DataType::DT_INT8, matmul_tiling::DataType::DT_FLOAT16,
                                matmul_tiling::DataType::DT_INT32, 32, 32, 32, false, false, false);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, MatmulType<TPosition::GM, CubeFormat::ND, half>, FloatGm> plain;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, int8_t>, MatmulType<TPosition::GM, CubeFormat::ND, int8_t>,
           MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, int32_t>>
        deq;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), deq, &t);
    try {
        expect("api-misuse", __LINE__ + 1);
        plain.SetQuantScalar(0);
    } catch (const sage::sim::KernelAbort&) {
    }
    deq.SetTensorA(ga8), deq.SetTensorB(ga8);
    try {
        expect("api-misuse", __LINE__ + 1);
        deq.IterateAll(gc);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// CopyA1/CopyB1 callbacks (MatmulCallBackFunc): A lies in two GM pieces, K columns 0..63 and 64..127,
// and the A callback finds each base block's piece from its (row, col) block index, as asc-devkit's
// matmul_callback sample does; the B callback copies block (row, col) of K x N itself. tilingPtr
// (SetUserDefInfo) carries the layout, dataPtr (SetSelfDefineData) a marker the callbacks check.
struct CbLayout {
    int baseM, baseN, baseK, halfK, n;
    half *lo, *hi, *b;
};
static int g_cb_calls[2] = {0, 0};
static void cb_copy_a(const LocalTensor<int8_t>& l1, const __gm__ void*, int row, int col, int useM, int useK,
                      const uint64_t tilingPtr, const uint64_t dataPtr) {
    const CbLayout& l = *reinterpret_cast<const CbLayout*>(tilingPtr);
    if (dataPtr != 0x5A6E) std::exit(4);
    const int k0 = col * l.baseK;
    GlobalTensor<half> src;
    src.SetGlobalBuffer(k0 < l.halfK ? l.lo : l.hi);
    Nd2NzParams p(1, uint16_t(useM), uint16_t(useK), 0, uint16_t(l.halfK), uint16_t((useM + 15) / 16 * 16), 1, 0);
    DataCopy(l1.ReinterpretCast<half>(), src[row * l.baseM * l.halfK + k0 % l.halfK], p);
    ++g_cb_calls[0];
}
static void cb_copy_b(const LocalTensor<int8_t>& l1, const __gm__ void*, int row, int col, int useK, int useN,
                      const uint64_t tilingPtr, const uint64_t) {
    const CbLayout& l = *reinterpret_cast<const CbLayout*>(tilingPtr);
    GlobalTensor<half> src;
    src.SetGlobalBuffer(l.b);
    Nd2NzParams p(1, uint16_t(useK), uint16_t(useN), 0, uint16_t(l.n), uint16_t((useK + 15) / 16 * 16), 1, 0);
    DataCopy(l1.ReinterpretCast<half>(), src[row * l.baseK * l.n + col * l.baseN], p);
    ++g_cb_calls[1];
}
static void callbacks() {
    namespace mt = matmul_tiling;
    const int M = 40, N = 48, K = 128, H = K / 2;
    half* lo = gm_alloc<half>("cb_lo", size_t(M) * H);
    half* hi = gm_alloc<half>("cb_hi", size_t(M) * H);
    half* b = gm_alloc<half>("cb_b", size_t(K) * N);
    float* c = gm_alloc<float>("cb_c", size_t(M) * N);
    for (int i = 0; i < M * H; ++i) lo[i] = half(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (int i = 0; i < M * H; ++i) hi[i] = half(float(int((i * 3 + 5) % 11) - 5) * 0.29f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    write_raw("cb_lo", lo, sizeof(half) * M * H);
    write_raw("cb_hi", hi, sizeof(half) * M * H);
    write_raw("cb_b", b, sizeof(half) * K * N);
    mt::MatmulApiTiling api;
    api.SetFixSplit(32, 32, 32);  // two M blocks (one a tail), two N blocks, four K blocks
    TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M, N,
                                K, false, false, false);
    CbLayout layout{t.baseM, t.baseN, t.baseK, H, N, lo, hi, b};
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> gc;
    ga.SetGlobalBuffer(lo, M * H), gb.SetGlobalBuffer(b, K * N), gc.SetGlobalBuffer(c, M * N);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG_NORM, MatmulCallBackFunc<nullptr, cb_copy_a, cb_copy_b>> obj;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    obj.SetUserDefInfo(reinterpret_cast<uint64_t>(&layout));
    obj.SetSelfDefineData(uint64_t(0x5A6E));
    obj.SetTensorA(ga), obj.SetTensorB(gb);
    obj.IterateAll(gc);
    obj.End();
    write_raw("cb_c", c, sizeof(float) * M * N);
    write_raw("cb_calls", g_cb_calls, sizeof(g_cb_calls));
}

// A staged in L1 (TSCM) as NZ by the kernel: a TSCM queue's buffer filled from GM holding A's NZ
// fractals (C0 columns of 16 halves, 48 rows each: M = 40 padded), two M blocks (32 + a tail of 8)
// and two K blocks read in place.
static void tscm() {
    namespace mt = matmul_tiling;
    const int M = 40, N = 48, K = 64, M16 = 48;
    half* a = gm_alloc<half>("ts_a", size_t(M) * K);
    half* nz = gm_alloc<half>("ts_nz", size_t(M16) * K);
    half* b = gm_alloc<half>("ts_b", size_t(K) * N);
    float* c = gm_alloc<float>("ts_c", size_t(M) * N);
    for (int i = 0; i < M * K; ++i) a[i] = half(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    for (int kc = 0; kc < K / 16; ++kc)
        for (int r = 0; r < M16; ++r)
            for (int e = 0; e < 16; ++e) nz[(kc * M16 + r) * 16 + e] = r < M ? a[r * K + kc * 16 + e] : half(0.0f);
    write_raw("ts_a", a, sizeof(half) * M * K);
    write_raw("ts_b", b, sizeof(half) * K * N);
    mt::MatmulApiTiling api;
    api.SetFixSplit(32, 48, 32);
    TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M, N,
                                K, false, false, false);
    GlobalTensor<half> gnz, gb;
    GlobalTensor<float> gc;
    gnz.SetGlobalBuffer(nz, M16 * K), gb.SetGlobalBuffer(b, K * N), gc.SetGlobalBuffer(c, M * N);
    TPipe pipe;
    Matmul<MatmulType<TPosition::TSCM, CubeFormat::NZ, half>, HalfGm, FloatGm, FloatGm> obj;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    TSCM<TPosition::GM, 1> scm;
    pipe.InitBuffer(scm, 1, M16 * K * sizeof(half));
    LocalTensor<half> l1 = scm.AllocTensor<half>();
    DataCopy(l1, gnz, M16 * K);
    scm.EnQue(l1);
    l1 = scm.DeQue<half>();
    obj.SetTensorA(l1), obj.SetTensorB(gb);
    obj.IterateAll(gc);
    obj.End();
    scm.FreeTensor(l1);
    write_raw("ts_c", c, sizeof(float) * M * N);
}

// C in NZ (CubeFormat::NZ in GM): column blocks of 16 floats, or of 8 with isEnableChannelSplit, each
// all 48 rows (M = 40 rounded up); 2 x 2 base blocks place their fractals by block. The padding
// rows are left as they were (filled with -7 here).
constexpr MatmulConfig kChannelSplit = [] { MatmulConfig c = CFG_NORM; c.isEnableChannelSplit = true; return c; }();
template <const auto& CFG>
static void nz_c(const std::string& name, int w) {
    namespace mt = matmul_tiling;
    const int M = 40, N = 48, K = 64, M16 = 48;
    half* a = gm_alloc<half>((name + "_a").c_str(), size_t(M) * K);
    half* b = gm_alloc<half>((name + "_b").c_str(), size_t(K) * N);
    float* c = gm_alloc<float>((name + "_c").c_str(), size_t(M16) * N);
    for (int i = 0; i < M * K; ++i) a[i] = half(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    for (int i = 0; i < M16 * N; ++i) c[i] = -7.0f;
    write_raw(name + "_a", a, sizeof(half) * M * K);
    write_raw(name + "_b", b, sizeof(half) * K * N);
    mt::MatmulApiTiling api;
    api.SetFixSplit(32, 32, 32);
    TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M, N,
                                K, false, false, false);
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> gc;
    ga.SetGlobalBuffer(a, M * K), gb.SetGlobalBuffer(b, K * N), gc.SetGlobalBuffer(c, M16 * N);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, MatmulType<TPosition::GM, CubeFormat::NZ, float>, FloatGm, CFG> obj;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    obj.SetTensorA(ga), obj.SetTensorB(gb);
    obj.IterateAll(gc);
    obj.End();
    write_raw(name + "_c", c, sizeof(float) * M16 * N);
    (void)w;
}

// The Matmul policies (the MatmulPolicy page) and C into the kernel's own L0C (the Iterate page).
// Inputs: A (M x K) and B (K x N) halves as above, dumped as `name`_a/_b; C prefilled with -7.
struct PolicyData {
    GlobalTensor<half> a, b;
    GlobalTensor<float> c, bias;
    float* host_c;
};
static PolicyData policy_data(const std::string& name, int M, int N, int K, bool bias) {
    half* a = gm_alloc<half>((name + "_a").c_str(), size_t(M) * K);
    half* b = gm_alloc<half>((name + "_b").c_str(), size_t(K) * N);
    float* c = gm_alloc<float>((name + "_c").c_str(), size_t(M) * N);
    float* bs = gm_alloc<float>((name + "_bias").c_str(), N);
    for (int i = 0; i < M * K; ++i) a[i] = half(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    for (int i = 0; i < M * N; ++i) c[i] = -7.0f;
    for (int j = 0; j < N; ++j) bs[j] = float(int(j % 9) - 4);
    write_raw(name + "_a", a, sizeof(half) * M * K);
    write_raw(name + "_b", b, sizeof(half) * K * N);
    write_raw(name + "_bias", bs, sizeof(float) * N * (bias ? 1 : 0));
    PolicyData d;
    d.a.SetGlobalBuffer(a, M * K), d.b.SetGlobalBuffer(b, K * N), d.c.SetGlobalBuffer(c, M * N);
    d.bias.SetGlobalBuffer(bs, N), d.host_c = c;
    return d;
}
static TCubeTiling policy_tiling(int M, int N, int K, int base, bool bias, bool nbuffer33) {
    namespace mt = matmul_tiling;
    mt::MatmulApiTiling api;
    api.SetFixSplit(base, base, 32);
    if (nbuffer33) api.SetMatmulConfigParams(1, false, mt::ScheduleType::N_BUFFER_33);
    return host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M, N, K, false,
                       false, bias);
}
// NBuffer33: 4 x 3 base blocks of 32 (a group of 3 block rows, then a tail row; a tail column),
// K in 3 slices, with a bias; the MTE2 copies of A and B counted from the trace.
static void nbuffer33() {
    const int M = 112, N = 80, K = 96;
    PolicyData d = policy_data("n33", M, N, K, true);
    TCubeTiling t = policy_tiling(M, N, K, 32, true, true);
    dump_tiling("n33", t);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG_MDL, MatmulCallBackFunc<nullptr, nullptr, nullptr>,
           AscendC::Impl::Detail::NBuffer33MatmulPolicy> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(d.a), mm.SetTensorB(d.b), mm.SetBias(d.bias);
    const size_t from = sage::sim::blk().trace.size();
    mm.IterateAll(d.c);
    mm.End();
    int32_t copies = 0;  // GM -> L1 copies of A or B (the bias is a one-row copy into C1)
    for (size_t i = from; i < sage::sim::blk().trace.size(); ++i) {
        const auto& e = sage::sim::blk().trace[i];
        copies += e.pipe == sage::sim::Pipe::MTE2 && e.elems > uint32_t(N);
    }
    write_raw("n33_copies", &copies, sizeof(copies));
    write_raw("n33_c", d.host_c, sizeof(float) * M * N);
}
// MDL full loads: A's 2 block rows of 32 by all of K (stepM 2, stepKa 2: A "fully loaded") stay in L1
// across its 3 block columns of B (stepN 1: B streamed), in both iterate orders; a second IterateAll
// copies A again. The MTE2 copies of A or B counted from the trace.
static void full_loads(const std::string& name, int order) {
    const int M = 64, N = 96, K = 64;
    PolicyData d = policy_data(name, M, N, K, false);
    TCubeTiling t{};
    t.usedCoreNum = 1, t.M = M, t.N = N, t.Ka = t.Kb = K, t.singleCoreM = M, t.singleCoreN = N, t.singleCoreK = K;
    t.baseM = t.baseN = t.baseK = 32, t.stepM = 2, t.stepN = 1, t.stepKa = t.stepKb = 2;
    t.depthA1 = 4, t.depthB1 = 4, t.dbL0A = t.dbL0B = 2, t.dbL0C = 1, t.iterateOrder = order;
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG_MDL> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(d.a), mm.SetTensorB(d.b);
    int32_t copies[2] = {0, 0};
    for (int round = 0; round < 2; ++round) {
        const size_t from = sage::sim::blk().trace.size();
        mm.IterateAll(d.c);
        for (size_t i = from; i < sage::sim::blk().trace.size(); ++i) {
            const auto& e = sage::sim::blk().trace[i];
            copies[round] += e.pipe == sage::sim::Pipe::MTE2 && e.elems >= 32u * 32u;
        }
    }
    mm.End();
    write_raw(name + "_copies", copies, sizeof(copies));
    write_raw(name + "_c", d.host_c, sizeof(float) * M * N);
}
// MDL with enableKdimReorderLoad: 32 x 32 x 256 in K chunks of 64 (stepKa = stepKb 2 of baseK 32, depth 4:
// K not fully loaded) computed as cores 0..4 would (block_idx set for each): core i starts at chunk i mod 4
// and wraps, so its L0C sums K in that order.
constexpr MatmulConfig kKReorder = [] { MatmulConfig c = CFG_MDL; c.enableKdimReorderLoad = true; return c; }();
static void k_reorder() {
    const int M = 32, N = 32, K = 256;
    PolicyData d = policy_data("kro", M, N, K, false);
    TCubeTiling t{};
    t.usedCoreNum = 5, t.M = M, t.N = N, t.Ka = t.Kb = K, t.singleCoreM = M, t.singleCoreN = N, t.singleCoreK = K;
    t.baseM = t.baseN = t.baseK = 32, t.stepM = t.stepN = 1, t.stepKa = t.stepKb = 2;
    t.depthA1 = t.depthB1 = 4, t.dbL0A = t.dbL0B = 2, t.dbL0C = 1;
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, kKReorder> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(d.a), mm.SetTensorB(d.b);
    const int64_t own = sage::sim::blk().idx;
    for (int core = 0; core < 5; ++core) {
        sage::sim::blk().idx = core;
        mm.IterateAll(d.c);
        write_raw("kro_c" + std::to_string(core), d.host_c, sizeof(float) * M * N);
    }
    sage::sim::blk().idx = own;
    mm.End();
}
// A split-MN tiling (SetOrgShape alone: 128 x 1024 x 64 on two cores, each 128 x 512, base 128 x 256 x
// 64, stepKa 8 and stepKb 4 though K is one slice, depth 16 and 8) run by each core's part in turn, as the
// official samples offset B and C by the core's singleCoreN.
template <const auto& CFG>
static void org_run(const std::string& name) {
    const int M = 128, N = 1024, K = 64;
    PolicyData d = policy_data(name, M, N, K, false);
    namespace mt = matmul_tiling;
    mt::MultiCoreMatmulTiling api;
    api.SetDim(2);
    api.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT16);
    api.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT16);
    api.SetCType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
    api.SetOrgShape(M, N, K);
    TCubeTiling t;
    if (api.GetTiling(t) == -1) std::exit(3);
    dump_tiling(name, t);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    for (int core = 0; core < t.usedCoreNum; ++core) {
        mm.SetTensorA(d.a), mm.SetTensorB(d.b[core * t.singleCoreN]);
        mm.IterateAll(d.c[core * t.singleCoreN]);
    }
    mm.End();
    write_raw(name + "_c", d.host_c, sizeof(float) * M * N);
}
// Triangles: 3 x 3 blocks of 32; the upper through IterateAll, the lower through Iterate/GetTensorC.
template <template <const auto&, typename, typename, typename, typename, typename> class P>
static void triangle(const std::string& name, bool iterate) {
    const int M = 96, N = 96, K = 64;
    PolicyData d = policy_data(name, M, N, K, false);
    TCubeTiling t = policy_tiling(M, N, K, 32, false, false);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG_NORM, MatmulCallBackFunc<nullptr, nullptr, nullptr>, P> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(d.a), mm.SetTensorB(d.b);
    int32_t blocks = 0;
    if (iterate) {
        while (mm.Iterate()) mm.GetTensorC(d.c), ++blocks;
    } else {
        mm.IterateAll(d.c);
    }
    mm.End();
    write_raw(name + "_blocks", &blocks, sizeof(blocks));
    write_raw(name + "_c", d.host_c, sizeof(float) * M * N);
}
// C into the kernel's CO1 tensor (matmul_co1_output's pattern): 2 x 2 blocks of 32 one after another
// into one L0C tensor, written out by the kernel's Fixpipe as a 32 x 64 row of blocks per block row;
// then enPartialSum on a one-block matmul: A B + A2 B accumulated in L0C.
static void co1_output() {
    const int M = 64, N = 64, K = 64, base = 32;
    PolicyData d = policy_data("co1", M, N, K, false);
    TCubeTiling t = policy_tiling(M, N, K, base, false, false);
    t.iterateOrder = 1;  // N first: a block row's blocks one after another
    using CO1Nz = MatmulType<TPosition::CO1, CubeFormat::NZ, float>;
    TPipe pipe;
    Matmul<HalfGm, HalfGm, CO1Nz, FloatGm> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(d.a), mm.SetTensorB(d.b);
    TQue<TPosition::CO1, AscendC::Impl::QUEUE_DEPTH> q;
    pipe.InitBuffer(q, 1, base * N * sizeof(float));
    for (int row = 0; row < M / base; ++row) {
        LocalTensor<float> l0c = q.AllocTensor<float>();
        for (int col = 0; col < N / base; ++col) mm.Iterate(false, l0c[col * base * base]);
        FixpipeParamsV220 p;
        p.mSize = base, p.nSize = N, p.srcStride = base, p.dstStride = N;
        q.EnQue(l0c);
        q.DeQue<float>();
        Fixpipe<float, float, CFG_ROW_MAJOR>(d.c[row * base * N], l0c, p);
        q.FreeTensor(l0c);
    }
    mm.End();
    write_raw("co1_c", d.host_c, sizeof(float) * M * N);
    // enPartialSum: singleCoreM x singleCoreN = baseM x baseN (the Iterate page's condition)
    PolicyData e = policy_data("co1p", base, base, K, false);
    PolicyData e2 = policy_data("co1p2", base, base, K, false);
    TCubeTiling t1 = policy_tiling(base, base, K, base, false, false);
    TPipe pipe2;
    Matmul<HalfGm, HalfGm, CO1Nz, FloatGm> one;
    REGIST_MATMUL_OBJ(&pipe2, GetSysWorkSpacePtr(), one, &t1);
    TQue<TPosition::CO1, 1> q2;
    pipe2.InitBuffer(q2, 1, base * base * sizeof(float));
    LocalTensor<float> acc = q2.AllocTensor<float>();
    one.SetTensorA(e.a), one.SetTensorB(e.b);
    one.Iterate(false, acc);
    one.End();
    one.SetTensorA(e2.a), one.SetTensorB(e.b);
    one.Iterate(true, acc);
    one.End();
    FixpipeParamsV220 p;
    p.mSize = base, p.nSize = base, p.srcStride = base, p.dstStride = base;
    q2.EnQue(acc);
    q2.DeQue<float>();
    Fixpipe<float, float, CFG_ROW_MAJOR>(e.c, acc, p);
    q2.FreeTensor(acc);
    write_raw("co1p_c", e.host_c, sizeof(float) * base * base);
}
// Two objects of one TPipe share L0A/L0B/L0C (each alone would take 32 KB of the 64 KB L0A; the
// two together fit only shared): both compute the cube result; a GetTensorC after the other
// object's Iterate is a fault at its line.
static void two_objects() {
    const int M = 64, N = 64, K = 256;
    PolicyData d = policy_data("two", M, N, K, false);
    namespace mt = matmul_tiling;
    mt::MatmulApiTiling api;
    api.SetFixSplit(64, 64, 256);
    TCubeTiling t = host_tiling(api, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT, mt::DataType::DT_FLOAT, M, N,
                                K, false, false, false);
    float* c2 = gm_alloc<float>("two_c2", size_t(M) * N);
    GlobalTensor<float> g2;
    g2.SetGlobalBuffer(c2, M * N);
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm> m1, m2;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), m1, &t, m2, &t);
    m1.SetTensorA(d.a), m1.SetTensorB(d.b), m2.SetTensorA(d.a), m2.SetTensorB(d.b);
    m1.IterateAll(d.c);
    m2.IterateAll(g2);
    write_raw("two_c", d.host_c, sizeof(float) * M * N);
    write_raw("two_c2", c2, sizeof(float) * M * N);
    m1.Iterate();
    m2.Iterate();
    try {
        expect("api-misuse", __LINE__ + 1);
        m1.GetTensorC(d.c);
    } catch (const sage::sim::KernelAbort&) {
    }
}
// NBuffer33's limits: K in more than 3 baseK slices (a default tiling) at the REGIST line; Iterate.
static void nbuffer33_faults() {
    using N33 = Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG_MDL, MatmulCallBackFunc<nullptr, nullptr, nullptr>,
                       AscendC::Impl::Detail::NBuffer33MatmulPolicy>;
    PolicyData d = policy_data("n33f", 32, 32, 256, false);
    TCubeTiling deep = policy_tiling(32, 32, 256, 32, false, false);  // stepKa 8
    TPipe pipe;
    N33 mm;
    try {
        expect("api-misuse", __LINE__ + 1);
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &deep);
    } catch (const sage::sim::KernelAbort&) {
    }
    TCubeTiling ok = policy_tiling(32, 32, 96, 32, false, true);
    TPipe pipe2;
    N33 mm2;
    REGIST_MATMUL_OBJ(&pipe2, GetSysWorkSpacePtr(), mm2, &ok);
    mm2.SetTensorA(d.a), mm2.SetTensorB(d.b);
    try {
        expect("api-misuse", __LINE__ + 1);
        mm2.Iterate();
    } catch (const sage::sim::KernelAbort&) {
    }
}

// MultiCoreMatmulTiling's split (core_split.h) on the shapes asc-devkit's documents and samples pin:
// see docs/cube.md "Host tiling". `fix` is SetFixSplit's base block (0: none).
struct SplitSet {
    matmul_tiling::TPosition a = matmul_tiling::TPosition::GM, c = matmul_tiling::TPosition::GM;
    matmul_tiling::CubeFormat bFormat = matmul_tiling::CubeFormat::ND;
    int fix[3] = {0, 0, 0};
    bool nb33 = false;
    bool shape = true;  // false: SetOrgShape alone (CANN's split-MN path for a large M x N)
};
static TCubeTiling split_tiling(int dim, int M, int N, int K, const SplitSet& o = {}) {
    namespace mt = matmul_tiling;
    mt::MultiCoreMatmulTiling api;
    api.SetDim(dim);
    api.SetAType(o.a, o.a == mt::TPosition::TSCM ? mt::CubeFormat::NZ : mt::CubeFormat::ND, mt::DataType::DT_FLOAT16);
    api.SetBType(mt::TPosition::GM, o.bFormat, mt::DataType::DT_FLOAT16);
    api.SetCType(o.c, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
    api.SetBiasType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
    api.SetOrgShape(M, N, K);
    if (o.shape) api.SetShape(M, N, K);
    api.EnableBias(true);
    if (o.fix[0] > 0) api.SetFixSplit(o.fix[0], o.fix[1], o.fix[2]);
    if (o.nb33) api.SetMatmulConfigParams(1, false, mt::ScheduleType::N_BUFFER_33);
    optiling::TCubeTiling t;
    if (api.GetTiling(t) == -1) std::exit(3);
    return t;
}
static void splits() {
    using P = matmul_tiling::TPosition;
    SplitSet tscm, leaky, nz, nb33, ub;
    tscm.a = P::TSCM;
    leaky.c = P::VECIN, leaky.fix[0] = 128, leaky.fix[1] = 64, leaky.fix[2] = 128;
    nz.bFormat = matmul_tiling::CubeFormat::NZ;
    nb33.nb33 = true;
    ub.c = P::VECIN;
    dump_tiling("split_tscm", split_tiling(24, 64, 64, 64, tscm));
    dump_tiling("split_gm_one_block", split_tiling(2, 64, 256, 384));
    dump_tiling("split_two", split_tiling(2, 512, 512, 128));
    dump_tiling("split_leaky", split_tiling(2, 512, 128, 128, leaky));
    dump_tiling("split_nd2nz", split_tiling(24, 1024, 4095, 1024, nz));
    dump_tiling("split_m_first", split_tiling(24, 1024, 4095, 1024));
    dump_tiling("split_nb33", split_tiling(24, 256, 512, 192, nb33));
    dump_tiling("split_n_whole", split_tiling(24, 7680, 480, 320));
    dump_tiling("split_wide24", split_tiling(24, 128, 30720, 1024));
    dump_tiling("split_wide20", split_tiling(20, 128, 30720, 1024));
    dump_tiling("split_wide48", split_tiling(48, 128, 30720, 1024));
    dump_tiling("split_wide24_k64", split_tiling(24, 128, 30720, 64));
    dump_tiling("split_wide20_k64", split_tiling(20, 128, 30720, 64));
    dump_tiling("split_wide48_k64", split_tiling(48, 128, 30720, 64));
    dump_tiling("split_preload", split_tiling(24, 128, 24576, 512));
    dump_tiling("split_c_in_ub", split_tiling(48, 640, 1024, 512, ub));
    SplitSet org;
    org.shape = false;
    dump_tiling("org_wide24", split_tiling(24, 128, 30720, 1024, org));
    dump_tiling("org_wide24_k64", split_tiling(24, 128, 30720, 64, org));
    dump_tiling("org_wide20_k64", split_tiling(20, 128, 30720, 64, org));
    dump_tiling("org_wide48_k64", split_tiling(48, 128, 30720, 64, org));
    dump_tiling("org_preload", split_tiling(24, 128, 24576, 512, org));
    dump_tiling("org_nd2nz", split_tiling(24, 1024, 4095, 1024, org));
    // matmul_high_performance's case 6: each of 24 cores 1024 x 1536 of 8192 x 8192 (the kernel runs
    // each core over two halves of M), base block 128 x 256 x 64
    namespace mt = matmul_tiling;
    mt::MultiCoreMatmulTiling hp;
    hp.SetDim(24);
    hp.SetSingleShape(1024, 1536, 8192);
    hp.SetFixSplit(128, 256, 64);
    TCubeTiling t3 = host_tiling(hp, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT16, mt::DataType::DT_FLOAT16,
                                 8192, 8192, 8192, false, true, false);
    dump_tiling("split_hp", t3);
}

// A tiling whose A1 and B1 fill L1 (16 + 16 base blocks of 128 x 64 halves: 512 KB) with isBias: the
// device takes the bias buffer after them, past L1, and runs while no bias is set
// (quant_group_matmul_high_performance); SetBias then is the overflow, at the Iterate line.
static void full_l1_bias() {
    PolicyData d = policy_data("fullb", 128, 128, 64, false);
    TCubeTiling t{};
    t.M = t.N = t.singleCoreM = t.singleCoreN = 128, t.Ka = t.Kb = t.singleCoreK = 64;
    t.baseM = t.baseN = 128, t.baseK = 64, t.stepKa = t.stepKb = 1, t.depthA1 = t.depthB1 = 16;
    t.stepM = t.stepN = 1, t.dbL0A = t.dbL0B = 2, t.dbL0C = 1, t.usedCoreNum = 1, t.isBias = 1;
    TPipe pipe;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, CFG_MDL> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    mm.SetTensorA(d.a), mm.SetTensorB(d.b);
    mm.IterateAll(d.c);
    write_raw("fullb_c", d.host_c, sizeof(float) * 128 * 128);
    mm.SetBias(d.bias);
    try {
        expect("cube-buffer-overflow", __LINE__ + 1);
        mm.IterateAll(d.c);
    } catch (const sage::sim::KernelAbort&) {
    }
}

static void faults() {
    TCubeTiling t{};
    t.M = t.N = t.Ka = t.Kb = t.singleCoreM = t.singleCoreN = t.singleCoreK = 256;
    t.baseM = 256, t.baseN = 256, t.baseK = 64, t.stepKa = t.stepKb = 1, t.depthA1 = t.depthB1 = 2;
    t.dbL0A = t.dbL0B = 2, t.dbL0C = 1, t.usedCoreNum = 1;
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, half>,
           MatmulType<TPosition::GM, CubeFormat::ND, float>> obj;
    try {
        expect("cube-buffer-overflow", __LINE__ + 1);
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), obj, &t);
    } catch (const sage::sim::KernelAbort&) {
    }
    // the asynchronous mode: Iterate<false> before SetWorkspace; a GetTensorC<false> past the last block
    {
        TCubeTiling s{};
        s.M = s.N = s.Ka = s.Kb = s.singleCoreM = s.singleCoreN = s.singleCoreK = 32;
        s.baseM = s.baseN = s.baseK = 32, s.stepKa = s.stepKb = s.depthA1 = s.depthB1 = 1;
        s.dbL0A = s.dbL0B = s.dbL0C = 1, s.usedCoreNum = 1;
        GlobalTensor<half> g;
        g.SetGlobalBuffer(gm_alloc<half>("async_ab", 32 * 32), 32 * 32);
        GlobalTensor<float> gc, ws;
        gc.SetGlobalBuffer(gm_alloc<float>("async_c", 32 * 32), 32 * 32);
        TPipe p3;
        Matmul<HalfGm, HalfGm, FloatGm> am;
        REGIST_MATMUL_OBJ(&p3, GetSysWorkSpacePtr(), am, &s);
        am.SetTensorA(g), am.SetTensorB(g);
        try {
            expect("api-misuse", __LINE__ + 1);
            am.template Iterate<false>();
        } catch (const sage::sim::KernelAbort&) {
        }
        ws.SetGlobalBuffer(gm_alloc<float>("async_ws", 32 * 32), 32 * 32);
        am.SetWorkspace(ws);
        am.template Iterate<false>();
        am.template GetTensorC<false>(gc);
        try {
            expect("api-misuse", __LINE__ + 1);
            am.template GetTensorC<false>(gc);
        } catch (const sage::sim::KernelAbort&) {
        }
        am.End();
        // enUnitFlag (Norm's default): accumulating onto a block no GetTensorC read is excluded
        TPipe p4;
        Matmul<HalfGm, HalfGm, FloatGm> um;
        REGIST_MATMUL_OBJ(&p4, GetSysWorkSpacePtr(), um, &s);
        um.SetTensorA(g), um.SetTensorB(g);
        um.Iterate();
        um.Iterate();  // false: the round's one block is done; the next round accumulates onto it
        try {
            expect("api-misuse", __LINE__ + 1);
            um.Iterate(true);
        } catch (const sage::sim::KernelAbort&) {
        }
    }
    // isA2B2Shared: an A base block of 128 x 256 halves (64 KB) is past the shared half of L0A
    t.baseM = 128, t.baseN = 16, t.baseK = 256, t.depthA1 = t.depthB1 = 1, t.dbL0A = t.dbL0B = 1;
    TPipe pipe2;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, kA2B2> big;
    try {
        expect("api-misuse", __LINE__ + 1);
        REGIST_MATMUL_OBJ(&pipe2, GetSysWorkSpacePtr(), big, &t);
    } catch (const sage::sim::KernelAbort&) {
    }
}
""" + main_calling(
    'mm<half, float, float>("h_aligned", 64, 128, 96, false, false, true, 0);',
    'mm<half, float, float>("h_tail", 37, 50, 70, false, false, false, 0);',
    'mm<half, half, float, CubeFormat::ND, CubeFormat::ND, true, true>("h_ta_tb", 40, 48, 72, true, true, false, 0);',
    'mm<half, float, float, CubeFormat::ND, CubeFormat::ND, true, true>("h_big", 300, 270, 600, false, true, true, 1);',
    'mm<bfloat16_t, bfloat16_t, float, CubeFormat::ND, CubeFormat::ND, false, true>("bf_tb", 33, 40, 64, false, true, '
    'false, 0);',
    'mm<float, float, float>("f_b", 20, 40, 50, false, false, true, 0);',
    'mm<float, float, float, CubeFormat::ND, CubeFormat::ND, false, true>("f_tb", 20, 24, 30, false, true, false, 0);',
    'mm<int8_t, int32_t, int32_t>("i8_b", 24, 40, 70, false, false, true, 0);',
    'mm<int8_t, int32_t, int32_t, CubeFormat::ND, CubeFormat::ND, false, true>("i8_tb", 24, 40, 70, false, true, '
    'false, 0);',
    'mm<half, float, float>("h_ub", 32, 64, 32, false, false, false, 2);',
    'mm<half, float, float, CubeFormat::ND_ALIGN>("h_nd_align", 20, 13, 40, false, false, true, 0);',
    'mm<half, float, float, CubeFormat::ND, CubeFormat::VECTOR>("h_gemv", 1, 32, 256, false, false, false, 0);',
    'mm<half, float, float>("h_ub_blocks", 512, 64, 128, false, false, true, 3);',
    'mm<half, float, float>("h_async_ub", 512, 64, 128, false, false, true, 4);',
    'mm<half, float, float>("h_tb_flag_only", 40, 48, 72, false, true, false, 0);',
    'mm<half, float, float>("h_async_gm", 300, 270, 200, false, false, true, 5);',
    "multicore(512, 512, 128);",
    "shared();",
    "faults();",
    "split_k(32, 32, 1024, 8);",
    'quant<int8_t, half>("q_deq_scalar", false, false);',
    'quant<int8_t, half>("q_deq_vector", true, false);',
    'quant<int8_t, half>("q_deq_vector_ub", true, true);',
    'quant<int8_t, int8_t>("q_req_scalar", false, false);',
    'quant<int8_t, int8_t>("q_req_vector", true, true);',
    'quant<half, int8_t>("q_b8_vector", true, false);',
    "quant_faults();",
    "callbacks();",
    "tscm();",
    "splits();",
    'nz_c<CFG_NORM>("nz16", 16);',
    'nz_c<kChannelSplit>("nz8", 8);',
    "constant_tiling();",
    "batches();",
    "nbuffer33();",
    'full_loads("full_m", 0);',
    'full_loads("full_n", 1);',
    'org_run<CFG_MDL>("org_mdl");',
    'org_run<CFG_NORM>("org_norm");',
    "k_reorder();",
    "triangle<AscendC::Impl::Detail::TrianUpperMatmulPolicy>(\"up\", false);",
    "triangle<AscendC::Impl::Detail::TrianLowerMatmulPolicy>(\"low\", true);",
    "co1_output();",
    "two_objects();",
    "nbuffer33_faults();",
    "full_l1_bias();",
    'nz_b<int8_t, int32_t>("nzb_i8", 40, 80, 96);',
    'nz_b<half, float>("nzb_h", 40, 80, 70);',
)

CHIP = chip_profile("910B2")  # the chip the drivers are built for (tests/sim_driver.py)

FIELDS = ("usedCoreNum M N Ka Kb singleCoreM singleCoreN singleCoreK baseM baseN baseK depthA1 depthB1 stepM stepN "
          "isBias transLength iterateOrder shareMode shareL1Size shareL0CSize shareUbSize batchM batchN singleBatchM "
          "singleBatchN stepKa stepKb").split()

# name: (input dtype, output dtype, bias dtype, M, N, K, transpose A, transpose B, bias)
CASES = {
    "h_aligned": (np.float16, np.float32, np.float32, 64, 128, 96, False, False, True),
    "h_tail": (np.float16, np.float32, np.float32, 37, 50, 70, False, False, False),
    "h_ta_tb": (np.float16, np.float16, np.float32, 40, 48, 72, True, True, False),
    "h_big": (np.float16, np.float32, np.float32, 300, 270, 600, False, True, True),
    "bf_tb": ("bf16", "bf16", np.float32, 33, 40, 64, False, True, False),
    "f_b": (np.float32, np.float32, np.float32, 20, 40, 50, False, False, True),
    "f_tb": (np.float32, np.float32, np.float32, 20, 24, 30, False, True, False),
    "i8_b": (np.int8, np.int32, np.int32, 24, 40, 70, False, False, True),
    "i8_tb": (np.int8, np.int32, np.int32, 24, 40, 70, False, True, False),
    "h_ub": (np.float16, np.float32, np.float32, 32, 64, 32, False, False, False),
    "h_ub_blocks": (np.float16, np.float32, np.float32, 512, 64, 128, False, False, True),
    "h_tb_flag_only": (np.float16, np.float32, np.float32, 40, 48, 72, False, True, False),  # ISTRANS false
    "h_async_ub": (np.float16, np.float32, np.float32, 512, 64, 128, False, False, True),  # Iterate<false>
    "h_async_gm": (np.float16, np.float32, np.float32, 300, 270, 200, False, False, True),
    "h_nd_align": (np.float16, np.float32, np.float32, 20, 13, 40, False, False, True),
    "h_gemv": (np.float16, np.float32, np.float32, 1, 32, 256, False, False, False),  # A in CubeFormat::VECTOR
}
# C in CubeFormat::ND_ALIGN: rows padded to 32 bytes, the padding written as zeros.
ROW_C = {"h_nd_align": 16}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("matmul_api"), DRIVER)


def _load(run: Run, name: str, dt) -> np.ndarray:
    if dt == "bf16":
        return (run(name, np.uint16).astype(np.uint32) << 16).view(np.float32)
    return run(name, dt)


def _to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 (round to nearest even), kept as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _cube(a: np.ndarray, b: np.ndarray, init: np.ndarray | None, integer: bool) -> np.ndarray:
    """The cube's sum: exact products accumulated over k in order (float32, int32 for int8)."""
    acc = np.int64 if integer else np.float32
    c = np.zeros((a.shape[0], b.shape[1]), acc)
    if init is not None:
        c = c + init.astype(acc)
    for kk in range(a.shape[1]):
        c = (c + np.outer(a[:, kk], b[kk]).astype(acc)).astype(acc)
    return c.astype(np.int32) if integer else c


def _tiling(run: Run, name: str) -> dict[str, int]:
    return dict(zip(FIELDS, run(f"{name}_tiling", np.int32)[: len(FIELDS)].tolist(), strict=True))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matmul_matches_the_cube_numerics(run, name):
    dt, out, bias_t, m, n, k, ta, tb, bias = CASES[name]
    integer = dt is np.int8
    a = _load(run, f"{name}_a", dt).astype(np.float64 if integer else np.float32)
    b = _load(run, f"{name}_b", dt).astype(np.float64 if integer else np.float32)
    a = a.reshape(k, m).T if ta else a.reshape(m, k)
    b = b.reshape(n, k).T if tb else b.reshape(k, n)
    init = run(f"{name}_bias", bias_t) if bias else None
    want = _cube(a.astype(np.int64) if integer else a, b.astype(np.int64) if integer else b, init, integer)
    got = _load(run, f"{name}_c", out).reshape(m, ROW_C.get(name, n))
    np.testing.assert_array_equal(got[:, n:], 0)
    got = got[:, :n]
    if out == "bf16":
        want = _to_bf16(want)
    elif out is np.float16:
        want = want.astype(np.float16)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_host_tiling_fits_the_910b_buffers(run, name):
    dt, _, _, m, n, k, _, _, bias = CASES[name]
    es = 2 if dt == "bf16" else np.dtype(dt).itemsize
    t = _tiling(run, name)
    assert (t["M"], t["N"], t["Ka"], t["Kb"]) == (m, n, k, k)
    assert (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"], t["usedCoreNum"]) == (m, n, k, 1)
    assert t["baseM"] % 16 == 0 and t["baseN"] % 16 == 0 and t["baseK"] * es % 32 == 0
    assert 2 * t["baseM"] * t["baseK"] * es <= CHIP.l0a_bytes and 2 * t["baseN"] * t["baseK"] * es <= CHIP.l0b_bytes
    assert t["baseM"] * t["baseN"] * 4 <= CHIP.l0c_bytes
    l1 = (t["depthA1"] * t["baseM"] + t["depthB1"] * t["baseN"]) * t["baseK"] * es + (t["baseN"] * 4 if bias else 0)
    assert l1 == t["shareL1Size"] <= CHIP.l1_bytes
    assert t["isBias"] == int(bias)


def test_large_half_tiling_uses_the_l0_base_block_and_double_buffers_l1(run):
    t = _tiling(run, "h_big")
    assert (t["baseM"], t["baseN"], t["baseK"]) == (128, 256, 64)
    assert t["stepKa"] == t["stepKb"] and t["depthA1"] == 2 * t["stepKa"] < 2 * 600 // 64 + 2


def test_multicore_tiling_splits_m_over_the_cores_it_is_given(run):
    t = _tiling(run, "mc")
    assert t["usedCoreNum"] <= 4
    assert t["singleCoreM"] * t["singleCoreN"] * t["usedCoreNum"] >= 512 * 512
    # 32 x 32 units of 16 on four cores: every split reads A and B from L1 whole, so the first of the
    # least GM load (2 x 2: each unit of A read twice, of B twice) wins over M alone (4 x 1: B four times)
    assert (t["singleCoreM"], t["singleCoreN"], t["usedCoreNum"]) == (256, 256, 4)


def test_a_single_shape_with_more_parts_than_cores_is_kept_and_l1_steps_divide_k(run):
    """matmul_high_performance case 6: SetSingleShape(1024, 1536) of 8192 x 8192 is 48 parts for 24
    cores; GetTiling keeps it (the kernel loops), and L1 takes a factor of K's 128 slices: stepK 4,
    depth 8 (5 would fit L1 but leave a short last load), the values the sample's case 5 builds on."""
    t = _tiling(run, "split_hp")
    assert (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"], t["usedCoreNum"]) == (1024, 1536, 8192, 24)
    assert (t["baseM"], t["baseN"], t["baseK"]) == (128, 256, 64)
    assert (t["stepKa"], t["stepKb"], t["depthA1"], t["depthB1"]) == (4, 4, 8, 8)
    assert t["shareL1Size"] == 8 * (128 + 256) * 64 * 2
    # the sample's case 5 then sets depthA1 16, stepKa 8 by hand: exactly the 910B's L1
    assert 16 * 128 * 64 * 2 + t["depthB1"] * 256 * 64 * 2 == CHIP.l1_bytes


def _split(run, name):
    t = _tiling(run, name)
    return t["singleCoreM"], t["singleCoreN"], t["usedCoreNum"], (t["baseM"], t["baseN"], t["baseK"])


# The cores' split (core_split.h) against every tiling asc-devkit prints for a shape and SetDim: the
# sample READMEs and the best-practice pages (docs/zh/guide/算子实践参考/优秀实践/Matmul性能调优案例/).
SPLITS = {
    # matmul_advanced_api README: 512 x 512 x 128 on two cores, singleCoreM 256, singleCoreN 512
    "split_two": (256, 512, 2),
    # matmul_leakyrelu_advanced_api README: 512 x 128 x 128, SetFixSplit(128, 64, 128), C in VECIN, two
    # AIVs: N only, singleCoreN 64 (each core 4 Iterates of 128 x 64)
    "split_leaky": (512, 64, 2),
    # AIV核上的ND2NZ格式转换.md: 1024 x 4095 x 1024, B in NZ, 24 cores: 128 x 1408 (1366 rounded to 256 B)
    "split_nd2nz": (128, 1408, 24),
    # the same shape with B in ND: no rounding
    "split_m_first": (128, 1366, 24),
    # Matmul高阶API使能IBShare模板共享B矩阵数据.md: 64 x 256 x 384 on two cores, singleCoreM 32
    "split_gm_one_block": (32, 256, 2),
    # A's whole shape fits one core's L0 (matmul_tscm's 64 x 64 x 64 on 24): one core
    "split_tscm": (64, 64, 1),
    # Matmul高阶API使能NBuffer33模板.md: 256 x 512 x 192, N_BUFFER_33 on 24 cores: 256 x 256, 2 cores
    "split_nb33": (256, 256, 2),
    # matmul_a2b2_share (no SetTail): 7680 x 480 x 320 on 24 cores, 24 exact M parts
    "split_n_whole": (320, 480, 24),
    # 128 x 30720 on 24, 20 and 48 cores: singleCoreN 1280, 1536, 640 (the MDL page, K 1024; the UnitFlag,
    # constant-tiling and pure-Cube pages, K 64); the MTE2-Preload page's 128 x 24576 x 512 on 24: 1024
    "split_wide24": (128, 1280, 24),
    "split_wide20": (128, 1536, 20),
    "split_wide48": (128, 640, 48),
    "split_wide24_k64": (128, 1280, 24),
    "split_wide20_k64": (128, 1536, 20),
    "split_wide48_k64": (128, 640, 48),
    "split_preload": (128, 1024, 24),
}


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_multicore_tiling_splits_as_the_printed_tilings(run, name):
    assert _split(run, name)[:3] == SPLITS[name]


# Shapes given by SetOrgShape alone (no SetShape), M >= 128 and M x N past 26214 elements a core: CANN's
# 910B split-MN path (docs/cube.md "Host tiling"): all cores by cube work per GM byte, base 128 x 256 x 64
# and L1 steps by L1's size, not K's. The best-practice pages print these values (singleCore, base,
# stepKa/stepKb, depthA1/depthB1):
ORG_TILINGS = {
    # Matmul高阶API使能MDL模板.md: 128 x 30720 x 1024 on 24
    "org_wide24": ((128, 1280, 1024, 24), (128, 256, 64), (4, 4, 8, 8)),
    # Matmul高阶API使能纯Cube模式.md (pure Cube 24 AICs, MIX 48 AIVs), Matmul高阶API使能Tiling全量常量化.md:
    # K 64, yet stepKa 4 and depth 8 (L1's size decides them)
    "org_wide24_k64": ((128, 1280, 64, 24), (128, 256, 64), (4, 4, 8, 8)),
    "org_wide48_k64": ((128, 640, 64, 48), (128, 256, 64), (4, 4, 8, 8)),
    # Matmul高阶API使能UnitFlag.md: 20 cores
    "org_wide20_k64": ((128, 1536, 64, 20), (128, 256, 64), (4, 4, 8, 8)),
    # AIV核上的ND2NZ格式转换.md's 1024 x 4095 x 1024 (B in ND here): 24 parts of 128 x 1408 (1366
    # rounded to 256 bytes), base 128 x 256 x 64, stepKa = stepKb = 4
    "org_nd2nz": ((128, 1408, 1024, 24), (128, 256, 64), (4, 4, 8, 8)),
}


@pytest.mark.parametrize("name", sorted(ORG_TILINGS))
def test_org_shape_tilings_follow_cann_split_mn_as_printed(run, name):
    t = _tiling(run, name)
    single, base, steps = ORG_TILINGS[name]
    assert (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"], t["usedCoreNum"]) == single
    assert (t["baseM"], t["baseN"], t["baseK"]) == base
    assert (t["stepKa"], t["stepKb"], t["depthA1"], t["depthB1"]) == steps
    assert t["shareL1Size"] == 8 * 128 * 64 * 2 + 8 * 256 * 64 * 2 + 256 * 4 <= CHIP.l1_bytes


@pytest.mark.parametrize("name", ["org_mdl", "org_norm"])
def test_a_split_mn_tiling_with_l1_steps_past_k_gives_the_cube_result(run, name):
    t = _tiling(run, name)
    # no bias: A's 16 and B's 8 blocks fill L1 exactly, so A keeps its 16 (stepKa 8 > the one slice of K)
    assert (t["singleCoreN"], t["usedCoreNum"], t["baseN"]) == (512, 2, 256)
    assert (t["stepKa"], t["stepKb"], t["depthA1"], t["depthB1"]) == (8, 4, 16, 8)
    assert t["shareL1Size"] == 16 * 128 * 64 * 2 + 8 * 256 * 64 * 2 == CHIP.l1_bytes
    a, b = _policy_inputs(run, name, 128, 1024, 64)
    np.testing.assert_array_equal(run(f"{name}_c", np.float32).reshape(128, 1024), _cube(a, b, None, False))


def test_the_preload_page_tiling_is_the_sample_s_own_not_get_tiling_s(run):
    """Matmul高阶API使能MTE2-Preload.md prints base 128 x 128 x 64, stepKa 8, depthA1 8, depthB1 16: the
    values matmul_preload.asc writes over GetTiling's (set_baseN(128) ... set_depthB1(16)). GetTiling
    itself (SetOrgShape alone, 24 cores) gives the split-MN tiling; the sample's values fill L1 to 384 KB."""
    t = _tiling(run, "org_preload")
    assert (t["singleCoreN"], t["baseN"], t["stepKa"], t["depthB1"]) == (1024, 256, 4, 8)
    assert 8 * 128 * 64 * 2 + 16 * 128 * 64 * 2 <= CHIP.l1_bytes


def test_multicore_tiling_base_blocks_of_the_printed_tilings(run):
    # the IBShare page: base 32 x 256 x 64, stepKa 6; the NBuffer33 page: base 128 x 256 x 64
    assert _split(run, "split_gm_one_block")[3] == (32, 256, 64)
    assert _tiling(run, "split_gm_one_block")["stepKa"] == 6
    assert _split(run, "split_nb33")[3] == (128, 256, 64)
    assert _split(run, "split_leaky")[3] == (128, 64, 128)
    # the MDL page (128 x 30720 x 1024 on 24): base 128 x 256 x 64, stepKa = stepKb = 4, depth 8
    t = _tiling(run, "split_wide24")
    assert (t["baseM"], t["baseN"], t["baseK"]) == (128, 256, 64)
    assert (t["stepKa"], t["stepKb"], t["depthA1"], t["depthB1"]) == (4, 4, 8, 8)


def test_multicore_tiling_keeps_a_c_block_in_the_ub_to_half_of_it(run):
    # matmul_async_iterate (640 x 1024 x 512 on 48 AIVs) holds two UB blocks of baseM x baseN floats:
    # the split gives each of 40 cores 64 x 256, and one 64 x 256 block twice fits half the UB
    m, n, used, base = _split(run, "split_c_in_ub")
    assert (m, n, used) == (64, 256, 40)
    assert base[:2] == (64, 256) and 2 * 64 * 256 * 4 <= CHIP.ub_bytes


def test_a_tiling_past_l0_is_a_fault_at_the_regist_line(run):
    want = {(code, int(line)) for _, code, line in run.rows("EXPECT")}
    got = {(code, int(line)) for _, code, line, _ in run.rows("FAULT")}
    assert want == got, (want, got)  # and nothing else: no missing-sync, no unwritten read
    msg = [m for _, code, _, m in run.rows("FAULT") if code == "cube-buffer-overflow"][0]
    assert "Matmul Init" in msg and "L0C" in msg


def test_a_full_l1_runs_without_a_bias_and_overflows_with_one(run):
    """A1 + B1 fill L1 and the tiling has isBias: no fault at REGIST_MATMUL_OBJ, C as the cube makes it;
    SetBias then faults at the next IterateAll (test_a_tiling_past_l0_... checks the line)."""
    a, b = _policy_inputs(run, "fullb", 128, 128, 64)
    np.testing.assert_array_equal(run("fullb_c", np.float32).reshape(128, 128), _cube(a, b, None, False))
    msg = [m for _, code, _, m in run.rows("FAULT") if "bias buffer" in m]
    assert len(msg) == 1 and "no room in L1" in msg[0]


@pytest.mark.parametrize(("name", "dtype", "k"), [("nzb_i8", np.int8, 96), ("nzb_h", np.float16, 70)])
def test_a_b_in_nz_in_gm_gives_the_cube_result(run, name, dtype, k):
    a = run(f"{name}_a", dtype).astype(np.float32).reshape(40, k)
    b = run(f"{name}_b", dtype).astype(np.float32).reshape(k, 80)
    integer = dtype == np.int8
    got = run(f"{name}_c", np.int32 if integer else np.float32).reshape(40, 80)
    np.testing.assert_array_equal(got, _cube(a, b, None, integer))


def test_a2b2_shared_objects_share_l0_and_each_compute_the_cube_result(run):
    a = run("sh_a", np.float16).astype(np.float32).reshape(48, 96)
    b = run("sh_b", np.float16).astype(np.float32).reshape(96, 64)
    want = _cube(a, b, None, False)
    for name in ("sh_c1", "sh_c2"):
        np.testing.assert_array_equal(run(name, np.float32).reshape(48, 64), want)


def test_asynchronous_iterate_needs_a_workspace_and_gives_one_block_a_get_tensor_c(run):
    # h_async_ub and h_async_gm (in CASES) check the numbers; here the two misuses, at their lines
    msgs = [m for _, code, _, m in run.rows("FAULT") if code == "api-misuse" and "<false>" in m]
    assert len(msgs) == 2
    assert "before SetWorkspace" in msgs[0] and "after all 1 blocks" in msgs[1]


def test_a2b2_shared_base_block_past_32kb_is_refused_at_init(run):
    msg = [m for _, code, _, m in run.rows("FAULT") if code == "api-misuse" and "isA2B2Shared" in m]
    assert len(msg) == 1 and "32 KB" in msg[0]


def test_the_matmul_example_is_costed_on_the_cube_pipes_at_the_iterate_all_line():
    """The cost model sees what the Matmul object issues per block (MTE2 loads, MTE1 L0 loads, M
    multiplies, FIX write-backs), attributed to the user's IterateAll line."""
    task = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "matmul_adv"
    report = _evaluate(task)
    assert report.timing is not None
    assert all(report.timing.pipes.get(p, 0.0) > 0.0 for p in ("MTE2", "MTE1", "M", "FIX")), report.timing.pipes
    source = (task / "matmul_adv.cpp").read_text().splitlines()
    line = next(i for i, s in enumerate(source, 1) if "mm.IterateAll(" in s)
    assert report.timing.hot_lines and report.timing.hot_lines[0].line == line, report.timing.hot_lines


def test_the_matmul_example_splits_n_across_cores_with_tails_in_m_and_n(tmp_path):
    """host.py's SPLIT_N: 6 cores as 3 along M by 2 along N, each core's N a multiple of 32 (ALIGN_N), on the
    example's shapes (tails in M, N and K): every block finds its M and N offsets and its tail, and C is right."""
    import importlib.util
    import shutil

    import torch

    task = shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "tasks" / "matmul_adv",
                           tmp_path / "matmul_adv")
    host = task / "host.py"
    text = host.read_text()
    for old, new in (("MAX_CORES = 4\n", "MAX_CORES = 6\n"), ("SPLIT_N = 1 ", "SPLIT_N = 2 "),
                     ("ALIGN_N = 1 ", "ALIGN_N = 32 ")):
        assert old in text, old
        text = text.replace(old, new)
    host.write_text(text)
    spec = importlib.util.spec_from_file_location("split_host", host)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for m, k, n in ((128, 256, 128), (100, 70, 50), (37, 200, 300)):
        launch = mod.launch(torch.zeros(m, k).half(), torch.zeros(k, n).half())
        t = launch.args[3].fields
        assert launch.block_dim == 6 and m % t["singleCoreM"] and t["singleCoreN"] % 32 == 0, (m, n, t)
    _evaluate(task)


def _evaluate(task: Path):
    """The task's report, which must be correct."""
    ev = Evaluator(EvalSettings())
    try:
        report = ev.evaluate(task).report
    finally:
        ev.close()
    assert report.status == "correct", report.diagnostics
    return report


def _half_matrix(run: Run, name: str, shape: tuple[int, ...]) -> np.ndarray:
    return run(name, np.float16).astype(np.float32).reshape(shape)


def test_a_constant_tiling_runs_with_a_null_tiling_on_a_tail(run):
    single_m, base_m, base_n, base_k, step_ka, depth_a1, db_l0a, is_bias = run("ct_static", np.int32).tolist()
    assert (single_m, base_m, base_n, base_k) == (64, 32, 48, 32)
    # K 80 in baseK 32 is 3 steps; all of them fit the 910B's L1, so one load, no double buffer
    assert (step_ka, depth_a1, db_l0a, is_bias) == (3, 3, 2, 1)
    a, b = _half_matrix(run, "ct_a", (50, 80)), _half_matrix(run, "ct_b", (80, 70))
    np.testing.assert_array_equal(run("ct_c", np.float32).reshape(50, 70), _cube(a, b, None, False))


def test_iterate_batch_reads_bsngd_and_writes_bngs1s2(run):
    a = _half_matrix(run, "bt_a", (2, 20, 3, 40))  # B, S, G, D (N = 1)
    b = _half_matrix(run, "bt_b", (2, 24, 3, 40))
    got = run("bt_c", np.float32).reshape(2, 3, 20, 24)
    for bb in range(2):
        for g in range(3):
            np.testing.assert_array_equal(got[bb, g], _cube(a[bb, :, g], b[bb, :, g].T, None, False))
    t = _tiling(run, "bt")
    assert t["singleCoreM"] == 20 and t["singleCoreN"] == 24


def test_iterate_batch_broadcasts_a_and_adds_a_bias_per_batch(run):
    a = _half_matrix(run, "bt_a", (-1,))[: 20 * 40].reshape(20, 40)
    b = _half_matrix(run, "bt_b", (-1,))[: 3 * 40 * 24].reshape(3, 40, 24)
    bias = run("bt_bias", np.float32).reshape(3, 24)
    got = run("bn_c", np.float32)[: 3 * 20 * 24].reshape(3, 20, 24)
    for j in range(3):
        np.testing.assert_array_equal(got[j], _cube(a, b[j], np.broadcast_to(bias[j], (20, 24)), False))


def test_split_k_tiling_gives_each_core_an_equal_part_of_k(run):
    t = _tiling(run, "sk")
    # matmul_splitk's pattern (Matmul高阶API使能多核切K.md: 16 x 16 x 1024 is two cores of K 512): a
    # shape within one core's L0 splits K, past 32 units of 16, in its least divisor from 2
    k_dim = 1024 // t["singleCoreK"]
    assert t["singleCoreK"] * k_dim == 1024 and k_dim == 2
    m_dim, n_dim = -(-32 // t["singleCoreM"]), -(-32 // t["singleCoreN"])
    assert t["usedCoreNum"] == m_dim * n_dim * k_dim <= 8
    assert run("sk_bias_refused", np.int64).tolist() == [-1]  # no bias with a K split (the page)


def test_split_k_parts_accumulate_into_gm_in_core_order(run):
    """enAtomic 1: each core's part of K (its own cube sum) added into the cleared C in float, one
    rounding per add, in core order; enAtomic 2 keeps the largest part."""
    t = _tiling(run, "sk")
    a = _half_matrix(run, "sk_a", (32, 1024))
    b = _half_matrix(run, "sk_b", (1024, 32))
    sk = t["singleCoreK"]
    parts = [_cube(a[:, p : p + sk], b[p : p + sk], None, False) for p in range(0, 1024, sk)]
    want = np.zeros((32, 32), np.float32)
    for part in parts:
        want = (want + part).astype(np.float32)
    np.testing.assert_array_equal(run("sk_c_add", np.float32).reshape(32, 32), want)
    np.testing.assert_array_equal(run("sk_c_max", np.float32).reshape(32, 32), np.maximum.reduce(parts))


def test_set_atomic_add_around_get_tensor_c_accumulates_into_gm(run):
    whole = _cube(_half_matrix(run, "sk_a", (32, 1024)), _half_matrix(run, "sk_b", (1024, 32)), None, False)
    np.testing.assert_array_equal(run("sk_c_twice", np.float32).reshape(32, 32), whole + whole)


def _quantise(c: np.ndarray, words: np.ndarray, out) -> np.ndarray:
    """The Fixpipe's QUANT_PRE on L0C values `c` (M x N) with a word a column (docs/cube.md, the
    随路量化 page): times the scale in bits 31..13 in float; to half saturating to its range, or for
    int8 saturate to [-256, 255], round to even, add the 9-bit offset (bits 45..37) and saturate to
    int8 or uint8 by the sign bit 46. No shift bit here (the words leave bit 36 clear)."""
    w = words.astype(np.uint64)[None, :]
    y = (c.astype(np.float32) * (w & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32)).astype(np.float32)
    if out is np.float16:
        return np.clip(y, -65504, 65504).astype(np.float16)
    off = ((w >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
    r = np.rint(np.clip(y, -256, 255)).astype(np.int64) + np.where(off >= 256, off - 512, off)
    signed = ((w >> np.uint64(46)) & np.uint64(1)) == 1
    return np.where(signed, np.clip(r, -128, 127), np.clip(r, 0, 255)).astype(np.int8)


@pytest.mark.parametrize(("name", "dt", "out"), [
    ("q_deq_scalar", np.int8, np.float16), ("q_deq_vector", np.int8, np.float16),
    ("q_deq_vector_ub", np.int8, np.float16), ("q_req_scalar", np.int8, np.int8),
    ("q_req_vector", np.int8, np.int8), ("q_b8_vector", np.float16, np.int8)])
def test_quantised_c_matches_the_fixpipe_conversion(run, name, dt, out):
    integer = dt is np.int8
    a = run(f"{name}_a", dt).reshape(24, 64).astype(np.int64 if integer else np.float32)
    b = run(f"{name}_b", dt).reshape(64, 300).astype(np.int64 if integer else np.float32)
    init = run(f"{name}_bias", np.int32) if integer else None
    c = _cube(a, b, init, integer)
    words = run(f"{name}_words", np.uint64)
    words = np.repeat(words, 300) if words.size == 1 else words
    want = _quantise(c, words, out)
    np.testing.assert_array_equal(run(f"{name}_c", out).reshape(24, 300), want)
    assert len(np.unique(want)) > 20  # scales, offsets and saturation all show in the result


SPLIT_K_PROGRAM = r"""#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

constexpr uint32_t M = 32, N = 32, K = 1024;

// Every core clears all of C, then adds its part of K (asc-devkit's matmul_splitk kernel).
__global__ __cube__ void mm(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, TCubeTiling t) {
    AscendC::TPipe pipe;
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<half> ga, gb;
    AscendC::GlobalTensor<float> gc;
    ga.SetGlobalBuffer((__gm__ half*)a, M * K), gb.SetGlobalBuffer((__gm__ half*)b, K * N);
    gc.SetGlobalBuffer((__gm__ float*)c, M * N);
    AscendC::Fill(gc, M * N, 0.0f);
    const uint32_t kPart = AscendC::GetBlockIdx();  // M and N are one core's each here
    mm.SetTensorA(ga[kPart * t.singleCoreK]);
    mm.SetTensorB(gb[kPart * t.singleCoreK * N]);
    mm.IterateAll(gc, 1);
    mm.End();
}

int main() {
    matmul_tiling::MultiCoreMatmulTiling api;
    api.SetDim(8);
    api.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(M, N, K);
    api.EnableMultiCoreSplitK(true);
    optiling::TCubeTiling t;
    if (api.GetTiling(t) != 0 || t.singleCoreM != int(M) || t.singleCoreN != int(N)) return 2;
    std::vector<uint16_t> a(M * K), b(K * N);
    std::vector<float> fa(M * K), fb(K * N), c(M * N);
    for (uint32_t i = 0; i < M * K; ++i) fa[i] = float(int(i % 9) - 4);
    for (uint32_t i = 0; i < K * N; ++i) fb[i] = float(int(i % 5) - 2);
    for (uint32_t i = 0; i < M * K; ++i) { _Float16 h = fa[i]; std::memcpy(&a[i], &h, 2); }
    for (uint32_t i = 0; i < K * N; ++i) { _Float16 h = fb[i]; std::memcpy(&b[i], &h, 2); }
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    uint8_t *da, *db, *dc;
    aclrtMalloc((void**)&da, a.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&db, b.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&dc, c.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(da, a.size() * 2, a.data(), a.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(db, b.size() * 2, b.data(), b.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE);
    mm<<<t.usedCoreNum, nullptr, stream>>>(da, db, dc, t);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(c.data(), c.size() * 4, dc, c.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;  // small integers: every sum is exact, whatever the order of the parts
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            float s = 0;
            for (uint32_t k = 0; k < K; ++k) s += fa[i * K + k] * fb[k * N + j];
            bad += c[i * N + j] != s;
        }
    std::printf("cores %d bad %d\n", int(t.usedCoreNum), bad);
    aclFinalize();
    return bad ? 1 : 0;
}
"""


def _run_clean(tmp_path, name: str, text: str, printed: str):
    """Run a whole program; it must end well and print `printed`. Its one launch."""
    from sage_npu.npu_eval.program import run_program

    path = tmp_path / name
    path.write_text(text)
    report = run_program(path, [], EvalSettings(cache_dir=tmp_path / "cache"), cwd=tmp_path)
    assert report.exit_code == 0 and report.status == "ok", report
    assert printed in report.stdout, report.stdout
    (launch,) = report.launches
    return launch


def test_a_split_k_program_clears_c_on_every_core_then_accumulates(tmp_path):
    """The split-K kernel's pattern on several cores: each core's Fill of C lands before any core's
    atomic sum (the Matmul waits for the other cores), so C is the whole product; the repeated
    clearing is a warning (duplicated work), not an error."""
    launch = _run_clean(tmp_path, "splitk.asc", SPLIT_K_PROGRAM, "cores 2 bad 0")
    assert {d.code for d in launch.diagnostics if d.severity == "error"} == set(), launch.diagnostics
    assert any(d.code == "gm-race" and "same values" in d.message for d in launch.diagnostics)


# Two isA2B2Shared objects back to back on one core (asc-devkit's matmul_a2b2_share kernel).
A2B2_PROGRAM = SPLIT_K_PROGRAM.replace(
    "constexpr uint32_t M = 32, N = 32, K = 1024;", "constexpr uint32_t M = 32, N = 32, K = 64;"
).replace(
    """    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);""",
    """    constexpr static MatmulConfig cfg = [] { MatmulConfig c = CFG_NORM; c.isA2B2Shared = true; return c; }();
    using H = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
    using F = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;
    AscendC::Matmul<H, H, F, F, cfg> mm, mm2;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t, mm2, &t);""",
).replace(
    """    AscendC::Fill(gc, M * N, 0.0f);
    const uint32_t kPart = AscendC::GetBlockIdx();  // M and N are one core's each here
    mm.SetTensorA(ga[kPart * t.singleCoreK]);
    mm.SetTensorB(gb[kPart * t.singleCoreK * N]);
    mm.IterateAll(gc, 1);
    mm.End();""",
    """    mm.SetTensorA(ga), mm.SetTensorB(gb);
    mm.IterateAll(gc);
    mm.End();
    mm2.SetTensorA(ga), mm2.SetTensorB(gb);
    mm2.IterateAll(gc);  // the same C again: the second object's blocks after the first's
    mm2.End();""",
).replace("    api.EnableMultiCoreSplitK(true);\n", "").replace("api.SetDim(8);", "api.SetDim(1);")


def test_two_a2b2_shared_objects_run_back_to_back_with_their_l0_ordered(tmp_path):
    """The second object's L0A/L0B loads wait for the first's Mmad (one global L0A/L0B) and its Mmad
    for the first's Fixpipe (the pipe's shared L0C): no missing-sync between them."""
    assert "isA2B2Shared" in A2B2_PROGRAM and "mm2.IterateAll" in A2B2_PROGRAM
    launch = _run_clean(tmp_path, "a2b2.asc", A2B2_PROGRAM, "cores 1 bad 0")
    assert not [d for d in launch.diagnostics if d.code == "missing-sync"], launch.diagnostics


def test_copy_a1_and_copy_b1_callbacks_load_each_base_block(run):
    """The callbacks replace the Matmul's GM -> L1 copies, one base block a call: 2 x 2 C blocks,
    each over four K blocks, so 16 calls each; A assembled from its two GM pieces."""
    a = np.concatenate([_half_matrix(run, "cb_lo", (40, 64)), _half_matrix(run, "cb_hi", (40, 64))], axis=1)
    b = _half_matrix(run, "cb_b", (128, 48))
    np.testing.assert_array_equal(run("cb_c", np.float32).reshape(40, 48), _cube(a, b, None, False))
    assert run("cb_calls", np.int32).tolist() == [16, 16]


def test_a_in_tscm_as_nz_is_read_in_place(run):
    a, b = _half_matrix(run, "ts_a", (40, 64)), _half_matrix(run, "ts_b", (64, 48))
    np.testing.assert_array_equal(run("ts_c", np.float32).reshape(40, 48), _cube(a, b, None, False))


@pytest.mark.parametrize(("name", "w"), [("nz16", 16), ("nz8", 8)])
def test_c_in_nz_with_and_without_channel_split(run, name, w):
    a, b = _half_matrix(run, f"{name}_a", (40, 64)), _half_matrix(run, f"{name}_b", (64, 48))
    nz = run(f"{name}_c", np.float32).reshape(48 // w, 48, w)  # column block, row (48: M rounded), column
    np.testing.assert_array_equal(np.concatenate(list(nz[:, :40]), axis=1), _cube(a, b, None, False))
    np.testing.assert_array_equal(nz[:, 40:], -7.0)  # the padding rows: not written


def _policy_inputs(run: Run, name: str, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    return _half_matrix(run, f"{name}_a", (m, k)), _half_matrix(run, f"{name}_b", (k, n))


def test_nbuffer33_keeps_a_in_l1_and_streams_b(run):
    """The N_BUFFER_33 tiling (stepM 3, stepKa = stepKb = 3 slices of K, A's 3 x 3 blocks in L1, B's
    double-buffered) and its schedule: each block row of A copied once, each B column once per group
    of 3 block rows (4 + 2 x 3 copies, not one pair per block), C with the bias as the cube makes it."""
    t = _tiling(run, "n33")
    assert (t["stepM"], t["stepKa"], t["stepKb"], t["depthA1"], t["depthB1"]) == (3, 3, 3, 9, 6), t
    a, b = _policy_inputs(run, "n33", 112, 80, 96)
    bias = run("n33_bias", np.float32)
    want = _cube(a, b, np.broadcast_to(bias, (112, 80)), False)
    np.testing.assert_array_equal(run("n33_c", np.float32).reshape(112, 80), want)
    assert run("n33_copies", np.int32).tolist() == [4 + 2 * 3]


@pytest.mark.parametrize("name", ["full_m", "full_n"])
def test_mdl_keeps_a_fully_loaded_a_in_l1_for_the_round(run, name):
    """A fully loaded (stepM x baseM >= singleCoreM, stepKa x baseK >= singleCoreK: the TCubeTiling
    page's MDL rule) is copied once per IterateAll, its 2 blocks, while B (stepN 1) is copied for each
    of the 6 blocks, in either iterate order; the product is the cube's."""
    a, b = _policy_inputs(run, name, 64, 96, 64)
    np.testing.assert_array_equal(run(f"{name}_c", np.float32).reshape(64, 96), _cube(a, b, None, False))
    assert run(f"{name}_copies", np.int32).tolist() == [2 + 6, 2 + 6]


def test_k_reorder_starts_each_core_at_its_own_k_chunk(run):
    """enableKdimReorderLoad (MDL): core i sums K's four chunks of 64 from chunk i mod 4 on, wrapping, so its
    float sums are the cube's in that order (core 4 as core 0), and the orders really differ."""
    a, b = _policy_inputs(run, "kro", 32, 32, 256)
    got = [run(f"kro_c{core}", np.float32).reshape(32, 32) for core in range(5)]
    for core, c in enumerate(got):
        order = np.concatenate([np.arange(64) + 64 * ((core + j) % 4) for j in range(4)])
        np.testing.assert_array_equal(c, _cube(a[:, order], b[order], None, False))
    np.testing.assert_array_equal(got[4], got[0])
    assert not np.array_equal(got[1], got[0])


@pytest.mark.parametrize(("name", "keep"), [("up", np.less_equal), ("low", np.greater_equal)])
def test_triangle_policies_skip_the_blocks_off_their_half(run, name, keep):
    """3 x 3 blocks of 32: the upper policy computes and writes blocks with row <= column, the lower
    row >= column (through Iterate/GetTensorC: 6 blocks); the others keep what C held (-7)."""
    a, b = _policy_inputs(run, name, 96, 96, 64)
    rows, cols = np.indices((96, 96)) // 32
    want = np.where(keep(rows, cols), _cube(a, b, None, False), np.float32(-7.0))
    np.testing.assert_array_equal(run(f"{name}_c", np.float32).reshape(96, 96), want)
    if name == "low":
        assert run("low_blocks", np.int32).tolist() == [6]


def test_iterate_into_the_kernels_co1_tensor_and_partial_sums(run):
    a, b = _policy_inputs(run, "co1", 64, 64, 64)
    np.testing.assert_array_equal(run("co1_c", np.float32).reshape(64, 64), _cube(a, b, None, False))
    a1, b1 = _policy_inputs(run, "co1p", 32, 32, 64)
    a2 = _half_matrix(run, "co1p2_a", (32, 64))
    want = _cube(a2, b1, _cube(a1, b1, None, False), False)
    np.testing.assert_array_equal(run("co1p_c", np.float32).reshape(32, 32), want)


def test_two_objects_of_a_pipe_share_l0_and_each_compute_the_cube_result(run):
    a, b = _policy_inputs(run, "two", 64, 64, 256)
    want = _cube(a, b, None, False)
    for name in ("two_c", "two_c2"):
        np.testing.assert_array_equal(run(name, np.float32).reshape(64, 64), want)
    msg = [m for _, code, _, m in run.rows("FAULT") if code == "api-misuse" and "another Matmul object" in m]
    assert len(msg) == 1 and "share L0C" in msg[0]


def test_nbuffer33_limits_are_faults_at_the_users_line(run):
    msgs = [m for _, code, _, m in run.rows("FAULT") if code == "api-misuse" and "NBuffer33MatmulPolicy" in m]
    assert len(msgs) == 2, msgs
    assert "stepKa 8" in msgs[0] and "ceil(singleCoreK / baseK) <= 3" in msgs[0]
    assert "Iterate" in msgs[1] and "IterateAll only" in msgs[1]


CUSTOM_POLICY_PROGRAM = r"""
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct MyPolicy : public AscendC::Impl::Detail::MatmulPolicy<MM_CFG, IMPL, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE> {};

using H = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using F = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

__global__ __cube__ void mm(GM_ADDR a) {
    AscendC::TPipe pipe;
    AscendC::Matmul<H, H, F, F, CFG_NORM, AscendC::MatmulCallBackFunc<nullptr, nullptr, nullptr>, MyPolicy> obj;
    (void)a;
}

int main() {
    mm<<<1, nullptr, nullptr>>>(nullptr);
    return 0;
}
"""


def test_a_user_defined_policy_is_one_not_emulated_line(tmp_path):
    from sage_npu.npu_eval.program import run_program

    path = tmp_path / "custom_policy.asc"
    path.write_text(CUSTOM_POLICY_PROGRAM)
    report = run_program(path, [], EvalSettings(cache_dir=tmp_path / "cache"), cwd=tmp_path)
    errors = [d for d in report.diagnostics if d.severity == "error"]
    assert len(errors) == 1, report.diagnostics
    assert errors[0].code == "not-emulated" and "user-defined MATMUL_POLICY" in errors[0].message, errors[0]
    assert "\n" not in errors[0].message


L0_CACHE_KERNEL = r"""
#include "kernel_operator.h"
#define ASCENDC_CUBE_ONLY
#include "lib/matmul_intf.h"
using namespace AscendC;
using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using FloatGm = MatmulType<TPosition::GM, CubeFormat::ND, float>;
// singleCoreM = baseM and singleCoreK = baseK, all constant: A's one base tile can stay in L0A
constexpr static MatmulShapeParams kShape{32, 128, 32, 32, 32, 32};
constexpr static MatmulConfig kCfg = GetMMConfig<MatmulConfigMode::CONFIG_NORM>(kShape);
constexpr static MatmulApiStaticTiling kConst = GetMatmulApiTiling<HalfGm, HalfGm, FloatGm, FloatGm>(kCfg);

extern "C" __global__ __aicore__ void mm_l0(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    TPipe pipe;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a, 32 * 32);
    bGm.SetGlobalBuffer((__gm__ half *)b, 32 * 128);
    cGm.SetGlobalBuffer((__gm__ float *)c, 32 * 128);
#ifdef CONSTANT
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm, kConst> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, (TCubeTiling*)nullptr);
#else
    TCubeTiling t{};  // the same tiling at run time
    t.M = t.Ka = t.Kb = t.singleCoreM = t.singleCoreK = 32, t.N = t.singleCoreN = 128;
    t.baseM = t.baseN = t.baseK = 32, t.stepKa = t.stepKb = t.depthA1 = t.depthB1 = 1;
    t.dbL0A = t.dbL0B = 2, t.dbL0C = 1, t.stepM = t.stepN = 1, t.usedCoreNum = 1;
    Matmul<HalfGm, HalfGm, FloatGm> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
#endif
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm);
    mm.End();
}
"""

L0_CACHE_HOST = """
import torch
from sage_npu.npu_eval import Launch

def launch(a, b):
    c = torch.zeros(32, 128, dtype=torch.float32)
    return Launch(kernel="mm_l0", block_dim=1, args=[a, b, c], outputs=[c], defines={DEFINES})
"""

L0_CACHE_REFERENCE = """
import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a.float() @ b.float()


def get_input_groups():
    gen = torch.Generator().manual_seed(3)
    a = torch.randint(-2, 3, (32, 32), generator=gen).half()
    return [[a, torch.randint(-2, 3, (32, 128), generator=gen).half()]]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("constant", [False, True], ids=["runtime-tiling", "constant-tiling"])
def test_the_l0a_cache_loads_a_once_a_round_with_a_constant_one_block_tiling(tmp_path, constant):
    """The matmul_l0cache sample's L0 cache: with every tiling field constant, singleCoreM = baseM and
    singleCoreK = baseK, A stays in L0A across the round's four N blocks, so MTE1 loads it once; the same
    tiling at run time loads it for every block. B is loaded for every block either way, and C is right."""
    from sage_npu.npu_eval.chips import chip_profile, local_memories

    task = tmp_path / "mm_l0"
    task.mkdir()
    (task / "mm_l0.cpp").write_text(L0_CACHE_KERNEL)
    (task / "host.py").write_text(L0_CACHE_HOST.replace("{DEFINES}", '{"CONSTANT": "1"}' if constant else "{}"))
    (task / "reference.py").write_text(L0_CACHE_REFERENCE)
    ev = Evaluator(EvalSettings(trials=1))
    try:
        evaluation = ev.evaluate(task)
    finally:
        ev.close()
    assert evaluation.report.status == "correct", evaluation.report.diagnostics
    windows = dict(local_memories(chip_profile("910B2")))
    starts = sorted(windows.values())

    def memory(addr: int) -> str:
        base = max(s for s in starts if s <= addr)
        return next(k for k, v in windows.items() if v == base)

    loads = [memory(r.w[0]) for b in evaluation.trace.trace.blocks.values() for r in b
             if r.kind == "I" and r.pipe == "MTE1" and r.w[1]]
    k_fractals = 32 // 16  # one LoadData per 16-wide column of K a tile
    assert loads.count("L0A") == k_fractals * (1 if constant else 4), loads
    assert loads.count("L0B") >= 4, loads  # each block its own B tile
