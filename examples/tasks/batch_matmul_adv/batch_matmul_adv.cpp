// C[b] = A[b] x B[b] for b < batch with the Matmul high-level API's IterateBatch: A [batch, M, K]
// and B [batch, K, N] half, C [batch, M, N] float, each batch's matrices one after another (the
// NORMAL layout). Each core takes BatchNum consecutive batches; the last core may take fewer.
#include "kernel_operator.h"
// Cube only (no vector work): the kernel runs on AIC cores, one per block (with no type declared
// a Matmul kernel is MIX, its work issued from two AIVs per AI Core).
#define ASCENDC_CUBE_ONLY
#include "lib/matmul_intf.h"

using AType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NORMAL>;
using BType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NORMAL>;
using CType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float, false, LayoutMode::NORMAL>;

extern "C" __global__ __aicore__ void batch_matmul_adv(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t batch,
                                                       TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::Matmul<AType, BType, CType> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);

    const uint32_t first = AscendC::GetBlockIdx() * tiling.BatchNum;
    const uint32_t count = batch - first < uint32_t(tiling.BatchNum) ? batch - first : tiling.BatchNum;
    const int64_t sizeA = int64_t(tiling.M) * tiling.Ka, sizeB = int64_t(tiling.Kb) * tiling.N;
    const int64_t sizeC = int64_t(tiling.M) * tiling.N;
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a + first * sizeA, count * sizeA);
    bGm.SetGlobalBuffer((__gm__ half *)b + first * sizeB, count * sizeB);
    cGm.SetGlobalBuffer((__gm__ float *)c + first * sizeC, count * sizeC);

    mm.SetTensorA(aGm, false);
    mm.SetTensorB(bGm, false);
    mm.IterateBatch(cGm, count, count, false);
    mm.End();
}
