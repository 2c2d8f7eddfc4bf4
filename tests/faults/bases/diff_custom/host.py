import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x):
    n = x.numel() - 16  # x carries one extra 32-byte block past the last difference
    z = torch.empty(n, dtype=x.dtype)
    return Launch(kernel="diff_custom", block_dim=4, args=[x, z, Tiling(totalLength=n)], outputs=[z])
