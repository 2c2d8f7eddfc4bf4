// Attention forward, o = softmax(q k^T / sqrt(d)) v, fused on a mixed kernel (1 cube core and 2
// vector cores per AI Core). q is batch x seqQ x d, k and v batch x seqKv x d, all half; o is float.
// A band is baseM query rows of one batch; the AI Cores take the bands round-robin. Per band:
//   AIC: S = q k^T on the cube (k in NZ loaded without transposing is k^T in L0B), Fixpipe to the
//        S workspace, flag S_READY;
//   AIV: each takes half of the band's rows of S, scales them by 1/sqrt(d), SoftMax, rounds P to
//        half into the P workspace, flag P_READY;
//   AIC: o = P v on the cube, Fixpipe to o.
// The workspaces hold two bands per AI Core: the AIC computes S of band i + 1 while the AIVs run the
// softmax of band i, then multiplies band i's P by v. Flags (mode 2, within an AI Core):
//   S_READY: AIC -> both AIVs, "S of the band in slot i % 2 is in GM"
//   P_READY: both AIVs -> AIC, "P of that band is in GM" (the AIC waits for both)
// The AIC writes slot i % 2 of S again only after P_READY of band i - 2 (its AIVs have read S), and
// the AIVs write P into it only after S_READY of band i (the AIC has read P of band i - 2).
#include "kernel_operator.h"

using namespace AscendC;

struct AttentionTiling {
    uint32_t batch, seqQ, seqKv, headDim;  // seqKv and headDim multiples of 16
    uint32_t baseM;                        // query rows per band, a multiple of 16 (baseM / 2 per AIV)
    uint32_t bandsPerBatch;                // ceil(seqQ / baseM)
    uint32_t bands;                        // batch * bandsPerBatch
    float scale;                           // 1 / sqrt(headDim)
    uint32_t softmaxTmpBytes;              // SoftMax's work area for baseM / 2 rows of seqKv
};

constexpr uint32_t SLOTS = 2;
constexpr uint16_t S_READY = 0;
constexpr uint16_t P_READY = 1;

__aicore__ inline uint32_t Align16(uint32_t x) { return (x + 15) / 16 * 16; }

// Which batch and rows a band covers.
struct Band {
    uint32_t batch, row0, rows;
};
__aicore__ inline Band BandOf(const AttentionTiling& t, uint32_t band)
{
    uint32_t b = band / t.bandsPerBatch;
    uint32_t row0 = band % t.bandsPerBatch * t.baseM;
    uint32_t rows = t.seqQ - row0 < t.baseM ? t.seqQ - row0 : t.baseM;
    return Band{b, row0, rows};
}

