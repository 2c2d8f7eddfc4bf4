"""The cube unit's basic API on the 910B: TQue/TBuf and LocalMemAllocator on the cube positions
(A1/B1/C1 in L1, A2 in L0A, B2 in L0B, CO1 in L0C, C2 in the BiasTable), DataCopy GM -> L1 with
Nd2NzParams, LoadData (LoadData2DParams, with transpose), L1 -> BiasTable DataCopy, Mmad (zero,
accumulate, bias; half, bfloat16_t, float, int8_t) and Fixpipe (NZ -> ND and NZ kept, ReLU, the
scalar quantisation modes) to GM and to L1.

One C++ driver runs whole matmuls through the API on full and tail shapes and dumps the inputs and
the outputs; numpy recomputes each from the doc pages' semantics (fp32 accumulation of exact
products, round to nearest even on output). Provoked faults are checked for code and line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim_driver import PRELUDE, Run, build_and_run, main_calling

DRIVER = PRELUDE + r"""
static uint32_t al(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }


// C = A (M x K) x B (K x N) [+ bias] with the basic API and TPipe queues on every cube position;
// the result goes to GM as Tout through Fixpipe (NZ -> ND) with quantPre q.
template <typename U, typename L, typename Tout>
static void matmul(const std::string& name, uint32_t M, uint32_t K, uint32_t N, QuantMode_t q, bool relu,
                   bool with_bias, bool split_k) {
    constexpr uint32_t c0 = 32 / sizeof(U);
    const uint32_t M16 = al(M, 16), K0 = al(K, 16), N16 = al(N, 16);
    U* a = gm_alloc<U>("a", size_t(M) * K);
    U* b = gm_alloc<U>("b", size_t(K) * N);
    L* bias = gm_alloc<L>("bias", N16);
    Tout* c = gm_alloc<Tout>("c", size_t(M) * N);
    for (uint32_t i = 0; i < M * K; ++i) a[i] = U(int((i * 7 + 3) % 17) - 8);
    for (uint32_t i = 0; i < K * N; ++i) b[i] = U(int((i * 5 + 1) % 13) - 6);
    if constexpr (std::is_same_v<U, half> || std::is_same_v<U, bfloat16_t> || std::is_same_v<U, float>) {
        for (uint32_t i = 0; i < M * K; ++i) a[i] = U(float(a[i]) * 0.37f);
        for (uint32_t i = 0; i < K * N; ++i) b[i] = U(float(b[i]) * 0.21f);
    }
    for (uint32_t j = 0; j < N; ++j) bias[j] = L(int(j % 9) - 4);
    write_raw(name + "_a", a, sizeof(U) * M * K);
    write_raw(name + "_b", b, sizeof(U) * K * N);
    write_raw(name + "_bias", bias, sizeof(L) * N);
    GlobalTensor<U> ga, gb;
    GlobalTensor<L> gbias;
    GlobalTensor<Tout> gc;
    ga.SetGlobalBuffer(a, M * K);
    gb.SetGlobalBuffer(b, K * N);
    gbias.SetGlobalBuffer(bias, N16);
    gc.SetGlobalBuffer(c, M * N);

    TPipe pipe;
    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::C1, 1> qbias1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    TBuf<TPosition::C2> bt;
    pipe.InitBuffer(qa1, 1, M16 * K0 * sizeof(U));
    pipe.InitBuffer(qb1, 1, K0 * N16 * sizeof(U));
    pipe.InitBuffer(qbias1, 1, N16 * sizeof(L));
    pipe.InitBuffer(qa2, 1, M16 * K0 * sizeof(U));
    pipe.InitBuffer(qb2, 1, K0 * N16 * sizeof(U));
    pipe.InitBuffer(qc, 1, M16 * N16 * sizeof(L));
    pipe.InitBuffer(bt, al(N16 * sizeof(L), 64));

    // GM -> L1: A as NZ with M16 rows per column block, B as NZ with K0 rows per column block.
    auto a1 = qa1.AllocTensor<U>();
    DataCopy(a1, ga, Nd2NzParams{1, uint16_t(M), uint16_t(K), 0, uint16_t(K), uint16_t(M16), 1, 0});
    qa1.EnQue(a1);
    auto b1 = qb1.AllocTensor<U>();
    DataCopy(b1, gb, Nd2NzParams{1, uint16_t(K), uint16_t(N), 0, uint16_t(N), uint16_t(K0), 1, 0});
    qb1.EnQue(b1);
    auto bias1 = qbias1.AllocTensor<L>();
    DataCopy(bias1, gbias, Nd2NzParams{1, 1, uint16_t(N16), 0, uint16_t(N16), 1, 1, 0});
    qbias1.EnQue(bias1);

    // L1 -> L0A (NZ -> ZZ: per m-block, its k fractals) and L1 -> L0B (NZ -> ZN, transposed).
    a1 = qa1.DeQue<U>();
    auto a2 = qa2.AllocTensor<U>();
    for (uint32_t i = 0; i < M16 / 16; ++i)
        LoadData(a2[i * K0 * 16], a1[i * 256],
                 LoadData2DParams{0, uint8_t(K0 / 16), uint16_t(M16 / 16), 0, 0, false, 0});
    qa2.EnQue(a2);
    qa1.FreeTensor(a1);
    b1 = qb1.DeQue<U>();
    auto b2 = qb2.AllocTensor<U>();
    for (uint32_t kb = 0; kb < K0 / 16; ++kb)
        LoadData(b2[kb * N16 * 16], b1[kb * 256],
                 LoadData2DParams{0, uint8_t(N16 / 16), uint16_t(K0 / 16), 0, 0, true, 0});
    qb2.EnQue(b2);
    qb1.FreeTensor(b1);
    bias1 = qbias1.DeQue<L>();
    auto bias2 = bt.Get<L>();
    DataCopy(bias2, bias1, DataCopyParams{1, uint16_t(al(N16 * sizeof(L), 64) / 64), 0, 0});
    qbias1.FreeTensor(bias1);

    a2 = qa2.DeQue<U>();
    b2 = qb2.DeQue<U>();
    auto co1 = qc.AllocTensor<L>();
    if (split_k) {  // two Mmads along K (M <= 16: one m-block, its k fractals contiguous)
        const uint32_t k1 = 16;
        Mmad(co1, a2, b2, MmadParams{uint16_t(M), uint16_t(N), uint16_t(k1), 0, false, true});
        Mmad(co1, a2[k1 * 16], b2[k1 * N16], MmadParams{uint16_t(M), uint16_t(N), uint16_t(K - k1), 0, false, false});
    } else if (with_bias) {
        Mmad(co1, a2, b2, bias2, MmadParams{uint16_t(M), uint16_t(N), uint16_t(K), 0, false, true});
    } else {
        Mmad(co1, a2, b2, MmadParams{uint16_t(M), uint16_t(N), uint16_t(K), 0, false, true});
    }
    qc.EnQue(co1);
    qa2.FreeTensor(a2);
    qb2.FreeTensor(b2);

    co1 = qc.DeQue<L>();
    FixpipeParamsV220 fp{uint16_t(N16), uint16_t(M), uint16_t(M16), N, relu};
    fp.quantPre = q;
    float scale = 0.5f;
    uint32_t bits;
    memcpy(&bits, &scale, 4);
    fp.deqScalar = bits;
    if (N16 != N) {
        // N not a multiple of 16: the output rows are N apart, so write the whole 16-column blocks
        // into a wider scratch row and keep the N columns
        Tout* wide = gm_alloc<Tout>("wide", size_t(M) * N16);
        GlobalTensor<Tout> gw;
        gw.SetGlobalBuffer(wide, M * N16);
        fp.dstStride = N16;
        Fixpipe(gw, co1, fp);
        for (uint32_t i = 0; i < M; ++i) memcpy(c + size_t(i) * N, wide + size_t(i) * N16, N * sizeof(Tout));
    } else {
        Fixpipe(gc, co1, fp);
    }
    qc.FreeTensor(co1);
    write_raw(name + "_c", c, sizeof(Tout) * M * N);
}

