import torch

from sage_npu.npu_eval import Launch, Tiling

MAX_CORES = 4
SPLIT_N = 1     # cores along N; MAX_CORES // SPLIT_N split M (SPLIT_N 1: each core takes whole rows of C)
ALIGN_N = 1     # each core's share of N rounded up to this many elements (256 halves: 512-byte aligned offsets)
BASE_M, BASE_N, BASE_K = 64, 128, 64   # half: L0A 8 KB, L0B 16 KB, L0C 32 KB per base block
STEP_K = 2                             # base K slices per L1 load; A1/B1 hold two loads (double buffer)


def round_up(x, a):
    return (x + a - 1) // a * a


def ceil_div(x, a):
    return (x + a - 1) // a


def launch(a, b):
    m, k = a.shape
    n = b.shape[1]
    split_m = min(MAX_CORES // SPLIT_N, ceil_div(m, 16))
    single_m = round_up(ceil_div(m, split_m), 16)
    single_n = min(n, round_up(ceil_div(n, SPLIT_N), ALIGN_N))
    # The block count after rounding: the last block of each axis may be a tail, or the rounding may leave one
    # block fewer than asked for.
    cores = ceil_div(m, single_m) * ceil_div(n, single_n)
    c = torch.empty(m, n, dtype=torch.float32)
    tiling = Tiling(type="TCubeTiling", usedCoreNum=cores, M=m, N=n, Ka=k, Kb=k, singleCoreM=single_m,
                    singleCoreN=single_n, singleCoreK=k, baseM=min(BASE_M, single_m),
                    baseN=min(BASE_N, round_up(single_n, 16)), baseK=BASE_K,
                    depthA1=2 * STEP_K, depthB1=2 * STEP_K, stepM=1, stepN=1, stepKa=STEP_K, stepKb=STEP_K,
                    dbL0A=2, dbL0B=2, dbL0C=1, isBias=0, iterateOrder=0)
    # The cube sums over K in order in float; torch's float matmul sums in another order, so results
    # near zero differ in their last bits: compare at fp16's threshold, the inputs' precision.
    return Launch(kernel="matmul_adv", block_dim=cores, args=[a, b, c, tiling], outputs=[c], tolerance=2.0**-10)
