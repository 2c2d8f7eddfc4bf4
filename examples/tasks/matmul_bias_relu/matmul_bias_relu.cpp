// C = ReLU(A x B + bias), fused: the Matmul object computes one baseM x N block of A x B + bias
// per Iterate (half inputs, float accumulation and bias), GetTensorC puts it in the UB, the
// vector unit applies ReLU and copies the rows out. Each core takes singleCoreM rows of C; N is
// one base block (the host keeps N <= 256 and a multiple of 16, so a block's rows are N apart).
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using AType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = AscendC::MatmulType<AscendC::TPosition::VECIN, CubeFormat::ND, float>;
using BiasType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

extern "C" __global__ __aicore__ void matmul_bias_relu(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                       TCubeTiling tiling)
{
    // One AIC and one AIV per AI Core: the AIC serves the AIV's Matmul requests (REGIST_MATMUL_OBJ
    // returns there), the AIV runs the rest.
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
    AscendC::TPipe pipe;
    AscendC::Matmul<AType, BType, CType, BiasType> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);

    const int32_t row0 = AscendC::GetBlockIdx() * tiling.singleCoreM;
    const int32_t rows = tiling.M - row0 < tiling.singleCoreM ? tiling.M - row0 : tiling.singleCoreM;
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> biasGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a + int64_t(row0) * tiling.Ka, int64_t(rows) * tiling.Ka);
    bGm.SetGlobalBuffer((__gm__ half *)b, int64_t(tiling.Kb) * tiling.N);
    biasGm.SetGlobalBuffer((__gm__ float *)bias, tiling.N);
    cGm.SetGlobalBuffer((__gm__ float *)c + int64_t(row0) * tiling.N, int64_t(rows) * tiling.N);

    AscendC::TQue<AscendC::TPosition::VECIN, 2> mmOut;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> reluOut;
    pipe.InitBuffer(mmOut, 2, tiling.baseM * tiling.baseN * sizeof(float));
    pipe.InitBuffer(reluOut, 2, tiling.baseM * tiling.baseN * sizeof(float));

    if (rows < tiling.singleCoreM) {
        mm.SetTail(rows, tiling.singleCoreN);
    }
    mm.SetTensorA(aGm, false);
    mm.SetTensorB(bGm, false);
    mm.SetBias(biasGm);
    for (int32_t round = 0; mm.Iterate(); ++round) {
        const int32_t left = rows - round * tiling.baseM;
        const uint32_t blockRows = left < tiling.baseM ? left : tiling.baseM;
        AscendC::LocalTensor<float> block = mmOut.AllocTensor<float>();
        mm.GetTensorC(block);  // blockRows x N, rows baseN (= N) apart
        mmOut.EnQue(block);
        block = mmOut.DeQue<float>();
        AscendC::LocalTensor<float> y = reluOut.AllocTensor<float>();
        AscendC::Relu(y, block, blockRows * tiling.baseN);
        reluOut.EnQue(y);
        mmOut.FreeTensor(block);
        y = reluOut.DeQue<float>();
        AscendC::DataCopy(cGm[int64_t(round) * tiling.baseM * tiling.N], y, blockRows * tiling.N);
        reluOut.FreeTensor(y);
    }
    mm.End();
}
