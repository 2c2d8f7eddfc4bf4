// c = a @ b on the cube unit with the basic API, laid out for speed: a (m x k) and b (k x n) in half,
// c in float. Each AI Core takes one singleM x singleN block of c (host.py's grid of cores) and runs
// it as base tiles of baseM x baseN, N outer, M inner. A tile's k runs in base steps of baseK, but
// GM -> L1 copies move large packets: stepKa steps of A or stepKb steps of B at once (MTE2), each
// into one of two L1 buffers, so the next packet is copied while this one is used. Each step loads
// its slice from the packet into L0A/L0B (LoadData, MTE1; two buffers each) and accumulates with
// Mmad in L0C (M); after the last step one Fixpipe writes the tile to c as ND rows (FIX).
// L2 cache splitting: with `rounds` 2 the cores cover M in two passes (each core one block of each
// half), so the B columns every core reads in the first pass are found in L2 in the second.
#include "kernel_operator.h"

using namespace AscendC;

struct MatmulBasicHpTiling {
    uint32_t m, k, n;               // a is m x k, b is k x n, c is m x n (n a multiple of 8)
    uint32_t baseM, baseN, baseK;   // the tile and the k step, multiples of 16
    uint32_t stepKa, stepKb;        // k steps a GM -> L1 copy of a, of b, moves
    uint32_t singleM, singleN;      // one core's block of c
    uint32_t perRound;              // blocks along M a pass takes (the cores: perRound x blocks along N)
    uint32_t rounds;                // passes over M
};

