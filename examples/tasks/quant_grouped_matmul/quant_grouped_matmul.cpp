// Grouped matmul with per-token dequantisation and GELU on a mixed kernel (the shape of MoE expert
// layers): x's rows come in groups, group g of groupList[g] consecutive rows using weight g,
//   y[rows of g] = FasterGelu((x[rows of g] @ w[g]) * scale[g] * perTokenScale[rows of g])   as half
// x int8 [m, k] (ND); w int8 [groups, k, n] in NZ (per group n / 32 column blocks, each k rows of 32
// bytes, the layout the cube reads); the product int32, exact; scale float [groups, n] per output
// column, perTokenScale float [m] per row; y half [m, n].
//
// Work is cut into blocks of baseM rows (never across groups) by singleN columns; the blocks of all
// groups are numbered in one sequence, group after group, and dealt to the AI Cores in turn (block t
// to core t % cores), so a group whose block count the cores do not divide leaves no core idle.
// Per block the AIC runs the Matmul API: each Iterate computes one baseM x baseN base block and writes
// it, int32, to the next of its AI Core's SLOTS workspace slots; the AIV side dequantises the slot in
// chunks of VEC_ROWS rows (AscendDequant by the column scales, a Mul by the row scales broadcast along
// the row, FasterGelu, a cast to half) and writes y. The compile-time knobs (host.py's defines) are the
// steps of the Ascend C guide's GroupedMatmul tuning case:
//   RATIO       1: one AIV per AI Core does all the vector work (KERNEL_TYPE_MIX_AIC_1_1);
//               2: the two AIVs take alternate chunks of each slot (KERNEL_TYPE_MIX_AIC_1_2)
//   SLOTS       workspace slots per AI Core: the AIC runs up to SLOTS base blocks ahead of the AIVs
//   BUFFER_NUM  UB buffers per vector queue: 2 lets a chunk's copies overlap its neighbours' compute
// Cross-core flags, mode 2, one per base block:
//   FLAG_READY  AIC -> its AIVs: "the next slot is written"
//   FLAG_FREE   its AIVs -> AIC: "the oldest slot is read, write it again"
#include "kernel_operator.h"
// The AIC calls the Matmul object itself (no AIV client sends it the calls).
#define ASCENDC_CUBE_ONLY
#include "lib/matmul_intf.h"

using namespace AscendC;

#ifndef RATIO
#define RATIO 2
#endif
#ifndef SLOTS
#define SLOTS 4
#endif
#ifndef BUFFER_NUM
#define BUFFER_NUM 2
#endif

constexpr uint16_t FLAG_READY = 5;
constexpr uint16_t FLAG_FREE = 3;
constexpr uint32_t VEC_ROWS = 16;     // rows of a base block per vector chunk
constexpr uint32_t MAX_BASE_N = 256;  // columns of a chunk (the UB buffers are sized for it)

using AType = MatmulType<TPosition::GM, CubeFormat::ND, int8_t>;
using BType = MatmulType<TPosition::GM, CubeFormat::NZ, int8_t>;
using CType = MatmulType<TPosition::GM, CubeFormat::ND, int32_t>;

// One block: its group, its first row in x and y, its rows, first column and columns.
struct Block {
    uint32_t group, row0, rows, col0, cols;
};

// This core's blocks in order. The AIC and the AIVs of one AI Core walk the same sequence.
class Blocks {
public:
    __aicore__ inline void Init(GM_ADDR groupList, uint32_t groups, uint32_t n, uint32_t baseM, uint32_t singleN,
                                uint32_t core, uint32_t cores)
    {
        sizes.SetGlobalBuffer((__gm__ int64_t *)groupList, groups);
        this->groups = groups;
        this->n = n;
        this->baseM = baseM;
        this->singleN = singleN;
        nBlocks = (n + singleN - 1) / singleN;
        next = core;
        step = cores;
        StartGroup(0, 0, 0);
    }
    // The next block of this core into `b`; false when there is none left.
    __aicore__ inline bool Next(Block& b)
    {
        while (group < groups && next >= first + count) {
            StartGroup(group + 1, first + count, row0 + rows);
        }
        if (group >= groups) {
            return false;
        }
        const uint32_t local = next - first;
        b.group = group;
        b.row0 = row0 + local / nBlocks * baseM;
        b.rows = row0 + rows - b.row0 < baseM ? row0 + rows - b.row0 : baseM;
        b.col0 = local % nBlocks * singleN;
        b.cols = n - b.col0 < singleN ? n - b.col0 : singleN;
        next += step;
        return true;
    }

private:
    __aicore__ inline void StartGroup(uint32_t g, uint32_t firstBlock, uint32_t firstRow)
    {
        group = g;
        first = firstBlock;
        row0 = firstRow;
        rows = g < groups ? uint32_t(sizes.GetValue(g)) : 0;
        count = (rows + baseM - 1) / baseM * nBlocks;
    }

