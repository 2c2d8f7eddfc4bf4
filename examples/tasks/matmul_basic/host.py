import torch

from sage_npu.npu_eval import Launch, Tiling

BASE_M, BASE_N, BASE_K = 128, 128, 64  # L0A/L0B 16 KB a buffer, L0C 64 KB: both fit twice
CUBE_CORES = 24                          # the 910B's AI Cores (one cube core each)


def launch(a, b):
    m, k = a.shape
    n = b.shape[1]
    if n % 8:
        raise ValueError(f"matmul_basic writes whole 32-byte rows of c: n must be a multiple of 8, got {n}")
    tiles = -(-m // BASE_M) * -(-n // BASE_N)
    c = torch.empty(m, n, dtype=torch.float32)
    tiling = Tiling(m=m, k=k, n=n, baseM=BASE_M, baseN=BASE_N, baseK=BASE_K)
    return Launch(kernel="matmul_basic", block_dim=min(CUBE_CORES, tiles), args=[a, b, c, tiling], outputs=[c])
