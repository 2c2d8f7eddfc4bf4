import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x):
    y = torch.empty_like(x)
    work = torch.empty_like(x)
    return Launch(kernel="swap_blocks", block_dim=8, args=[x, work, y, Tiling(per=x.numel() // 8)], outputs=[y])
