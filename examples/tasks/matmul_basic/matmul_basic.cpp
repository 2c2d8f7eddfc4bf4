// c = a @ b on the cube unit with the basic API: a (m x k) and b (k x n) in half, c in float.
// Each output tile of at most baseM x baseN goes to one AI Core's cube (tiles dealt round-robin);
// the tile's k runs in steps of baseK: GM -> L1 as NZ fractals (DataCopy with Nd2NzParams, MTE2),
// L1 -> L0A/L0B (LoadData, MTE1), Mmad accumulating in L0C (M), and after the last step one
// Fixpipe writes the tile to c as ND rows (FIX). The L1 and L0 queues hold two buffers, so the
// copies of step s+1 overlap the Mmad of step s.
#include "kernel_operator.h"

using namespace AscendC;

struct MatmulBasicTiling {
    uint32_t m, k, n;               // a is m x k, b is k x n, c is m x n (n a multiple of 8)
    uint32_t baseM, baseN, baseK;   // the tile and the k step, multiples of 16
};

constexpr int32_t BUFFER_NUM = 2;

__aicore__ inline uint32_t Align16(uint32_t x) { return (x + 15) / 16 * 16; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

class MatmulBasic {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const MatmulBasicTiling& t)
    {
        tiling = t;
        aGm.SetGlobalBuffer((__gm__ half *)a, t.m * t.k);
        bGm.SetGlobalBuffer((__gm__ half *)b, t.k * t.n);
        cGm.SetGlobalBuffer((__gm__ float *)c, t.m * t.n);
        pipe.InitBuffer(qa1, BUFFER_NUM, t.baseM * t.baseK * sizeof(half));
        pipe.InitBuffer(qb1, BUFFER_NUM, t.baseK * t.baseN * sizeof(half));
        pipe.InitBuffer(qa2, BUFFER_NUM, t.baseM * t.baseK * sizeof(half));
        pipe.InitBuffer(qb2, BUFFER_NUM, t.baseK * t.baseN * sizeof(half));
        pipe.InitBuffer(qc, 1, t.baseM * t.baseN * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t tilesM = (tiling.m + tiling.baseM - 1) / tiling.baseM;
        uint32_t tilesN = (tiling.n + tiling.baseN - 1) / tiling.baseN;
        for (uint32_t tile = GetBlockIdx(); tile < tilesM * tilesN; tile += GetBlockNum()) {
            Tile(tile / tilesN * tiling.baseM, tile % tilesN * tiling.baseN);
        }
    }

private:
    __aicore__ inline void Tile(uint32_t m0, uint32_t n0)
    {
        mc = Min(tiling.baseM, tiling.m - m0);
        nc = Min(tiling.baseN, tiling.n - n0);
        LocalTensor<float> c1 = qc.AllocTensor<float>();
        for (uint32_t k0 = 0; k0 < tiling.k; k0 += tiling.baseK) {
            kc = Min(tiling.baseK, tiling.k - k0);
            CopyIn(m0, n0, k0);
            Split();
            Compute(c1, k0 == 0);
        }
        qc.EnQue(c1);
        c1 = qc.DeQue<float>();
        FixpipeParamsV220 out{uint16_t(nc), uint16_t(mc), uint16_t(Align16(mc)), tiling.n, false};
        Fixpipe(cGm[m0 * tiling.n + n0], c1, out);
        qc.FreeTensor(c1);
    }
    __aicore__ inline void CopyIn(uint32_t m0, uint32_t n0, uint32_t k0)
    {
        LocalTensor<half> a1 = qa1.AllocTensor<half>();
        LocalTensor<half> b1 = qb1.AllocTensor<half>();
        DataCopy(a1, aGm[m0 * tiling.k + k0], Nd2NzParams{1, uint16_t(mc), uint16_t(kc), 0, uint16_t(tiling.k),
                                                            uint16_t(Align16(mc)), 1, 0});
        DataCopy(b1, bGm[k0 * tiling.n + n0], Nd2NzParams{1, uint16_t(kc), uint16_t(nc), 0, uint16_t(tiling.n),
                                                            uint16_t(Align16(kc)), 1, 0});
        qa1.EnQue(a1);
        qb1.EnQue(b1);
    }
    __aicore__ inline void Split()
    {
        uint32_t m16 = Align16(mc), k16 = Align16(kc), n16 = Align16(nc);
        LocalTensor<half> a1 = qa1.DeQue<half>();
        LocalTensor<half> b1 = qb1.DeQue<half>();
        LocalTensor<half> a2 = qa2.AllocTensor<half>();
        LocalTensor<half> b2 = qb2.AllocTensor<half>();
        for (uint32_t i = 0; i < m16 / 16; ++i) {  // A: m-block-major fractals, k along each
            LoadData(a2[i * k16 * 16], a1[i * 256], LoadData2DParams{0, uint8_t(k16 / 16), uint16_t(m16 / 16),
                                                                     0, 0, false, 0});
        }
        for (uint32_t i = 0; i < k16 / 16; ++i) {  // B: k-block-major, each fractal transposed (ZN)
            LoadData(b2[i * n16 * 16], b1[i * 256], LoadData2DParams{0, uint8_t(n16 / 16), uint16_t(k16 / 16),
                                                                     0, 0, true, 0});
        }
        qa2.EnQue(a2);
        qb2.EnQue(b2);
        qa1.FreeTensor(a1);
        qb1.FreeTensor(b1);
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
    TQue<TPosition::A1, BUFFER_NUM> qa1;
    TQue<TPosition::B1, BUFFER_NUM> qb1;
    TQue<TPosition::A2, BUFFER_NUM> qa2;
    TQue<TPosition::B2, BUFFER_NUM> qb2;
    TQue<TPosition::CO1, 1> qc;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    MatmulBasicTiling tiling;
    uint32_t mc = 0, nc = 0, kc = 0;
};

extern "C" __global__ __aicore__ void matmul_basic(GM_ADDR a, GM_ADDR b, GM_ADDR c, MatmulBasicTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    MatmulBasic op;
    op.Init(a, b, c, tiling);
    op.Process();
}
