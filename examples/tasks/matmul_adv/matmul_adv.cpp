// C = A x B with the Matmul high-level API: A [M, K] and B [K, N] half, C [M, N] float (the cube
// accumulates in float). Each core takes a singleCoreM x singleCoreN block of C (host.py splits M, and
// N too when SPLIT_N > 1); a last block along M or N may be smaller, which SetTail tells the Matmul object.
#include "kernel_operator.h"
// Cube only (no vector work): the kernel runs on AIC cores, one per block (with no type declared
// a Matmul kernel is MIX, its work issued from two AIVs per AI Core).
#define ASCENDC_CUBE_ONLY
#include "lib/matmul_intf.h"

using AType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

extern "C" __global__ __aicore__ void matmul_adv(GM_ADDR a, GM_ADDR b, GM_ADDR c, TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::Matmul<AType, BType, CType> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);

    // Blocks run down M first: block i takes C's block (i % mBlocks, i / mBlocks).
    const int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    const int32_t row0 = AscendC::GetBlockIdx() % mBlocks * tiling.singleCoreM;
    const int32_t col0 = AscendC::GetBlockIdx() / mBlocks * tiling.singleCoreN;
    const int32_t rows = tiling.M - row0 < tiling.singleCoreM ? tiling.M - row0 : tiling.singleCoreM;
    const int32_t cols = tiling.N - col0 < tiling.singleCoreN ? tiling.N - col0 : tiling.singleCoreN;
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> cGm;
    // B's and C's rows stay N long (the tiling's N is their row stride): the block starts col0 into the first row.
    aGm.SetGlobalBuffer((__gm__ half *)a + int64_t(row0) * tiling.Ka, int64_t(rows) * tiling.Ka);
    bGm.SetGlobalBuffer((__gm__ half *)b + col0, int64_t(tiling.Kb - 1) * tiling.N + cols);
    cGm.SetGlobalBuffer((__gm__ float *)c + int64_t(row0) * tiling.N + col0, int64_t(rows - 1) * tiling.N + cols);

    if (rows < tiling.singleCoreM || cols < tiling.singleCoreN) {
        mm.SetTail(rows, cols);
    }
    mm.SetTensorA(aGm, false);
    mm.SetTensorB(bGm, false);
    mm.IterateAll(cGm);
    mm.End();
}
