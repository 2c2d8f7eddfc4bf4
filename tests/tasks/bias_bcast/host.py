import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x, b, s):
    rows, cols = x.shape
    y = torch.empty_like(x)
    pitch = (cols + 7) // 8 * 8
    return Launch(kernel="bias_bcast", block_dim=1, args=[x, b, s, y, Tiling(rows=rows, cols=cols, pitch=pitch)],
                  outputs=[y])
