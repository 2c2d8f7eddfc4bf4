import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x, y):
    z = torch.empty_like(x)
    return Launch(kernel="fma_custom", block_dim=8, args=[x, y, z, Tiling(totalLength=x.numel(), tileLength=256)],
                  outputs=[z])
