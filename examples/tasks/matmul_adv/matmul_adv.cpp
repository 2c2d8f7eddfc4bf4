// C = A x B with the Matmul high-level API: A [M, K] and B [K, N] half, C [M, N] float (the cube
// accumulates in float). Each core takes singleCoreM rows of C (the host splits M only); the last
// core's rows may be fewer, which SetTail tells the Matmul object.
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

    const int32_t row0 = AscendC::GetBlockIdx() * tiling.singleCoreM;
    const int32_t rows = tiling.M - row0 < tiling.singleCoreM ? tiling.M - row0 : tiling.singleCoreM;
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a + int64_t(row0) * tiling.Ka, int64_t(rows) * tiling.Ka);
    bGm.SetGlobalBuffer((__gm__ half *)b, int64_t(tiling.Kb) * tiling.N);
    cGm.SetGlobalBuffer((__gm__ float *)c + int64_t(row0) * tiling.N, int64_t(rows) * tiling.N);

    if (rows < tiling.singleCoreM) {
        mm.SetTail(rows, tiling.singleCoreN);
    }
    mm.SetTensorA(aGm, false);
    mm.SetTensorB(bGm, false);
    mm.IterateAll(cGm);
    mm.End();
}