    GlobalTensor<int64_t> sizes;
    uint32_t groups, n, baseM, singleN, nBlocks;
    uint32_t next, step;               // this core's next block number, and the cores between its blocks
    uint32_t group, first, count;      // the current group, its first block number and its block count
    uint32_t row0, rows;               // the current group's first row and its rows
};

class GroupedMatmulAic {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR groupList, GM_ADDR ws, const TCubeTiling& t,
                                uint32_t groups)
    {
        tiling = &t;
        xGm.SetGlobalBuffer((__gm__ int8_t *)x, int64_t(t.M) * t.Ka);
        wGm.SetGlobalBuffer((__gm__ int8_t *)w, int64_t(groups) * t.Kb * t.N);
        wsGm.SetGlobalBuffer((__gm__ int32_t *)ws + GetBlockIdx() * SLOTS * t.baseM * t.baseN,
                             SLOTS * t.baseM * t.baseN);
        blocks.Init(groupList, groups, t.N, t.singleCoreM, t.singleCoreN, GetBlockIdx(), GetBlockNum());
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, tiling);
    }
    __aicore__ inline void Process()
    {
        Block b;
        uint32_t written = 0;
        mm.SetOrgShape(tiling->M, tiling->N, tiling->Ka);
        while (blocks.Next(b)) {
            mm.SetSingleShape(b.rows, b.cols, tiling->Ka);
            mm.SetTensorA(xGm[int64_t(b.row0) * tiling->Ka]);
            // In NZ a column block of 32 is k rows of 32 bytes: the block's columns start col0 * k in.
            mm.SetTensorB(wGm[(int64_t(b.group) * tiling->N + b.col0) * tiling->Kb]);
            while (mm.Iterate()) {
                if (written >= SLOTS) {
                    CrossCoreWaitFlag(FLAG_FREE);  // the AIVs have read what this slot held
                }
                mm.GetTensorC(wsGm[written % SLOTS * tiling->baseM * tiling->baseN], 0, true);  // rows baseN apart
                CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);
                ++written;
            }
        }
        for (uint32_t i = 0; i < (written < SLOTS ? written : SLOTS); ++i) {
            CrossCoreWaitFlag(FLAG_FREE);  // leave no set unconsumed
        }
        mm.End();
    }

private:
    TPipe pipe;
    Matmul<AType, BType, CType, CType, CFG_MDL> mm;
    GlobalTensor<int8_t> xGm, wGm;
    GlobalTensor<int32_t> wsGm;
    Blocks blocks;
    const TCubeTiling* tiling;
};

