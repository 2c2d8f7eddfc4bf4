import torch

from sage_npu.npu_eval import Launch, Tiling

MAX_CORES = 4
# half: L0A 4 KB, L0B baseK x N x 2 <= 32 KB, L0C baseM x N x 4 <= 32 KB; the UB holds two C blocks per queue
BASE_M, BASE_K = 32, 64


def round_up(x, a):
    return (x + a - 1) // a * a


def launch(a, b, bias):
    m, k = a.shape
    n = b.shape[1]
    if n % 16 or n > 256:
        raise ValueError(f"matmul_bias_relu keeps N in one base block: a multiple of 16 up to 256, got {n}")
    cores = min(MAX_CORES, (m + 15) // 16)
    single_m = round_up((m + cores - 1) // cores, 16)
    cores = (m + single_m - 1) // single_m
    c = torch.empty(m, n, dtype=torch.float32)
    tiling = Tiling(type="TCubeTiling", usedCoreNum=cores, M=m, N=n, Ka=k, Kb=k, singleCoreM=single_m,
                    singleCoreN=n, singleCoreK=k, baseM=min(BASE_M, single_m), baseN=n, baseK=BASE_K,
                    depthA1=2, depthB1=2, stepM=1, stepN=1, stepKa=1, stepKb=1, dbL0A=2, dbL0B=2, dbL0C=1,
                    isBias=1, iterateOrder=0)
    # The cube sums over K in order in float, torch in another order: compare at fp16's threshold.
    return Launch(kernel="matmul_bias_relu", block_dim=cores, args=[a, b, bias, c, tiling], outputs=[c],
                  tolerance=2.0**-10)
