// c = relu(a @ b) on a mixed kernel: each AI Core's cube core (AIC) multiplies a band of baseM
// rows of a (half) by b (half) into float with the basic cube API and hands the band to its two
// vector cores (AIV) through a GM workspace; each AIV applies ReLU to half of the band's rows and
// writes them to c. Two workspace slots per AI Core let the AIC compute band i+1 while the AIVs
// work on band i; cross-core flags (mode 2) order the hand-over both ways:
//   flag 0: AIC -> AIVs, "band in slot i % 2 is ready"
//   flag 1: both AIVs -> AIC, "slot i % 2 is free again"
#include "kernel_operator.h"

using namespace AscendC;

struct MatmulReluTiling {
    uint32_t m, k, n;     // a is m x k, b is k x n, c is m x n (n a multiple of 8: whole 32-byte float rows)
    uint32_t baseM;       // rows per band, a multiple of 16
    uint32_t bands;       // ceil(m / baseM), dealt to the AI Cores round-robin
};

constexpr uint32_t SLOTS = 2;
constexpr uint16_t FLAG_READY = 0;
constexpr uint16_t FLAG_FREE = 1;

__aicore__ inline uint32_t Align16(uint32_t x) { return (x + 15) / 16 * 16; }

class MatmulReluAic {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR ws, const MatmulReluTiling& t)
    {
        tiling = t;
        k16 = Align16(t.k);
        n16 = Align16(t.n);
        aGm.SetGlobalBuffer((__gm__ half *)a, t.m * t.k);
        bGm.SetGlobalBuffer((__gm__ half *)b, t.k * t.n);
        wsGm.SetGlobalBuffer((__gm__ float *)ws + GetBlockIdx() * SLOTS * t.baseM * n16, SLOTS * t.baseM * n16);
        pipe.InitBuffer(qa1, 1, t.baseM * k16 * sizeof(half));
        pipe.InitBuffer(qb1, 1, k16 * n16 * sizeof(half));
        pipe.InitBuffer(qa2, 1, t.baseM * k16 * sizeof(half));
        pipe.InitBuffer(qb2, 1, k16 * n16 * sizeof(half));
        pipe.InitBuffer(qc, 1, t.baseM * n16 * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LoadB();
        uint32_t done = 0;
        for (uint32_t band = GetBlockIdx(); band < tiling.bands; band += GetBlockNum(), ++done) {
            if (done >= SLOTS) {
                CrossCoreWaitFlag(FLAG_FREE);  // the AIVs have read this slot's previous band
            }
            Band(band, done % SLOTS);
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);
        }
        for (uint32_t i = 0; i < (done < SLOTS ? done : SLOTS); ++i) {
            CrossCoreWaitFlag(FLAG_FREE);  // leave no set unconsumed
        }
        qb2.FreeTensor(b2);
    }

private:
    __aicore__ inline void LoadB()
    {
        LocalTensor<half> b1 = qb1.AllocTensor<half>();
        DataCopy(b1, bGm, Nd2NzParams{1, uint16_t(tiling.k), uint16_t(tiling.n), 0, uint16_t(tiling.n),
                                       uint16_t(k16), 1, 0});
        qb1.EnQue(b1);
        b1 = qb1.DeQue<half>();
        b2 = qb2.AllocTensor<half>();
        for (uint32_t kb = 0; kb < k16 / 16; ++kb) {
            LoadData(b2[kb * n16 * 16], b1[kb * 256],
                     LoadData2DParams{0, uint8_t(n16 / 16), uint16_t(k16 / 16), 0, 0, true, 0});
        }
        qb2.EnQue(b2);
        qb1.FreeTensor(b1);
        b2 = qb2.DeQue<half>();
    }
    __aicore__ inline void Band(uint32_t band, uint32_t slot)
    {
        uint32_t row0 = band * tiling.baseM;
        uint32_t rows = tiling.m - row0 < tiling.baseM ? tiling.m - row0 : tiling.baseM;
        uint32_t m16 = Align16(rows);
        LocalTensor<half> a1 = qa1.AllocTensor<half>();
        DataCopy(a1, aGm[row0 * tiling.k], Nd2NzParams{1, uint16_t(rows), uint16_t(tiling.k), 0,
                                                       uint16_t(tiling.k), uint16_t(m16), 1, 0});
        qa1.EnQue(a1);
        a1 = qa1.DeQue<half>();
        LocalTensor<half> a2 = qa2.AllocTensor<half>();
        for (uint32_t i = 0; i < m16 / 16; ++i) {
            LoadData(a2[i * k16 * 16], a1[i * 256],
                     LoadData2DParams{0, uint8_t(k16 / 16), uint16_t(m16 / 16), 0, 0, false, 0});
        }
        qa2.EnQue(a2);
        qa1.FreeTensor(a1);
        a2 = qa2.DeQue<half>();
        LocalTensor<float> c1 = qc.AllocTensor<float>();
        Mmad(c1, a2, b2, MmadParams{uint16_t(rows), uint16_t(tiling.n), uint16_t(tiling.k), 0, false, true});
        qc.EnQue(c1);
        qa2.FreeTensor(a2);
        c1 = qc.DeQue<float>();
        FixpipeParamsV220 fp{uint16_t(n16), uint16_t(rows), uint16_t(m16), n16, false};
        Fixpipe(wsGm[slot * tiling.baseM * n16], c1, fp);
        qc.FreeTensor(c1);
    }

    TPipe pipe;
    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> wsGm;
    LocalTensor<half> b2;
    MatmulReluTiling tiling;
    uint32_t k16, n16;
};

