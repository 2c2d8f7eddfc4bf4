import torch

from sage_npu.npu_eval import Launch, Tiling

MAX_CORES = 4
BASE_M, BASE_N, BASE_K = 64, 128, 64   # half: L0A 8 KB, L0B 16 KB, L0C 32 KB per base block
STEP_K = 2                             # base K slices per L1 load; A1/B1 hold two loads (double buffer)


def round_up(x, a):
    return (x + a - 1) // a * a


def launch(a, b):
    batch, m, k = a.shape
    n = b.shape[2]
    per_core = (batch + MAX_CORES - 1) // MAX_CORES
    cores = (batch + per_core - 1) // per_core
    c = torch.empty(batch, m, n, dtype=torch.float32)
    tiling = Tiling(type="TCubeTiling", usedCoreNum=cores, M=m, N=n, Ka=k, Kb=k, singleCoreM=m, singleCoreN=n,
                    singleCoreK=k, baseM=min(BASE_M, round_up(m, 16)), baseN=min(BASE_N, round_up(n, 16)),
                    baseK=BASE_K, depthA1=2 * STEP_K, depthB1=2 * STEP_K, stepM=1, stepN=1, stepKa=STEP_K,
                    stepKb=STEP_K, dbL0A=2, dbL0B=2, dbL0C=1, isBias=0, iterateOrder=0, BatchNum=per_core)
    # The cube sums over K in order in float; torch sums in another order, so results near zero
    # differ in their last bits: compare at fp16's threshold, the inputs' precision.
    return Launch(kernel="batch_matmul_adv", block_dim=cores, args=[a, b, c, batch, tiling], outputs=[c],
                  tolerance=2.0**-10)