class AttentionAic {
public:
    __aicore__ inline void Init(GM_ADDR q, GM_ADDR k, GM_ADDR v, GM_ADDR o, GM_ADDR sWs, GM_ADDR pWs,
                                const AttentionTiling& t)
    {
        tiling = t;
        uint32_t slotS = t.baseM * t.seqKv;
        qGm.SetGlobalBuffer((__gm__ half *)q, t.batch * t.seqQ * t.headDim);
        kGm.SetGlobalBuffer((__gm__ half *)k, t.batch * t.seqKv * t.headDim);
        vGm.SetGlobalBuffer((__gm__ half *)v, t.batch * t.seqKv * t.headDim);
        oGm.SetGlobalBuffer((__gm__ float *)o, t.batch * t.seqQ * t.headDim);
        sGm.SetGlobalBuffer((__gm__ float *)sWs + GetBlockIdx() * SLOTS * slotS, SLOTS * slotS);
        pGm.SetGlobalBuffer((__gm__ half *)pWs + GetBlockIdx() * SLOTS * slotS, SLOTS * slotS);
        // A1/A2: a band of q (headDim columns) or of P (seqKv); B1/B2: all of k or v for a batch;
        // CO1: a band of S (seqKv columns) or of o (headDim)
        uint32_t cols = t.seqKv > t.headDim ? t.seqKv : t.headDim;
        pipe.InitBuffer(qa1, 1, t.baseM * cols * sizeof(half));
        pipe.InitBuffer(qb1, 1, t.seqKv * t.headDim * sizeof(half));
        pipe.InitBuffer(qa2, 1, t.baseM * cols * sizeof(half));
        pipe.InitBuffer(qb2, 1, t.seqKv * t.headDim * sizeof(half));
        pipe.InitBuffer(qc, 1, t.baseM * cols * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t done = 0;
        uint32_t prev = 0;
        for (uint32_t band = GetBlockIdx(); band < tiling.bands; band += GetBlockNum(), ++done) {
            Scores(BandOf(tiling, band), done % SLOTS);
            CrossCoreSetFlag<2, PIPE_FIX>(S_READY);
            if (done > 0) {
                CrossCoreWaitFlag(P_READY);  // the AIVs' P of the previous band
                Output(BandOf(tiling, prev), (done - 1) % SLOTS);
            }
            prev = band;
        }
        if (done > 0) {
            CrossCoreWaitFlag(P_READY);
            Output(BandOf(tiling, prev), (done - 1) % SLOTS);
        }
    }

private:
    // rows x cols of half from GM (rows cols apart) into an L1 tensor as NZ fractals.
    __aicore__ inline void ToL1(const LocalTensor<half>& dst, const GlobalTensor<half>& src, uint32_t rows,
                                uint32_t cols)
    {
        DataCopy(dst, src, Nd2NzParams{1, uint16_t(rows), uint16_t(cols), 0, uint16_t(cols),
                                       uint16_t(Align16(rows)), 1, 0});
    }
    // rows x cols of half (q or P) from GM into L1 as NZ, then into L0A m-block by m-block.
    __aicore__ inline void LoadLeft(const GlobalTensor<half>& src, uint32_t rows, uint32_t cols)
    {
        uint32_t m16 = Align16(rows);
        LocalTensor<half> a1 = qa1.AllocTensor<half>();
        ToL1(a1, src, rows, cols);
        qa1.EnQue(a1);
        a1 = qa1.DeQue<half>();
        LocalTensor<half> a2 = qa2.AllocTensor<half>();
        for (uint32_t i = 0; i < m16 / 16; ++i) {
            LoadData(a2[i * cols * 16], a1[i * 256],
                     LoadData2DParams{0, uint8_t(cols / 16), uint16_t(m16 / 16), 0, 0, false, 0});
        }
        qa2.EnQue(a2);
        qa1.FreeTensor(a1);
    }
    // k or v of one batch (seqKv x headDim) from GM into L1 as NZ.
    __aicore__ inline LocalTensor<half> RightToL1(uint32_t batch, const GlobalTensor<half>& src)
    {
        LocalTensor<half> b1 = qb1.AllocTensor<half>();
        ToL1(b1, src[batch * tiling.seqKv * tiling.headDim], tiling.seqKv, tiling.headDim);
        qb1.EnQue(b1);
        return qb1.DeQue<half>();
    }
    __aicore__ inline void Scores(const Band& bd, uint32_t slot)
    {
        uint32_t d = tiling.headDim, n = tiling.seqKv;
        LoadLeft(qGm[(bd.batch * tiling.seqQ + bd.row0) * d], bd.rows, d);
        // k (n x d) in NZ is k^T (d x n) in L0B's ZN order: whole fractals, untransposed
        LocalTensor<half> b1 = RightToL1(bd.batch, kGm);
        LocalTensor<half> b2 = qb2.AllocTensor<half>();
        LoadData(b2, b1, LoadData2DParams{0, uint8_t(n / 16 * (d / 16)), 1, 0, 0, false, 0});
        qb2.EnQue(b2);
        qb1.FreeTensor(b1);
        Multiply(bd.rows, n, d, n, sGm[slot * tiling.baseM * n]);
    }
    __aicore__ inline void Output(const Band& bd, uint32_t slot)
    {
        uint32_t d = tiling.headDim, n = tiling.seqKv;
        LoadLeft(pGm[slot * tiling.baseM * n], bd.rows, n);
        // v (n x d) is the right operand as it is: each k-block of 16 rows transposed into ZN
        LocalTensor<half> b1 = RightToL1(bd.batch, vGm);
        LocalTensor<half> b2 = qb2.AllocTensor<half>();
        for (uint32_t kb = 0; kb < n / 16; ++kb) {
            LoadData(b2[kb * d * 16], b1[kb * 256],
                     LoadData2DParams{0, uint8_t(d / 16), uint16_t(n / 16), 0, 0, true, 0});
        }
        qb2.EnQue(b2);
        qb1.FreeTensor(b1);
        Multiply(bd.rows, d, n, d, oGm[(bd.batch * tiling.seqQ + bd.row0) * d]);
    }
    // C (rows x cols, float) = L0A x L0B, written to GM as ND rows `stride` apart.
    __aicore__ inline void Multiply(uint32_t rows, uint32_t cols, uint32_t kk, uint32_t stride,
                                    const GlobalTensor<float>& dst)
    {
        LocalTensor<half> a2 = qa2.DeQue<half>();
        LocalTensor<half> b2 = qb2.DeQue<half>();
        LocalTensor<float> c1 = qc.AllocTensor<float>();
        Mmad(c1, a2, b2, MmadParams{uint16_t(rows), uint16_t(cols), uint16_t(kk), 0, false, true});
        qc.EnQue(c1);
        qa2.FreeTensor(a2);
        qb2.FreeTensor(b2);
        c1 = qc.DeQue<float>();
        Fixpipe(dst, c1, FixpipeParamsV220{uint16_t(cols), uint16_t(rows), uint16_t(Align16(rows)), stride, false});
        qc.FreeTensor(c1);
    }

    TPipe pipe;
    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    GlobalTensor<half> qGm, kGm, vGm, pGm;
    GlobalTensor<float> oGm, sGm;
    AttentionTiling tiling;
};

class AttentionAiv {
public:
    __aicore__ inline void Init(GM_ADDR sWs, GM_ADDR pWs, const AttentionTiling& t)
    {
        tiling = t;
        core = GetBlockIdx() / GetTaskRatio();  // the AI Core this AIV belongs to
        uint32_t slotS = t.baseM * t.seqKv;
        sGm.SetGlobalBuffer((__gm__ float *)sWs + core * SLOTS * slotS, SLOTS * slotS);
        pGm.SetGlobalBuffer((__gm__ half *)pWs + core * SLOTS * slotS, SLOTS * slotS);
        uint32_t tile = t.baseM / 2 * t.seqKv;
        pipe.InitBuffer(qin, 2, tile * sizeof(float));  // two: the next band's copy-in overlaps this one
        pipe.InitBuffer(qout, 2, tile * sizeof(half));
        pipe.InitBuffer(probBuf, tile * sizeof(float));
        pipe.InitBuffer(tmpBuf, t.softmaxTmpBytes);
    }
    __aicore__ inline void Process()
    {
        uint32_t done = 0;
        for (uint32_t band = core; band < tiling.bands; band += GetBlockNum(), ++done) {
            CrossCoreWaitFlag(S_READY);
            Rows(BandOf(tiling, band).rows, done % SLOTS);
            CrossCoreSetFlag<2, PIPE_MTE3>(P_READY);
        }
    }

private:
    __aicore__ inline void Rows(uint32_t rows, uint32_t slot)
    {
        uint32_t half0 = (rows + 1) / 2;  // sub-block 0 takes the first half, rounded up
        uint32_t first = GetSubBlockIdx() == 0 ? 0 : half0;
        uint32_t mine = GetSubBlockIdx() == 0 ? half0 : rows - half0;
        if (mine == 0) {
            return;
        }
        uint32_t n = tiling.seqKv;
        uint32_t at = (slot * tiling.baseM + first) * n;
        LocalTensor<float> s = qin.AllocTensor<float>();
        DataCopy(s, sGm[at], mine * n);
        qin.EnQue(s);
        s = qin.DeQue<float>();
        Muls(s, s, tiling.scale, mine * n);
        LocalTensor<float> prob = probBuf.Get<float>();
        SoftMaxShapeInfo shape{mine, n, mine, n};
        SoftMaxTiling emptyTiling{};  // derived from the shape and the work area
        SoftMax<float>(prob, s, tmpBuf.Get<uint8_t>(), emptyTiling, shape);
        qin.FreeTensor(s);
        LocalTensor<half> p = qout.AllocTensor<half>();
        Cast(p, prob, RoundMode::CAST_RINT, mine * n);
        qout.EnQue(p);
        p = qout.DeQue<half>();
        DataCopy(pGm[at], p, mine * n);
        qout.FreeTensor(p);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, 2> qin;
    TQue<TPosition::VECOUT, 2> qout;
    TBuf<TPosition::VECCALC> probBuf, tmpBuf;
    GlobalTensor<float> sGm;
    GlobalTensor<half> pGm;
    AttentionTiling tiling;
    uint32_t core;
};

extern "C" __global__ __aicore__ void attention_fwd_mix(GM_ADDR q, GM_ADDR k, GM_ADDR v, GM_ADDR o, GM_ADDR sWs,
                                                        GM_ADDR pWs, AttentionTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        AttentionAic op;
        op.Init(q, k, v, o, sWs, pWs, tiling);
        op.Process();
    }
    if ASCEND_IS_AIV {
        AttentionAiv op;
        op.Init(sWs, pWs, tiling);
        op.Process();
    }
}