class MatmulReluAiv {
public:
    __aicore__ inline void Init(GM_ADDR c, GM_ADDR ws, const MatmulReluTiling& t)
    {
        tiling = t;
        n16 = Align16(t.n);
        core = GetBlockIdx() / GetTaskRatio();  // the AI Core this AIV belongs to
        cGm.SetGlobalBuffer((__gm__ float *)c, t.m * t.n);
        wsGm.SetGlobalBuffer((__gm__ float *)ws + core * SLOTS * t.baseM * n16, SLOTS * t.baseM * n16);
        pipe.InitBuffer(qin, 2, t.baseM / 2 * n16 * sizeof(float));
        pipe.InitBuffer(qout, 2, t.baseM / 2 * n16 * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t done = 0;
        for (uint32_t band = core; band < tiling.bands; band += GetBlockNum(), ++done) {
            CrossCoreWaitFlag(FLAG_READY);
            Rows(band, done % SLOTS);
            CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_FREE);
        }
    }

private:
    __aicore__ inline void Rows(uint32_t band, uint32_t slot)
    {
        uint32_t row0 = band * tiling.baseM;
        uint32_t rows = tiling.m - row0 < tiling.baseM ? tiling.m - row0 : tiling.baseM;
        uint32_t half0 = (rows + 1) / 2;  // sub-block 0 takes the first half, rounded up
        uint32_t first = GetSubBlockIdx() == 0 ? 0 : half0;
        uint32_t mine = GetSubBlockIdx() == 0 ? half0 : rows - half0;
        if (mine == 0) {
            return;
        }
        LocalTensor<float> x = qin.AllocTensor<float>();
        DataCopy(x, wsGm[(slot * tiling.baseM + first) * n16], mine * n16);
        qin.EnQue(x);
        x = qin.DeQue<float>();
        LocalTensor<float> y = qout.AllocTensor<float>();
        Relu(y, x, mine * n16);
        qout.EnQue(y);
        qin.FreeTensor(x);
        y = qout.DeQue<float>();
        DataCopyExtParams out{uint16_t(mine), uint32_t(tiling.n * sizeof(float)),
                              uint32_t((n16 - tiling.n) * sizeof(float) / 32), 0, 0};
        DataCopyPad(cGm[(row0 + first) * tiling.n], y, out);
        qout.FreeTensor(y);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, 2> qin;
    TQue<TPosition::VECOUT, 2> qout;
    GlobalTensor<float> cGm, wsGm;
    MatmulReluTiling tiling;
    uint32_t n16, core;
};

extern "C" __global__ __aicore__ void matmul_relu_mix(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws,
                                                      MatmulReluTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        MatmulReluAic op;
        op.Init(a, b, ws, tiling);
        op.Process();
    }
    if ASCEND_IS_AIV {
        MatmulReluAiv op;
        op.Init(c, ws, tiling);
        op.Process();
    }
}
