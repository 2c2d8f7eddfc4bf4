import torch

from sage_npu.npu_eval import Launch, Tiling

BASE_M = 32        # rows per band: 16 per AIV
MAX_AI_CORES = 4   # AI Cores (each one AIC and two AIVs)
SLOTS = 2          # workspace bands per AI Core (the kernel's ping-pong)


def _ceil_div(a, b):
    return (a + b - 1) // b


def launch(a, b):
    m, k = a.shape
    n = b.shape[1]
    if n % 8 or k > 256 or n > 128:
        raise ValueError(f"matmul_relu_mix needs n a multiple of 8, k <= 256 and n <= 128, got k={k}, n={n}")
    bands = _ceil_div(m, BASE_M)
    cores = min(MAX_AI_CORES, bands)
    n16 = _ceil_div(n, 16) * 16
    ws = torch.zeros(cores * SLOTS * BASE_M * n16, dtype=torch.float32)
    c = torch.empty(m, n, dtype=torch.float32)
    tiling = Tiling(m=m, k=k, n=n, baseM=BASE_M, bands=bands)
    # block_dim of a mixed kernel counts AI Cores: the launch runs `cores` AICs and 2 * `cores` AIVs
    return Launch(kernel="matmul_relu_mix", block_dim=cores, args=[a, b, c, ws, tiling], outputs=[c])