class GroupedMatmulAiv {
public:
    __aicore__ inline void Init(GM_ADDR groupList, GM_ADDR scale, GM_ADDR perToken, GM_ADDR y, GM_ADDR ws,
                                const TCubeTiling& t, uint32_t groups)
    {
        m = t.M;
        n = t.N;
        baseM = t.baseM;
        baseN = t.baseN;
        const uint32_t core = GetBlockIdx() / GetTaskRatio();  // the AI Core this AIV belongs to
        scaleGm.SetGlobalBuffer((__gm__ float *)scale, int64_t(groups) * n);
        perTokenGm.SetGlobalBuffer((__gm__ float *)perToken, m);
        yGm.SetGlobalBuffer((__gm__ half *)y, int64_t(m) * n);
        wsGm.SetGlobalBuffer((__gm__ int32_t *)ws + core * SLOTS * baseM * baseN, SLOTS * baseM * baseN);
        blocks.Init(groupList, groups, n, t.singleCoreM, t.singleCoreN, core, GetBlockNum());
        constexpr uint32_t chunk = VEC_ROWS * MAX_BASE_N;
        pipe.InitBuffer(inQue, BUFFER_NUM, chunk * sizeof(int32_t));
        pipe.InitBuffer(outQue, BUFFER_NUM, chunk * sizeof(half));
        pipe.InitBuffer(scaleQue, BUFFER_NUM, MAX_BASE_N * sizeof(float));
        pipe.InitBuffer(tokenQue, BUFFER_NUM, VEC_ROWS * sizeof(float));
        pipe.InitBuffer(calc, 3 * chunk * sizeof(float));
        pipe.InitBuffer(tmp, 2 * chunk * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        Block b;
        uint32_t read = 0;
        uint32_t chunks = 0;  // chunks of this AI Core so far: the AIVs take them in turn
        while (blocks.Next(b)) {
            for (uint32_t c0 = 0; c0 < b.cols; c0 += baseN, ++read) {
                const uint32_t cols = b.cols - c0 < baseN ? b.cols - c0 : baseN;
                CopyScale(b.group, b.col0 + c0, cols);
                LocalTensor<float> colScale = scaleQue.DeQue<float>();
                CrossCoreWaitFlag(FLAG_READY);
                const uint32_t slot = read % SLOTS * baseM * baseN;
                for (uint32_t r = 0; r < b.rows; r += VEC_ROWS, ++chunks) {
                    if (chunks % RATIO != GetSubBlockIdx()) {
                        continue;
                    }
                    const uint32_t rows = b.rows - r < VEC_ROWS ? b.rows - r : VEC_ROWS;
                    CopyIn(slot + r * baseN, b.row0 + r, rows, cols);
                    Compute(colScale, rows, cols);
                    CopyOut(int64_t(b.row0 + r) * n + b.col0 + c0, rows, cols);
                }
                scaleQue.FreeTensor(colScale);
                CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_FREE);  // this slot's reads (MTE2) are done
            }
        }
    }

private:
    __aicore__ inline void CopyScale(uint32_t group, uint32_t col0, uint32_t cols)
    {
        LocalTensor<float> s = scaleQue.AllocTensor<float>();
        DataCopyPad(s, scaleGm[int64_t(group) * n + col0], DataCopyExtParams{1, uint32_t(cols * sizeof(float)), 0, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0});
        scaleQue.EnQue(s);
    }
    // The chunk's int32 rows (baseN apart in the slot, as the Matmul wrote them) and its row scales.
    __aicore__ inline void CopyIn(uint32_t at, uint32_t row0, uint32_t rows, uint32_t cols)
    {
        LocalTensor<int32_t> c = inQue.AllocTensor<int32_t>();
        DataCopyPad(c, wsGm[at], DataCopyExtParams{uint16_t(rows), uint32_t(cols * sizeof(int32_t)),
                                                   uint32_t((baseN - cols) * sizeof(int32_t)), 0, 0},
                    DataCopyPadExtParams<int32_t>{false, 0, 0, 0});
        inQue.EnQue(c);
        LocalTensor<float> t = tokenQue.AllocTensor<float>();
        DataCopyPad(t, perTokenGm[row0], DataCopyExtParams{1, uint32_t(rows * sizeof(float)), 0, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0});
        tokenQue.EnQue(t);
    }
    __aicore__ inline void Compute(const LocalTensor<float>& colScale, uint32_t rows, uint32_t cols)
    {
        const uint32_t size = rows * cols;  // cols is a multiple of 16 (host.py): rows are whole 32-byte blocks
        LocalTensor<int32_t> c = inQue.DeQue<int32_t>();
        LocalTensor<float> rowScale = tokenQue.DeQue<float>();
        LocalTensor<float> deq = calc.GetWithOffset<float>(size, 0);
        LocalTensor<float> wide = calc.GetWithOffset<float>(size, VEC_ROWS * MAX_BASE_N * sizeof(float));
        LocalTensor<float> act = calc.GetWithOffset<float>(size, 2 * VEC_ROWS * MAX_BASE_N * sizeof(float));
        LocalTensor<uint8_t> scratch = tmp.Get<uint8_t>();
        AscendDequant(deq, c, colScale, scratch, DequantParams{rows, cols, cols});
        const uint32_t wideShape[2] = {rows, cols};
        const uint32_t rowShape[2] = {rows, 1};
        Broadcast<float, 2, 1>(wide, rowScale, wideShape, rowShape, scratch);
        PipeBarrier<PIPE_V>();
        inQue.FreeTensor(c);
        tokenQue.FreeTensor(rowScale);
        Mul(act, deq, wide, size);
        PipeBarrier<PIPE_V>();
        FasterGelu(deq, act, scratch, size);
        PipeBarrier<PIPE_V>();
        LocalTensor<half> out = outQue.AllocTensor<half>();
        Cast(out, deq, RoundMode::CAST_NONE, size);
        outQue.EnQue(out);
    }
    __aicore__ inline void CopyOut(int64_t at, uint32_t rows, uint32_t cols)
    {
        LocalTensor<half> out = outQue.DeQue<half>();
        DataCopyPad(yGm[at], out, DataCopyExtParams{uint16_t(rows), uint32_t(cols * sizeof(half)), 0,
                                                    uint32_t((n - cols) * sizeof(half)), 0});
        outQue.FreeTensor(out);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQue, scaleQue, tokenQue;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQue;
    TBuf<TPosition::VECCALC> calc, tmp;
    GlobalTensor<float> scaleGm, perTokenGm;
    GlobalTensor<half> yGm;
    GlobalTensor<int32_t> wsGm;
    Blocks blocks;
    uint32_t m, n, baseM, baseN;
};

extern "C" __global__ __aicore__ void quant_grouped_matmul(GM_ADDR x, GM_ADDR w, GM_ADDR groupList, GM_ADDR scale,
                                                           GM_ADDR perToken, GM_ADDR y, GM_ADDR ws,
                                                           TCubeTiling tiling, uint32_t groups)
{
#if RATIO == 1
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
#else
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
#endif
    if ASCEND_IS_AIC {
        GroupedMatmulAic op;
        op.Init(x, w, groupList, ws, tiling, groups);
        op.Process();
    }
    if ASCEND_IS_AIV {
        GroupedMatmulAiv op;
        op.Init(groupList, scale, perToken, y, ws, tiling, groups);
        op.Process();
    }
}
