import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x, y):
    z = torch.empty_like(x)
    return Launch(
        kernel="perf_scalar_loop",
        block_dim=48,
        args=[x, y, z, Tiling(totalLength=x.numel())],
        outputs=[z],
    )