// LocalMemAllocator on L1/L0, the NZ output of Fixpipe (to GM and to L1).
static void static_tensors() {
    constexpr uint32_t M = 32, K = 32, N = 32;
    half* a = gm_alloc<half>("sa", M * K);
    half* b = gm_alloc<half>("sb", K * N);
    float* nz = gm_alloc<float>("snz", M * N);
    for (uint32_t i = 0; i < M * K; ++i) a[i] = half(float(int(i % 11) - 5) * 0.25f);
    for (uint32_t i = 0; i < K * N; ++i) b[i] = half(float(int(i % 7) - 3) * 0.5f);
    write_raw("static_a", a, sizeof(half) * M * K);
    write_raw("static_b", b, sizeof(half) * K * N);
    GlobalTensor<half> ga, gb;
    GlobalTensor<float> gnz;
    ga.SetGlobalBuffer(a, M * K);
    gb.SetGlobalBuffer(b, K * N);
    gnz.SetGlobalBuffer(nz, M * N);
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    LocalMemAllocator<Hardware::L0C> l0c;
    auto a1 = l1.Alloc<TPosition::A1, half>(M * K);
    auto b1 = l1.Alloc<TPosition::B1, half>(K * N);
    auto back = l1.Alloc<TPosition::A1, half>(M * N);
    auto a2 = l0a.Alloc<TPosition::A2, half>(M * K);
    auto b2 = l0b.Alloc<TPosition::B2, half>(K * N);
    auto c1 = l0c.Alloc<TPosition::CO1, float>(M * N);
    DataCopy(a1, ga, Nd2NzParams{1, M, K, 0, K, M, 1, 0});
    DataCopy(b1, gb, Nd2NzParams{1, K, N, 0, N, K, 1, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint32_t i = 0; i < M / 16; ++i)
        LoadData(a2[i * K * 16], a1[i * 256], LoadData2DParams{0, uint8_t(K / 16), uint16_t(M / 16), 0, 0, false, 0});
    for (uint32_t i = 0; i < K / 16; ++i)
        LoadData(b2[i * N * 16], b1[i * 256], LoadData2DParams{0, uint8_t(N / 16), uint16_t(K / 16), 0, 0, true, 0});
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams{M, N, K, 0, false, true});
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe<float, float, CFG_NZ>(gnz, c1, FixpipeParamsV220{N, M, M, M * 16 * 4 / 32, false});
    Fixpipe<half, float, CFG_NZ>(back, c1,
                                 FixpipeParamsV220{N, M, M, 32, true, QuantMode_t::F322F16, 0, 1, 0, 0, 0});
    write_raw("static_nz", nz, sizeof(float) * M * N);
    dump("static_l1", back, M * N);
    // The same L0C through DataCopy (DataCopyCO12DstParams) and the Fixpipe registers: NZ kept, ND
    // half with ReLU, ND int8 scaled by 0.5 (QF322B8_PRE from SetFixpipePreQuantFlag) as two ND
    // matrices of 16 columns each (SetFixpipeNz2ndFlag).
    float* dnz = gm_alloc<float>("dnz", M * N);
    half* dnd = gm_alloc<half>("dnd", M * N);
    int8_t* dq = gm_alloc<int8_t>("dq", M * N);
    GlobalTensor<float> gdnz;
    GlobalTensor<half> gdnd;
    GlobalTensor<int8_t> gdq;
    gdnz.SetGlobalBuffer(dnz, M * N);
    gdnd.SetGlobalBuffer(dnd, M * N);
    gdq.SetGlobalBuffer(dq, M * N);
    DataCopy(gdnz, c1, DataCopyCO12DstParams{N, M, M * 16 * 4 / 32, M, QuantMode_t::NoQuant, 0, false, false});
    SetFixpipeNz2ndFlag(1, 0, 0);
    DataCopy(gdnd, c1, DataCopyCO12DstParams{N, M, N, M, QuantMode_t::F322F16, 1, false, true});
    float half_scale = 0.5f;
    uint32_t qbits;
    memcpy(&qbits, &half_scale, 4);
    SetFixpipePreQuantFlag(qbits | (uint64_t(1) << 46));  // bit 46: an int8 result
    SetFixpipeNz2ndFlag(2, uint16_t(M / 16), M * 16);  // n-blocks 0 and 1 as two M x 16 matrices
    DataCopy(gdq, c1, DataCopyCO12DstParams{16, M, 16, M, QuantMode_t::QF322B8_PRE, 0, false, true});
    write_raw("dc_nz", dnz, sizeof(float) * M * N);
    write_raw("dc_nd", dnd, sizeof(half) * M * N);
    write_raw("dc_q", dq, M * N);
}