__aicore__ inline uint32_t Align16(uint32_t x) { return (x + 15) / 16 * 16; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

class MatmulBasicHp {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const MatmulBasicHpTiling& t)
    {
        tiling = t;
        aGm.SetGlobalBuffer((__gm__ half *)a, t.m * t.k);
        bGm.SetGlobalBuffer((__gm__ half *)b, t.k * t.n);
        cGm.SetGlobalBuffer((__gm__ float *)c, t.m * t.n);
        pipe.InitBuffer(qa1, 2, t.baseM * t.baseK * t.stepKa * sizeof(half));
        pipe.InitBuffer(qb1, 2, t.baseK * t.stepKb * t.baseN * sizeof(half));
        pipe.InitBuffer(qa2, 2, t.baseM * t.baseK * sizeof(half));
        pipe.InitBuffer(qb2, 2, t.baseK * t.baseN * sizeof(half));
        pipe.InitBuffer(qc, 1, t.baseM * t.baseN * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t blocksM = (tiling.m + tiling.singleM - 1) / tiling.singleM;
        uint32_t blocksN = (tiling.n + tiling.singleN - 1) / tiling.singleN;
        for (uint32_t round = 0; round < tiling.rounds; ++round) {
            uint32_t bm = GetBlockIdx() % tiling.perRound + round * tiling.perRound;
            uint32_t bn = GetBlockIdx() / tiling.perRound;
            if (bm < blocksM && bn < blocksN) {
                Block(bm * tiling.singleM, bn * tiling.singleN);
            }
        }
    }

private:
    __aicore__ inline void Block(uint32_t row0, uint32_t col0)
    {
        uint32_t rows = Min(tiling.singleM, tiling.m - row0);
        uint32_t cols = Min(tiling.singleN, tiling.n - col0);
        for (uint32_t n0 = col0; n0 < col0 + cols; n0 += tiling.baseN) {
            for (uint32_t m0 = row0; m0 < row0 + rows; m0 += tiling.baseM) {
                mc = Min(tiling.baseM, row0 + rows - m0);
                nc = Min(tiling.baseN, col0 + cols - n0);
                Tile(m0, n0);
            }
        }
    }
    // One tile: the first packets of a and b copied before the k loop, each next one right after the
    // step that starts (or ends) a packet, into the L1 buffer the last packet freed.
    __aicore__ inline void Tile(uint32_t m0, uint32_t n0)
    {
        uint32_t steps = (tiling.k + tiling.baseK - 1) / tiling.baseK;
        uint32_t nextA = 0, nextB = 0;  // the first k step of the next packet to copy
        CopyA(m0, nextA);
        nextA += tiling.stepKa;
        CopyB(n0, nextB);
        nextB += tiling.stepKb;
        LocalTensor<float> c1 = qc.AllocTensor<float>();
        LocalTensor<half> a1, b1;
        for (uint32_t s = 0; s < steps; ++s) {
            uint32_t sa = s % tiling.stepKa, sb = s % tiling.stepKb;
            bool lastA = sa + 1 == tiling.stepKa || s + 1 == steps;
            bool lastB = sb + 1 == tiling.stepKb || s + 1 == steps;
            if (sa == 0) a1 = qa1.DeQue<half>();
            if (sb == 0) b1 = qb1.DeQue<half>();
            kc = Min(tiling.baseK, tiling.k - s * tiling.baseK);
            Load(a1, b1, sa, sb, s);
            if (lastA) qa1.FreeTensor(a1);
            if (lastB) qb1.FreeTensor(b1);
            Compute(c1, s == 0);
            if ((s == 0 || lastB) && nextB < steps) {
                CopyB(n0, nextB);
                nextB += tiling.stepKb;
            }
            if ((s == 0 || lastA) && nextA < steps) {
                CopyA(m0, nextA);
                nextA += tiling.stepKa;
            }
        }
        qc.EnQue(c1);
        c1 = qc.DeQue<float>();
        FixpipeParamsV220 out{uint16_t(nc), uint16_t(mc), uint16_t(Align16(mc)), tiling.n, false};
        Fixpipe(cGm[m0 * tiling.n + n0], c1, out);
        qc.FreeTensor(c1);
    }
    // The packet of a starting at k step `step`: mc rows by up to stepKa * baseK columns.
    __aicore__ inline void CopyA(uint32_t m0, uint32_t step)
    {
        uint32_t k0 = step * tiling.baseK;
        CopyNz(qa1, aGm[m0 * tiling.k + k0], mc, Min(tiling.stepKa * tiling.baseK, tiling.k - k0), tiling.k);
    }
    // The packet of b starting at k step `step`: up to stepKb * baseK rows by nc columns.
    __aicore__ inline void CopyB(uint32_t n0, uint32_t step)
    {
        uint32_t k0 = step * tiling.baseK;
        CopyNz(qb1, bGm[k0 * tiling.n + n0], Min(tiling.stepKb * tiling.baseK, tiling.k - k0), nc, tiling.n);
    }
    // rows x cols of an ND matrix whose rows are `stride` elements apart, into the queue's next L1
    // buffer as NZ fractals (16-row blocks of each 16 columns, Align16(rows) rows a column block).
    template <class Que>
    __aicore__ inline void CopyNz(Que& q, const GlobalTensor<half>& src, uint32_t rows, uint32_t cols, uint32_t stride)
    {
        LocalTensor<half> t = q.template AllocTensor<half>();
        DataCopy(t, src, Nd2NzParams{1, uint16_t(rows), uint16_t(cols), 0, uint16_t(stride), uint16_t(Align16(rows)),
                                     1, 0});
        q.EnQue(t);
    }
    // Step `s`'s slices: the packets' column (a) or row (b) blocks sa * baseK / 16 on, to L0A as
    // m-block-major fractals and to L0B transposed (ZN).
    __aicore__ inline void Load(LocalTensor<half>& a1, LocalTensor<half>& b1, uint32_t sa, uint32_t sb, uint32_t s)
    {
        uint32_t m16 = Align16(mc), k16 = Align16(kc), n16 = Align16(nc);
        uint32_t kpB = Align16(Min(tiling.stepKb * tiling.baseK, tiling.k - (s - sb) * tiling.baseK));
        uint32_t aCol = sa * tiling.baseK / 16, bRow = sb * tiling.baseK / 16;
        LocalTensor<half> a2 = qa2.AllocTensor<half>();
        LocalTensor<half> b2 = qb2.AllocTensor<half>();
        for (uint32_t i = 0; i < m16 / 16; ++i) {
            LoadData(a2[i * k16 * 16], a1[(aCol * (m16 / 16) + i) * 256],
                     LoadData2DParams{0, uint8_t(k16 / 16), uint16_t(m16 / 16), 0, 0, false, 0});
        }
        for (uint32_t i = 0; i < k16 / 16; ++i) {
            LoadData(b2[i * n16 * 16], b1[(bRow + i) * 256],
                     LoadData2DParams{0, uint8_t(n16 / 16), uint16_t(kpB / 16), 0, 0, true, 0});
        }
        qa2.EnQue(a2);
        qb2.EnQue(b2);
    }
    __aicore__ inline void Compute(LocalTensor<float>& c1, bool first)
    {
        LocalTensor<half> a2 = qa2.DeQue<half>();
        LocalTensor<half> b2 = qb2.DeQue<half>();
        // the first k step starts C from zero, the others accumulate onto it
        Mmad(c1, a2, b2, MmadParams{uint16_t(mc), uint16_t(nc), uint16_t(kc), 0, false, first});
        qa2.FreeTensor(a2);
        qb2.FreeTensor(b2);
    }

    TPipe pipe;
    TQue<TPosition::A1, 2> qa1;
    TQue<TPosition::B1, 2> qb1;
    TQue<TPosition::A2, 2> qa2;
    TQue<TPosition::B2, 2> qb2;
    TQue<TPosition::CO1, 1> qc;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    MatmulBasicHpTiling tiling;
    uint32_t mc = 0, nc = 0, kc = 0;
};

extern "C" __global__ __aicore__ void matmul_basic_hp(GM_ADDR a, GM_ADDR b, GM_ADDR c, MatmulBasicHpTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    MatmulBasicHp op;
    op.Init(a, b, c, tiling);
    op.Process();
}
