import torch

from sage_npu.npu_eval import Launch, Tiling

BASE_M, BASE_N, BASE_K = 128, 256, 64  # L0A 16 KB, L0B 32 KB a buffer (two each), L0C 128 KB
STEP_KA, STEP_KB = 8, 4                # k steps a GM -> L1 copy moves: 128 KB packets, two of a and two of b in L1
SPLIT_M, SPLIT_N = 4, 6                # the cores' grid over c: 24 blocks, one an AI Core
L2_ROUNDS = 1                          # passes over M (2: L2 cache splitting, each core a block of each half)


def round_up(x, a):
    return (x + a - 1) // a * a


def ceil_div(x, a):
    return (x + a - 1) // a


def launch(a, b):
    m, k = a.shape
    n = b.shape[1]
    if n % 8:
        raise ValueError(f"matmul_basic_hp writes whole 32-byte rows of c: n must be a multiple of 8, got {n}")
    single_m = round_up(ceil_div(m, SPLIT_M * L2_ROUNDS), 16)
    single_n = round_up(ceil_div(n, SPLIT_N), BASE_N)  # whole base tiles: offsets along N 512-byte aligned
    blocks_m = ceil_div(m, single_m)
    per_round = ceil_div(blocks_m, L2_ROUNDS)
    c = torch.empty(m, n, dtype=torch.float32)
    tiling = Tiling(m=m, k=k, n=n, baseM=BASE_M, baseN=BASE_N, baseK=BASE_K, stepKa=STEP_KA, stepKb=STEP_KB,
                    singleM=single_m, singleN=single_n, perRound=per_round, rounds=ceil_div(blocks_m, per_round))
    return Launch(kernel="matmul_basic_hp", block_dim=per_round * ceil_div(n, single_n), args=[a, b, c, tiling],
                  outputs=[c])
