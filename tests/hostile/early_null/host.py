import torch

from sage_npu.npu_eval import Launch


def launch(x):
    z = torch.empty_like(x)
    return Launch(kernel="early_null", block_dim=1, args=[x, z, x.numel()], outputs=[z])