// Each fault at its line.
static void faults() {
    TPipe pipe;
    TQue<TPosition::A1, 1> big;
    try {
        expect("cube-buffer-overflow", __LINE__ + 1);
        pipe.InitBuffer(big, 2, 300 * 1024);
    } catch (const sage::sim::KernelAbort&) {
    }
    TBuf<TPosition::A2> l0a;
    try {
        expect("cube-buffer-overflow", __LINE__ + 1);
        pipe.InitBuffer(l0a, 65 * 1024);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("cube-buffer-overflow", __LINE__ + 1);
        LocalTensor<float> bt(TPosition::C2, 0, 512);
    } catch (const sage::sim::KernelAbort&) {
    }
    LocalMemAllocator<Hardware::L0A> l0a_alloc;
    LocalMemAllocator<Hardware::L0B> l0b_alloc;
    LocalMemAllocator<Hardware::L0C> l0c_alloc;
    LocalMemAllocator<Hardware::L1> l1_alloc;
    auto a2 = l0a_alloc.Alloc<TPosition::A2, half>(16 * 32);
    auto b2 = l0b_alloc.Alloc<TPosition::B2, half>(32 * 16);
    auto c1 = l0c_alloc.Alloc<TPosition::CO1, float>(16 * 16);
    auto a1 = l1_alloc.Alloc<TPosition::A1, half>(16 * 32);
    try {
        expect("api-misuse", __LINE__ + 1);  // a half fractal off its 512-byte boundary
        Mmad(c1, a2[16], b2, MmadParams{16, 16, 16, 0, false, true});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // A from L1, not L0A
        Mmad(c1, a1, b2, MmadParams{16, 16, 16, 0, false, true});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);  // k = 64 needs 4 fractals of A, the tensor holds 2
        Mmad(c1, a2, b2, MmadParams{16, 16, 64, 0, false, true});
    } catch (const sage::sim::KernelAbort&) {
    }
    std::vector<float> out(256);
    sage::sim::rt().gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(out.data()), 1024, 0, "out", nullptr});
    GlobalTensor<float> g;
    g.SetGlobalBuffer(out.data(), 256);
    expect("uninitialized-read", __LINE__ + 1);  // L0C before any Mmad wrote it
    Fixpipe(g, c1, FixpipeParamsV220{16, 16, 16, 16, false});
    try {
        expect("api-misuse", __LINE__ + 1);  // float L0C to a float output with F322F16
        Fixpipe(g, c1, FixpipeParamsV220{16, 16, 16, 16, false, QuantMode_t::F322F16, 0, 1, 0, 0, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // nSize past its range
        Fixpipe(g, c1, FixpipeParamsV220{5000, 16, 16, 16, false});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        auto a1i = l1_alloc.Alloc<TPosition::A1, int8_t>(1024);
        auto a2i = l0a_alloc.Alloc<TPosition::A2, int8_t>(1024);
        expect("api-misuse", __LINE__ + 1);  // int8 fractals cannot be transposed by LoadData2D
        LoadData(a2i, a1i, LoadData2DParams{0, 1, 1, 0, 0, true, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    expect("uninitialized-read", __LINE__ + 1);  // accumulate onto an L0C nothing wrote
    Mmad(l0c_alloc.Alloc<TPosition::CO1, float>(256), a2, b2, MmadParams{16, 16, 16, 0, false, false});
}

// Per-column quantisation: C = A (M x K) x B (K x N) into L0C (B given as B^T, N x K, whose NZ
// copy in L1 is already L0B's layout), then one word a column (scale, offset, shift, sign; dumped)
// and C converted with quantPre q: mode 0 the scalar word (column 0's) through Fixpipe, 1 the words
// in L1 as cbufWorkspace (ND to GM), 2 the words in the Fixpipe Buffer through SetFixPipeConfig and
// an L0C DataCopy (ND to GM), 3 cbufWorkspace with NZ output to L1 (dumped), 4 the same output
// over the words.
template <typename U, typename L, typename Tout>
static void per_column(const std::string& name, QuantMode_t q, bool relu, int mode) {
    constexpr uint32_t M = 32, K = 64, N = 48, c0 = 32 / sizeof(U);
    U* a = gm_alloc<U>("qa", M * K);
    U* bt = gm_alloc<U>("qbt", N * K);
    uint64_t* words = gm_alloc<uint64_t>("qw", 64);
    Tout* out = gm_alloc<Tout>("qout", M * N);
    const float frac = std::is_same_v<U, half> ? 0.37f : 1.0f;
    for (uint32_t i = 0; i < M * K; ++i) a[i] = U(float(int((i * 7 + 3) % 17) - 8) * frac);
    for (uint32_t i = 0; i < N * K; ++i) bt[i] = U(float(int((i * 5 + 1) % 13) - 6) * frac);
    for (uint32_t j = 0; j < N; ++j) {
        const float unit = std::is_same_v<L, int32_t> && !std::is_same_v<Tout, half> ? 0.0173f : 0.37f;
        float scale = float(j % 7 + 1) * unit * (j % 11 == 3 ? -1.0f : 1.0f);
        uint32_t bits;
        memcpy(&bits, &scale, 4);
        const uint64_t offset = uint64_t(int(j % 5) - 2) & 0x1FF, shift = j % 3;
        words[j] = bits | (uint64_t(j % 4 == 1) << 36) | (shift << 32) | (offset << 37) |
                   (uint64_t(!std::is_same_v<Tout, uint8_t>) << 46);
    }
    write_raw(name + "_a", a, sizeof(U) * M * K);
    write_raw(name + "_bt", bt, sizeof(U) * N * K);
    write_raw(name + "_w", words, 8 * N);
    GlobalTensor<U> ga, gbt;
    GlobalTensor<uint64_t> gw;
    GlobalTensor<Tout> gout;
    ga.SetGlobalBuffer(a, M * K);
    gbt.SetGlobalBuffer(bt, N * K);
    gw.SetGlobalBuffer(words, 64);
    gout.SetGlobalBuffer(out, M * N);
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    LocalMemAllocator<Hardware::L0C> l0c;
    LocalMemAllocator<Hardware::FIXBUF> fbuf;
    auto a1 = l1.Alloc<TPosition::A1, U>(M * K);
    auto b1 = l1.Alloc<TPosition::B1, U>(N * K);
    auto ws = l1.Alloc<TPosition::C1, uint64_t>(64);
    auto nz = l1.Alloc<TPosition::C1, Tout>(M * 64);
    auto a2 = l0a.Alloc<TPosition::A2, U>(M * K);
    auto b2 = l0b.Alloc<TPosition::B2, U>(N * K);
    auto c1 = l0c.Alloc<TPosition::CO1, L>(M * N);
    auto fb = fbuf.Alloc<TPosition::C2PIPE2GM, uint64_t>(64);
    // mode 4 writes C over the words themselves, as fixpipe_l0c2l1 does (both at L1 byte 0)
    LocalTensor<Tout> over(TPosition::C1, detail::mem_offset(ws), M * 64);
    DataCopy(a1, ga, Nd2NzParams{1, M, K, 0, K, M, 1, 0});
    DataCopy(b1, gbt, Nd2NzParams{1, N, K, 0, K, N, 1, 0});
    DataCopy(ws, gw, DataCopyParams{1, 16, 0, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint32_t i = 0; i < M / 16; ++i)
        LoadData(a2[i * K * 16], a1[i * 16 * c0],
                 LoadData2DParams{0, uint8_t(K / c0), uint16_t(M / 16), 0, 0, false, 0});
    LoadData(b2, b1, LoadData2DParams{0, uint8_t(K / c0 * N / 16), 1, 0, 0, false, 0});
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams{M, N, K, 0, false, true});
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    FixpipeParamsV220 fp{N, M, M, N, relu};
    fp.quantPre = q;
    if (mode == 0) {
        fp.deqScalar = words[0];
        Fixpipe(gout, c1, fp);
    } else if (mode == 1) {
        Fixpipe(gout, c1, ws, fp);
    } else if (mode == 2) {
        DataCopy(fb, ws, DataCopyParams{1, N * 8 / 128, 0, 0});
        SetFixPipeConfig(fb);
        SetFixpipeNz2ndFlag(1, 0, 0);
        DataCopy(gout, c1, DataCopyCO12DstParams{N, M, N, M, q, uint8_t(relu), false, true});
    } else {
        fp.dstStride = M * 32 / 32;  // NZ int8: 32-column blocks of M rows of 32 bytes, 32-byte units
        LocalTensor<Tout> dst = mode == 3 ? nz : over;
        Fixpipe<Tout, L, CFG_NZ>(dst, c1, ws, fp);
        dump(name + "_out", dst, M * 64);
        return;
    }
    write_raw(name + "_out", out, sizeof(Tout) * M * N);
}

// Per-column quantisation misuse, each at its line (before any SetFixPipeConfig of this block).
static void quant_faults() {
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0C> l0c;
    LocalMemAllocator<Hardware::FIXBUF> fbuf;
    auto ws = l1.Alloc<TPosition::C1, uint64_t>(512);
    auto c1 = l0c.Alloc<TPosition::CO1, float>(16 * 512);
    auto fb = fbuf.Alloc<TPosition::C2PIPE2GM, uint64_t>(256);
    std::vector<int8_t> out(16 * 512);
    sage::sim::rt().gm.push_back(sage::sim::GmBuffer{reinterpret_cast<uint8_t*>(out.data()), out.size(), 0, "qf",
                                                     nullptr});
    GlobalTensor<int8_t> g;
    g.SetGlobalBuffer(out.data(), out.size());
    FixpipeParamsV220 fp{16, 16, 16, 16, false};
    fp.quantPre = QuantMode_t::VQF322B8_PRE;
    try {
        expect("api-misuse", __LINE__ + 1);  // a per-column mode with no words anywhere
        Fixpipe(g, c1, fp);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        FixpipeParamsV220 scalar = fp;
        scalar.quantPre = QuantMode_t::QF322B8_PRE;
        expect("api-misuse", __LINE__ + 1);  // cbufWorkspace with a scalar mode
        Fixpipe(g, c1, ws, scalar);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // the words must be in the Fixpipe Buffer
        SetFixPipeConfig(ws);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // Fixpipe Buffer destination not 128-byte aligned
        DataCopy(fb[8], ws, DataCopyParams{1, 1, 0, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
    FixpipeParamsV220 unsigned_word = fp;
    unsigned_word.quantPre = QuantMode_t::QF322B8_PRE;
    unsigned_word.deqScalar = 0x3F800000;  // 1.0 with sign bit 46 clear: uint8 saturation into int8
    expect("api-misuse", __LINE__ + 2);  // a warning; the L0C is unwritten too
    expect("uninitialized-read", __LINE__ + 1);
    Fixpipe(g, c1, unsigned_word);
    SetFixPipeConfig(fb);
    try {
        FixpipeParamsV220 wide = fp;
        wide.nSize = 300;
        expect("ub-out-of-bounds", __LINE__ + 1);  // 300 words: the 2 KB Fixpipe Buffer holds 256
        Fixpipe(g, c1, wide);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// Fill / InitConstValue: L1 in 32-byte blocks with a gap, L0A and L0B in 512-byte blocks, a
// second Fill over part of the first; then each misuse at its line.
static void fills() {
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    LocalMemAllocator<Hardware::L0C> l0c;
    auto a1 = l1.Alloc<TPosition::A1, half>(256);
    auto a2 = l0a.Alloc<TPosition::A2, float>(512);
    auto b2 = l0b.Alloc<TPosition::B2, int16_t>(1024);
    Fill(a1, InitConstValueParams<half>{1, 16, 0, half(0.0f)});
    Fill(a1, InitConstValueParams<half>{3, 2, 3, half(1.5f)});  // blocks 0-1, 5-6, 10-11
    Fill(a2, {1, 4, 0, -2.25f});
    InitConstValue(b2, InitConstValueParams<int16_t>{2, 1, 2, int16_t(-7)});  // fractals 0 and 3
    dump("fill_l1", a1, 256);
    dump("fill_l0a", a2, 512);
    std::vector<int16_t> l0b_head(b2.data(), b2.data() + 256);
    std::vector<int16_t> l0b_fourth(b2.data() + 768, b2.data() + 1024);
    l0b_head.insert(l0b_head.end(), l0b_fourth.begin(), l0b_fourth.end());
    write_raw("fill_l0b", l0b_head.data(), l0b_head.size() * 2);
    auto c1 = l0c.Alloc<TPosition::CO1, float>(256);
    try {
        expect("api-misuse", __LINE__ + 1);  // L0C is not a Fill destination
        Fill(c1, {1, 1, 0, 0.0f});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // an L0A destination must be 512-byte aligned
        Fill(a2[8], {1, 1, 0, 0.0f});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("ub-out-of-bounds", __LINE__ + 1);  // 5 fractals into a tensor of 4
        Fill(a2, {1, 5, 0, 0.0f});
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // Ascend 950 only
        LoadData(a2, l1.Alloc<TPosition::A1, float>(512), LoadData2DParamsV2{0, 0, 1, 1, 1, 1, false, 0});
    } catch (const sage::sim::KernelAbort&) {
    }
}

// LoadData's img2col form as matmuls use it (1 x 1 kernel): A (M x K) to L0A from its NZ copy in
// L1, untransposed; B (K x N) to L0B (always transposed); and, for float, A given as A^T (K x M)
// in GM, to L0A with enTranspose. C goes out as ND floats.
template <typename U>
static void load3d_matmul(const std::string& name, uint32_t M, uint32_t K, uint32_t N, bool a_transposed) {
    constexpr uint32_t c0 = 32 / sizeof(U);
    const uint32_t M16 = al(M, 16), Kc = al(K, a_transposed ? 16 : c0), N16 = al(N, 16), Mc = al(M, c0);
    U* a = gm_alloc<U>("a", size_t(M) * K);
    U* b = gm_alloc<U>("b", size_t(K) * N);
    float* c = gm_alloc<float>("c", size_t(M) * N16);
    for (uint32_t i = 0; i < M * K; ++i) a[i] = U(float(int((i * 7 + 3) % 17) - 8) * 0.37f);
    for (uint32_t i = 0; i < K * N; ++i) b[i] = U(float(int((i * 5 + 1) % 13) - 6) * 0.21f);
    write_raw(name + "_a", a, sizeof(U) * M * K);  // row-major M x K, or K x M when a_transposed
    write_raw(name + "_b", b, sizeof(U) * K * N);
    GlobalTensor<U> ga, gb;
    GlobalTensor<float> gc;
    ga.SetGlobalBuffer(a, M * K);
    gb.SetGlobalBuffer(b, K * N);
    gc.SetGlobalBuffer(c, M * N16);
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    LocalMemAllocator<Hardware::L0C> l0c;
    auto a1 = l1.Alloc<TPosition::A1, U>(al(M, 16) * al(K, 16) * 2);
    auto b1 = l1.Alloc<TPosition::B1, U>(al(K, 16) * N16);
    auto a2 = l0a.Alloc<TPosition::A2, U>(M16 * al(K, 16));
    auto b2 = l0b.Alloc<TPosition::B2, U>(al(K, 16) * N16);
    auto c1 = l0c.Alloc<TPosition::CO1, float>(M16 * N16);
    LoadData3DParamsV2<U> pa;
    if (!a_transposed) {  // the map: l1H 1, l1W M16 positions, K channels
        DataCopy(a1, ga, Nd2NzParams{1, uint16_t(M), uint16_t(K), 0, uint16_t(K), uint16_t(M16), 1, 0});
        pa.l1H = 1, pa.l1W = M16, pa.channelSize = Kc, pa.kExtension = Kc, pa.mExtension = M16;
    } else {  // A^T in L1: K positions (a multiple of 16), M channels; the loaded window is transposed
        DataCopy(a1, ga, Nd2NzParams{1, uint16_t(K), uint16_t(M), 0, uint16_t(M), uint16_t(Kc), 1, 0});
        pa.l1H = 1, pa.l1W = Kc, pa.channelSize = Mc, pa.kExtension = Mc, pa.mExtension = Kc, pa.enTranspose = true;
    }
    DataCopy(b1, gb, Nd2NzParams{1, uint16_t(K), uint16_t(N), 0, uint16_t(N), uint16_t(al(K, 16)), 1, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    LoadData(a2, a1, pa);
    LoadData3DParamsV2<U> pb;  // B's map: K positions, N channels, to L0B as ZN
    pb.l1H = uint16_t(al(K, 16)), pb.l1W = 1, pb.channelSize = uint16_t(N16), pb.kExtension = uint16_t(N16);
    pb.mExtension = uint16_t(al(K, 16));
    LoadData(b2, b1, pb);
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    MmadParams mp{uint16_t(M), uint16_t(N), uint16_t(K), 0, false, true};
    mp.kDirectionAlign = a_transposed && std::is_same_v<U, float>;
    Mmad(c1, a2, b2, mp);
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe(gc, c1, FixpipeParamsV220{uint16_t(N16), uint16_t(M), uint16_t(M16), N16, false});
    write_raw(name + "_c", c, sizeof(float) * M * N16);
}

// A real img2col: a half 32-channel 4 x 9 map, 3 x 3 kernel, stride (h 1, w 2), dilation 1,
// padding left 1 right 0 top 1 bottom 2 with pad value 1.5 (a 5 x 4 output), window rows 2..17 and
// columns 32..95 of the img2col matrix, to L0A; then the Pro form of the same load from the
// registers.
static void img2col() {
    constexpr uint32_t C = 32, H = 4, W = 9;
    half* fm = gm_alloc<half>("fm", C * H * W);
    for (uint32_t i = 0; i < C * H * W; ++i) fm[i] = half(float(int(i % 29) - 14) * 0.5f);
    write_raw("i2c_fm", fm, sizeof(half) * C * H * W);  // NC1HWC0: C1 = 2, H, W, C0 = 16
    GlobalTensor<half> gfm;
    gfm.SetGlobalBuffer(fm, C * H * W);
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    auto f1 = l1.Alloc<TPosition::A1, half>(C * H * W);
    auto out = l0a.Alloc<TPosition::A2, half>(16 * 64);
    auto out2 = l0a.Alloc<TPosition::A2, half>(16 * 64);
    DataCopy(f1, gfm, C * H * W);
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    const uint8_t pads[PAD_SIZE] = {1, 0, 1, 2};
    LoadData3DParamsV2<half> p(pads, H, W, C, 64, 16, 32, 2, 2, 1, 3, 3, 1, 1, false, false, half(1.5f));
    LoadData(out, f1, p);
    dump("i2c_out", out, 16 * 64);
    SetFmatrix(H, W, pads, FmatrixMode::FMATRIX_LEFT);
    SetLoadDataPaddingValue(half(1.5f));
    SetLoadDataBoundary(0);
    SetLoadDataRepeat({0, 1, 0});
    const uint64_t ext = (uint64_t(2) << 48) | (uint64_t(32) << 32) | (uint64_t(16) << 16) | 64;
    const uint64_t filt = (uint64_t(1) << 40) | (uint64_t(1) << 32) | (uint64_t(3) << 24) | (uint64_t(3) << 16) |
                          (uint64_t(1) << 8) | 2;
    LoadData(out2, f1, LoadData3DParamsV2Pro(C, false, false, false, false, false, ext, filt));
    dump("i2c_pro", out2, 16 * 64);
}

// img2col misuse, each at its line.
static void load3d_faults() {
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    auto s8 = l1.Alloc<TPosition::B1, int8_t>(1024);
    auto s8b = l0b.Alloc<TPosition::B2, int8_t>(1024);
    auto h1 = l1.Alloc<TPosition::A1, half>(1024);
    auto h2 = l0a.Alloc<TPosition::A2, half>(1024);
    LoadData3DParamsV2<int8_t> p8;
    p8.l1H = 1, p8.l1W = 32, p8.channelSize = 32, p8.kExtension = 32, p8.mExtension = 32;
    LoadData3DParamsV2<half> ph;
    ph.l1H = 1, ph.l1W = 32, ph.channelSize = 32, ph.kExtension = 32, ph.mExtension = 32;
    try {
        expect("dtype-unsupported", __LINE__ + 1);  // int8 cannot go to L0B through img2col on the 910B
        LoadData(s8b, s8, p8);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // dst off its 512-byte boundary
        LoadData(h2[16], h1, ph);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        LoadData3DParamsV2<half> small = ph;
        small.channelSize = 4;
        expect("not-emulated", __LINE__ + 1);  // the small-channel layout
        LoadData(h2, h1, small);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        LoadData3DParamsV2<half> big = ph;
        big.mExtension = 64;
        expect("ub-out-of-bounds", __LINE__ + 1);  // 64 x 32 halves do not fit the 1024-element dst
        LoadData(h2, h1, big);
    } catch (const sage::sim::KernelAbort&) {
    }
    try {
        expect("api-misuse", __LINE__ + 1);  // 1..1023 is undefined
        SetLoadDataBoundary(512);
    } catch (const sage::sim::KernelAbort&) {
    }
}

// An ND -> NZ copy of a K slice (16 of each 64-element row) checks the bytes it reads, not its
// span: the unwritten rest of each row is skipped, an unwritten byte in a row read is reported.
static void nd2nz_reads_rows() {
    constexpr uint32_t rows = 4, width = 64, slice = 16;
    half* w = gm_alloc<half>("w", rows * width);
    uint8_t* written = new uint8_t[rows * width * sizeof(half)]();
    sage::sim::rt().gm.back().written = written;
    for (uint32_t r = 0; r < rows; ++r) std::memset(written + r * width * sizeof(half), 1, slice * sizeof(half));
    GlobalTensor<half> gw;
    gw.SetGlobalBuffer(w, rows * width);
    LocalMemAllocator<Hardware::L1> l1;
    auto a1 = l1.Alloc<TPosition::A1, half>(16 * slice);
    DataCopy(a1, gw, Nd2NzParams{1, uint16_t(rows), uint16_t(slice), 0, uint16_t(width), 16, 1, 0});
    written[(2 * width + 5) * sizeof(half)] = 0;  // row 2, element 5: inside the slice read
    expect("uninitialized-gm-read", __LINE__ + 1);
    DataCopy(a1, gw, Nd2NzParams{1, uint16_t(rows), uint16_t(slice), 0, uint16_t(width), 16, 1, 0});
}

// The Zz trick of load_data_l12l0 scenario 14: a float [k = 20, m = 8] matrix cut into ndNum = 2
// ND matrices of nValue = 16 rows; the second's rows 4..15 lie past the buffer (a warning, read as
// 0xFF). An ND matrix whose first row is past the end is a wrong stride or count: a fault.
static void nd2zz_ragged_tail() {
    constexpr uint32_t k = 20, m = 8;
    float* x = gm_alloc<float>("x", k * m);
    for (uint32_t i = 0; i < k * m; ++i) x[i] = float(i) + 0.5f;
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(x, k * m);
    LocalMemAllocator<Hardware::L1> l1;
    auto a1 = l1.Alloc<TPosition::A1, float>(3 * 16 * m);
    expect("gm-out-of-bounds", __LINE__ + 1);
    DataCopy(a1, gx, Nd2NzParams{2, 16, uint16_t(m), 16 * m, uint16_t(m), 16, 1, 16 * m});
    dump("zz_ragged", a1, 2 * 16 * m);
    try {
        expect("gm-out-of-bounds", __LINE__ + 1);  // the third matrix would start at row 32 of 20
        DataCopy(a1, gx, Nd2NzParams{3, 16, uint16_t(m), 16 * m, uint16_t(m), 16, 1, 16 * m});
    } catch (const sage::sim::KernelAbort&) {
    }
}
// Where each local memory's window starts in the block's array (chips.local_memories mirrors it).
static void memory_bases() {
    std::vector<uint32_t> v;
    for (int i = 0; i < int(sage::sim::Mem::Count); ++i) v.push_back(sage::sim::mem_base(sage::sim::Mem(i)));
    write_raw("mem_bases", v.data(), v.size() * 4);
}
""" + main_calling(
    "memory_bases();",
    'matmul<half, float, half>("h_full", 32, 64, 48, QuantMode_t::F322F16, false, false, false);',
    'matmul<half, float, float>("h_tail", 30, 70, 40, QuantMode_t::NoQuant, false, false, false);',
    'matmul<half, float, float>("h_bias_relu", 16, 32, 32, QuantMode_t::NoQuant, true, true, false);',
    'matmul<bfloat16_t, float, bfloat16_t>("bf_full", 32, 32, 32, QuantMode_t::F322BF16, false, false, false);',
    'matmul<half, float, float>("h_splitk", 16, 48, 32, QuantMode_t::NoQuant, false, false, true);',
    "static_tensors();",
    "faults();",
    'load3d_matmul<half>("l3h", 30, 40, 70, false);',
    'load3d_matmul<float>("l3f", 30, 40, 70, false);',
    'load3d_matmul<float>("l3ft", 30, 40, 70, true);',
    'load3d_matmul<half>("l3ht", 30, 40, 70, true);',
    "img2col();",
    "load3d_faults();",
    "quant_faults();",
    "fills();",
    'per_column<half, float, int8_t>("vq_ws", QuantMode_t::VQF322B8_PRE, false, 1);',
    'per_column<half, float, uint8_t>("vq_fb_relu", QuantMode_t::VQF322B8_PRE, true, 2);',
    'per_column<half, float, int8_t>("vq_nz", QuantMode_t::VQF322B8_PRE, false, 3);',
    'per_column<half, float, int8_t>("vq_nz_over", QuantMode_t::VQF322B8_PRE, false, 4);',
    'per_column<int8_t, int32_t, int8_t>("vreq_ws", QuantMode_t::VREQ8, false, 1);',
    'per_column<int8_t, int32_t, int8_t>("vreq_fb_relu", QuantMode_t::VREQ8, true, 2);',
    'per_column<int8_t, int32_t, half>("vdeq_ws", QuantMode_t::VDEQF16, false, 1);',
    'per_column<int8_t, int32_t, half>("vdeq_fb_relu", QuantMode_t::VDEQF16, true, 2);',
    'per_column<int8_t, int32_t, int8_t>("req_scalar", QuantMode_t::REQ8, false, 0);',
    "nd2nz_reads_rows();",
    "nd2zz_ragged_tail();",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    return build_and_run(tmp_path_factory.mktemp("sim_cube"), DRIVER)


def test_the_missing_sync_message_names_memories_where_the_emulator_lays_them_out(run):
    from sage_npu.npu_eval.chips import chip_profile, local_memories

    layout = local_memories(chip_profile("910B2"))  # the chip the drivers are built for
    assert [base for _name, base in layout] == list(run("mem_bases", np.uint32))


def _inputs(run: Run, name: str, dt, m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    a = run(f"{name}_a", dt).astype(np.float32).reshape(m, k)
    b = run(f"{name}_b", dt).astype(np.float32).reshape(k, n)
    return a, b


def _bf16(raw: np.ndarray) -> np.ndarray:
    return (raw.astype(np.uint32) << 16).view(np.float32)


def _fp32_matmul(a: np.ndarray, b: np.ndarray, init: np.ndarray | None = None) -> np.ndarray:
    """The cube's sum: exact products, accumulated over k in order in float32."""
    m, k = a.shape
    c = np.zeros((m, b.shape[1]), np.float32) if init is None else np.broadcast_to(init, (m, b.shape[1])).astype(
        np.float32)
    for kk in range(k):
        c = (c + np.outer(a[:, kk], b[kk]).astype(np.float32)).astype(np.float32)
    return c


def test_half_matmul_full_shape_to_half(run):
    a, b = _inputs(run, "h_full", np.float16, 32, 64, 48)
    want = _fp32_matmul(a, b).astype(np.float16)
    np.testing.assert_array_equal(run("h_full_c", np.float16).reshape(32, 48), want)


def test_half_matmul_tail_shape_pads_m_k_and_n(run):
    a, b = _inputs(run, "h_tail", np.float16, 30, 70, 40)
    np.testing.assert_array_equal(run("h_tail_c", np.float32).reshape(30, 40), _fp32_matmul(a, b))


def test_bias_from_the_bias_table_and_relu(run):
    a, b = _inputs(run, "h_bias_relu", np.float16, 16, 32, 32)
    bias = run("h_bias_relu_bias", np.float32)
    want = np.maximum(_fp32_matmul(a, b, bias), 0)
    got = run("h_bias_relu_c", np.float32).reshape(16, 32)
    np.testing.assert_array_equal(got, want)
    assert (got == 0).any() and (got > 0).any()


def test_bfloat16_matmul_rounds_to_bfloat16(run):
    a = _bf16(run("bf_full_a", np.uint16)).reshape(32, 32)
    b = _bf16(run("bf_full_b", np.uint16)).reshape(32, 32)
    c = _fp32_matmul(a, b)
    bits = c.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(run("bf_full_c", np.uint16).reshape(32, 32), rounded)


def test_a_second_mmad_accumulates_onto_l0c(run):
    a, b = _inputs(run, "h_splitk", np.float16, 16, 48, 32)
    first = _fp32_matmul(a[:, :16], b[:16])
    want = _fp32_matmul(a[:, 16:], b[16:], first)
    np.testing.assert_array_equal(run("h_splitk_c", np.float32).reshape(16, 32), want)


def test_static_tensors_and_nz_output(run):
    a = run("static_a", np.float16).astype(np.float32).reshape(32, 32)
    b = run("static_b", np.float16).astype(np.float32).reshape(32, 32)
    c = _fp32_matmul(a, b)
    # NZ: n-block j (16 columns) holds all 32 rows, each row 16 floats
    nz = run("static_nz", np.float32).reshape(2, 32, 16)
    np.testing.assert_array_equal(np.concatenate([nz[0], nz[1]], axis=1), c)
    l1 = run("static_l1", np.float16).reshape(2, 32, 16)
    np.testing.assert_array_equal(np.concatenate([l1[0], l1[1]], axis=1), np.maximum(c, 0).astype(np.float16))


def test_l0c_datacopy_reads_the_fixpipe_registers(run):
    a = run("static_a", np.float16).astype(np.float32).reshape(32, 32)
    b = run("static_b", np.float16).astype(np.float32).reshape(32, 32)
    c = _fp32_matmul(a, b)
    nz = run("dc_nz", np.float32).reshape(2, 32, 16)
    np.testing.assert_array_equal(np.concatenate([nz[0], nz[1]], axis=1), c)
    np.testing.assert_array_equal(run("dc_nd", np.float16).reshape(32, 32), np.maximum(c, 0).astype(np.float16))
    q = run("dc_q", np.int8).reshape(2, 32, 16)
    want = np.clip(np.rint(c * np.float32(0.5)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(np.concatenate([q[0], q[1]], axis=1), want)


def test_each_fault_at_its_line(run):
    expected = [(code, int(line)) for _, code, line in run.rows("EXPECT")]
    found = [(code, int(line)) for _, code, line, _ in run.rows("FAULT")]
    for want in expected:
        assert want in found, (want, found)
    assert sorted(set(found)) == sorted(set(expected)), found


# ---- a whole program: a matmul kernel launched on two blocks, its estimate and a missing sync ----

PROGRAM = r"""#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"

constexpr uint32_t M = 64, K = 64, N = 32, BM = 32;

__global__ __cube__ void mm(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c) {
    AscendC::GlobalTensor<half> ga, gb;
    AscendC::GlobalTensor<float> gc;
    ga.SetGlobalBuffer((__gm__ half*)a + AscendC::GetBlockIdx() * BM * K);
    gb.SetGlobalBuffer((__gm__ half*)b);
    gc.SetGlobalBuffer((__gm__ float*)c + AscendC::GetBlockIdx() * BM * N);
    AscendC::LocalMemAllocator<AscendC::Hardware::L1> l1;
    AscendC::LocalMemAllocator<AscendC::Hardware::L0A> l0a;
    AscendC::LocalMemAllocator<AscendC::Hardware::L0B> l0b;
    AscendC::LocalMemAllocator<AscendC::Hardware::L0C> l0c;
    auto a1 = l1.Alloc<AscendC::TPosition::A1, half>(BM * K);
    auto b1 = l1.Alloc<AscendC::TPosition::B1, half>(K * N);
    auto a2 = l0a.Alloc<AscendC::TPosition::A2, half>(BM * K);
    auto b2 = l0b.Alloc<AscendC::TPosition::B2, half>(K * N);
    auto c1 = l0c.Alloc<AscendC::TPosition::CO1, float>(BM * N);
    AscendC::DataCopy(a1, ga, AscendC::Nd2NzParams{1, BM, K, 0, K, BM, 1, 0});
    AscendC::DataCopy(b1, gb, AscendC::Nd2NzParams{1, K, N, 0, N, K, 1, 0});
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint32_t i = 0; i < BM / 16; ++i)
        AscendC::LoadData(a2[i * K * 16], a1[i * 256], AscendC::LoadData2DParams{0, K / 16, BM / 16, 0, 0, false, 0});
    for (uint32_t i = 0; i < K / 16; ++i)
        AscendC::LoadData(b2[i * N * 16], b1[i * 256], AscendC::LoadData2DParams{0, N / 16, K / 16, 0, 0, true, 0});
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::Mmad(c1, a2, b2, AscendC::MmadParams{BM, N, K, 0, false, true});
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::Fixpipe(gc, c1, AscendC::FixpipeParamsV220{N, BM, BM, N, false});
}

int main() {
    std::vector<uint16_t> a(M * K), b(K * N);
    std::vector<float> fa(M * K), fb(K * N), c(M * N);
    for (uint32_t i = 0; i < M * K; ++i) fa[i] = float(int(i % 9) - 4) * 0.5f;
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
    mm<<<M / BM, nullptr, stream>>>(da, db, dc);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(c.data(), c.size() * 4, dc, c.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            float s = 0;
            for (uint32_t k = 0; k < K; ++k) s += fa[i * K + k] * fb[k * N + j];
            bad += c[i * N + j] != s;
        }
    std::printf("bad %d\n", bad);
    aclrtFree(da);
    aclrtFree(db);
    aclrtFree(dc);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return bad ? 1 : 0;
}
"""


def _run_program(tmp_path, text: str):
    from sage_npu.npu_eval.program import run_program
    from sage_npu.npu_eval.settings import EvalSettings

    path = tmp_path / "mm.asc"
    path.write_text(text)
    return path, run_program(path, [], EvalSettings(cache_dir=tmp_path / "cache"), cwd=tmp_path)


def test_a_matmul_program_runs_on_two_blocks_with_the_cube_pipes_costed(tmp_path):
    _, report = _run_program(tmp_path, PROGRAM)
    assert report.exit_code == 0 and report.status == "ok", report
    (launch,) = report.launches
    assert not [d for d in launch.diagnostics if d.severity == "error"], launch.diagnostics
    assert launch.timing is not None
    assert {"MTE1", "M", "FIX", "MTE2"} <= set(launch.timing.pipes), launch.timing.pipes


def test_a_missing_m_to_fix_sync_is_reported_at_the_fixpipe(tmp_path):
    text = PROGRAM.replace("    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);\n"
                           "    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);\n", "")
    path, report = _run_program(tmp_path, text)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "AscendC::Fixpipe(" in t)
    found = [(d.code, d.line) for launch in report.launches for d in launch.diagnostics]
    assert ("missing-sync", line) in found, found
    msg = next(d.message for launch in report.launches for d in launch.diagnostics if d.code == "missing-sync")
    assert "reads L0C that" in msg, msg  # the memory the hazard is in, not "UB"


def _l0a_zz(x: np.ndarray, c0: int) -> np.ndarray:
    """L0A's ZZ fractals of x (rows padded to 16, columns to c0), flattened."""
    r, c = x.shape
    pad = np.zeros((-(-r // 16) * 16, -(-c // c0) * c0), x.dtype)
    pad[:r, :c] = x
    return pad.reshape(pad.shape[0] // 16, 16, pad.shape[1] // c0, c0).transpose(0, 2, 1, 3).ravel()


@pytest.mark.parametrize(("name", "dt", "a_transposed"), [
    ("l3h", np.float16, False), ("l3f", np.float32, False), ("l3ft", np.float32, True), ("l3ht", np.float16, True)])
def test_img2col_loads_feed_a_matmul(run, name, dt, a_transposed):
    m, k, n = 30, 40, 70
    a = run(f"{name}_a", dt).astype(np.float32).reshape((k, m) if a_transposed else (m, k))
    a = a.T if a_transposed else a
    b = run(f"{name}_b", dt).astype(np.float32).reshape(k, n)
    got = run(f"{name}_c", np.float32).reshape(m, -1)[:, :n]
    np.testing.assert_array_equal(got, _fp32_matmul(a, b))


def _img2col(fm: np.ndarray, kh: int, kw: int, stride: tuple[int, int], pads: tuple[int, int, int, int],
             pad_value: float) -> np.ndarray:
    """The img2col matrix of an NC1HWC0 map (C1, H, W, C0): rows the output positions, columns
    (c1, kernel point, c0), as the LoadData_3D page and its load3d.py lay them out."""
    left, right, top, bottom = pads
    p = np.pad(fm, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=pad_value)
    ho = (p.shape[1] - kh) // stride[0] + 1
    wo = (p.shape[2] - kw) // stride[1] + 1
    rows = []
    for i in range(ho):
        for j in range(wo):
            win = p[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw, :]
            rows.append(win.reshape(-1))
    return np.array(rows)


def test_img2col_with_padding_stride_and_a_window(run):
    fm = run("i2c_fm", np.float16).reshape(2, 4, 9, 16)
    x = _img2col(fm, 3, 3, (1, 2), (1, 0, 1, 2), 1.5)
    assert x.shape == (20, 2 * 9 * 16)
    want = _l0a_zz(x[2:18, 32:96], 16)
    np.testing.assert_array_equal(run("i2c_out", np.float16), want)
    np.testing.assert_array_equal(run("i2c_pro", np.float16), want)
    assert (want == np.float16(1.5)).any()


# ---- per-column quantisation (the V modes) and the quantisation word ----

def _quant_ref(c: np.ndarray, words: np.ndarray, mode: str, relu: bool) -> np.ndarray:
    """The 随路量化 page's conversion of L0C values `c` (M x N) with one word a column: M1 = bits
    31..13, for int32 input the mode control bit 36 shifts right by N = bits 35..32 + 1 and
    saturates to int16; negatives scale by 0 under ReLU; DEQF16 saturates to half; the B8 modes
    saturate to [-256, 255], round to even, add the signed 9-bit offset (bits 45..37) and saturate
    to int8 or uint8 by the sign bit 46. B8 results come back as raw bytes."""
    w = words.astype(np.uint64)[None, :]
    m1 = (w & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32)
    if c.dtype == np.int32:
        x = c.astype(np.int64)
        shifted = np.clip(x >> ((w >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1, -32768, 32767)
        x = np.where(((w >> np.uint64(36)) & np.uint64(1)) == 1, shifted, x).astype(np.float32)
    else:
        x = c.astype(np.float32)
    y = (x * np.where((x >= 0) | (not relu), m1, np.float32(0))).astype(np.float32)
    if mode == "deq":
        return np.clip(y, -65504, 65504).astype(np.float16)
    off = ((w >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
    off = np.where(off >= 256, off - 512, off)
    r = np.rint(np.clip(y, -256, 255)).astype(np.int64) + off
    signed = ((w >> np.uint64(46)) & np.uint64(1)) == 1
    r = np.where(signed, np.clip(r, -128, 127), np.clip(r, 0, 255))
    return (r & 0xFF).astype(np.uint8)


def _per_column_c(run: Run, name: str, dt) -> np.ndarray:
    a = run(f"{name}_a", dt).reshape(32, 64)
    bt = run(f"{name}_bt", dt).reshape(48, 64)
    if dt == np.int8:
        return a.astype(np.int64) @ bt.astype(np.int64).T
    return _fp32_matmul(a.astype(np.float32), bt.astype(np.float32).T)


@pytest.mark.parametrize(("name", "dt", "mode", "relu"), [
    ("vq_ws", np.float16, "b8", False), ("vq_fb_relu", np.float16, "b8", True),
    ("vreq_ws", np.int8, "b8", False), ("vreq_fb_relu", np.int8, "b8", True),
    ("vdeq_ws", np.int8, "deq", False), ("vdeq_fb_relu", np.int8, "deq", True)])
def test_per_column_quantisation_from_l1_and_the_fixpipe_buffer(run, name, dt, mode, relu):
    c = _per_column_c(run, name, dt)
    c = c.astype(np.int32) if dt == np.int8 else c
    words = run(f"{name}_w", np.uint64)
    want = _quant_ref(c, words, mode, relu)
    got = run(f"{name}_out", np.float16 if mode == "deq" else np.uint8).reshape(32, 48)
    np.testing.assert_array_equal(got, want)
    # the words vary what matters: saturation, offsets, the shift and ReLU all show in the result
    assert len(np.unique(want)) > 20


@pytest.mark.parametrize("name", ["vq_nz", "vq_nz_over"])
def test_per_column_quantisation_to_l1_in_nz(run, name):
    # vq_nz_over's output overwrites its own words: they were read before, as the device copies
    # them to the Fixpipe Buffer first
    c = _per_column_c(run, name, np.float16)
    want = _quant_ref(c, run(f"{name}_w", np.uint64), "b8", False)
    nz = run(f"{name}_out", np.uint8).reshape(2, 32, 32)  # 32-column int8 blocks of 32 rows
    np.testing.assert_array_equal(np.concatenate([nz[0], nz[1][:, :16]], axis=1), want)


def test_a_scalar_quantisation_word_with_offset_and_sign(run):
    c = _per_column_c(run, "req_scalar", np.int8).astype(np.int32)
    word = run("req_scalar_w", np.uint64)[:1]
    want = _quant_ref(c, np.repeat(word, 48), "b8", False)
    np.testing.assert_array_equal(run("req_scalar_out", np.uint8).reshape(32, 48), want)


def test_fill_writes_blocks_with_gaps_in_l1_l0a_and_l0b(run):
    l1 = run("fill_l1", np.float16).reshape(16, 16)  # 16 blocks of 32 bytes
    ones = np.zeros(16, bool)
    ones[[0, 1, 5, 6, 10, 11]] = True
    np.testing.assert_array_equal(l1[ones], np.float16(1.5))
    np.testing.assert_array_equal(l1[~ones], np.float16(0))
    np.testing.assert_array_equal(run("fill_l0a", np.float32), np.float32(-2.25))
    np.testing.assert_array_equal(run("fill_l0b", np.int16), np.int16(-7))


def test_the_nd2nz_copy_records_its_gm_span_so_the_l2_model_sees_a_partial_overlap(tmp_path):
    """The GM -> L1 ND -> NZ copy records its GM span (a burst a row, srcDValue apart): a copy of B's
    left columns, then of all of B, finds every 128-byte line of B in L2 (the first copy's rows touch
    each line). With only the address recorded the two copies would be different keys: no hit."""
    text = PROGRAM.replace(
        "    AscendC::DataCopy(b1, gb, AscendC::Nd2NzParams{1, K, N, 0, N, K, 1, 0});\n",
        "    AscendC::DataCopy(b1, gb, AscendC::Nd2NzParams{1, K, N / 2, 0, N, K, 1, 0});\n"
        "    AscendC::DataCopy(b1, gb, AscendC::Nd2NzParams{1, K, N, 0, N, K, 1, 0});\n")
    assert text != PROGRAM
    _, report = _run_program(tmp_path, text)
    (launch,) = report.launches
    assert launch.timing is not None
    b_bytes = 64 * 32 * 2  # K x N halves
    # A (distinct per block), B's half (both blocks at once: misses), all of B (hits, on both blocks)
    assert launch.timing.gm_read_bytes == 2 * (32 * 64 * 2 + b_bytes // 2 + b_bytes)
    assert launch.timing.l2_hit_bytes == 2 * b_bytes


def test_nd2zz_ragged_last_matrix_reads_the_buffer_then_garbage(run):
    """Rows of the last ND matrix past the buffer: the rows inside land as copied (one C0 block of 8
    floats a row), those past it as 0xFF (NaN), and the copy is a warning, not a fault."""
    got = run("zz_ragged", np.float32).reshape(32, 8)
    x = np.arange(160, dtype=np.float32).reshape(20, 8) + 0.5
    np.testing.assert_array_equal(got[:20], x)
    assert np.isnan(got[20:]).all()
    (warning,) = [r for r in run.rows("FAULT") if r[1] == "gm-out-of-bounds" and "last ND matrix" in r[3]]
    assert "96 elements" in warning[3], warning


_FLAGGED = ("    AscendC::Mmad(c1, a2, b2, AscendC::MmadParams{BM, N, K, 0, false, true});\n"
            "    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);\n"
            "    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);\n"
            "    AscendC::Fixpipe(gc, c1, AscendC::FixpipeParamsV220{N, BM, BM, N, false});\n")


def _unit_flag_program(mmad_last: int, fix: int) -> str:
    """PROGRAM with the M -> FIX hand-over by unit flags instead of M_FIX: two rounds over one L0C
    tile, each a Mmad with unitFlag 2 then one with `mmad_last` (both from zero, so C is A x B) and
    a Fixpipe with `fix`; the second round's Mmads overwrite what the first Fixpipe read."""
    fixpipe = f"AscendC::FixpipeParamsV220{{N, BM, BM, N, false, QuantMode_t::NoQuant, 0, 1, 0, 0, {fix}}}"
    rounds = ("    for (int r = 0; r < 2; ++r) {\n"
              "        AscendC::Mmad(c1, a2, b2, AscendC::MmadParams{BM, N, K, 2, false, true});\n"
              f"        AscendC::Mmad(c1, a2, b2, AscendC::MmadParams{{BM, N, K, {mmad_last}, false, true}});\n"
              f"        AscendC::Fixpipe(gc, c1, {fixpipe});\n"
              "    }\n")
    assert _FLAGGED in PROGRAM
    return PROGRAM.replace(_FLAGGED, rounds)


def test_unit_flags_order_mmad_and_fixpipe_without_flags(tmp_path):
    # the UnitFlag page's K loop: 2 ... 2, 3 on the Mmads and 3 on the Fixpipe hand L0C over both
    # ways (M -> FIX for the result, FIX -> M before the next round overwrites it)
    _, report = _run_program(tmp_path, _unit_flag_program(3, 3))
    assert report.exit_code == 0 and report.status == "ok", report  # exit 0: C equals A x B
    (launch,) = report.launches
    assert not [d for d in launch.diagnostics if d.severity == "error"], launch.diagnostics
    assert launch.timing is not None and {"M", "FIX"} <= set(launch.timing.pipes)


@pytest.mark.parametrize("mmad_last, fix, api, code", [
    (2, 3, "Fixpipe", "flag-deadlock"),  # no Mmad with unitFlag 3: the Fixpipe's wait never ends
    (0, 3, "Fixpipe", "flag-deadlock"),  # unitFlag on the Fixpipe only
    (3, 0, "Mmad", "flag-deadlock"),     # on the Mmads only: the second round waits for a read forever
    (3, 1, "Fixpipe", "api-misuse"),     # 1 is no unitFlag value
])
def test_unit_flag_misuse_is_reported(tmp_path, mmad_last, fix, api, code):
    path, report = _run_program(tmp_path, _unit_flag_program(mmad_last, fix))
    lines = [i for i, t in enumerate(path.read_text().splitlines(), 1) if f"AscendC::{api}(" in t]
    found = [(d.code, d.line) for launch in report.launches for d in launch.diagnostics if d.severity == "error"]
    assert report.status != "ok" and any((code, line) in found for line in lines), found


@pytest.mark.parametrize("reset", [False, True])
def test_set_fix_pipe_config_resets_the_unit_flags_after_a_partial_read(tmp_path, reset):
    # the UnitFlag page: a Fixpipe that reads half of C leaves the other half's flags set, so the
    # next round's Mmad waits forever, unless SetFixPipeConfig(l0c, true) resets them
    text = _unit_flag_program(3, 3).replace("FixpipeParamsV220{N, BM,", "FixpipeParamsV220{N / 2, BM,")
    if reset:
        text = text.replace("        AscendC::Fixpipe(gc, c1, AscendC::FixpipeParamsV220{N / 2, BM, BM, N, false, "
                            "QuantMode_t::NoQuant, 0, 1, 0, 0, 3});\n",
                            "        AscendC::Fixpipe(gc, c1, AscendC::FixpipeParamsV220{N / 2, BM, BM, N, false, "
                            "QuantMode_t::NoQuant, 0, 1, 0, 0, 3});\n"
                            "        AscendC::SetFixPipeConfig(c1, true);\n")
        assert "SetFixPipeConfig" in text
    path, report = _run_program(tmp_path, text)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "AscendC::Mmad(c1, a2, b2" in t)
    found = [(d.code, d.line) for launch in report.launches for d in launch.diagnostics]
    assert (("flag-deadlock", line) in found) is not reset, found
