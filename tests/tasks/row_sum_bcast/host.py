import torch

from sage_npu.npu_eval import Launch, Tiling


def launch(x):
    rows, cols = x.shape
    if rows > 64:
        raise ValueError(f"row_sum_bcast keeps at most 64 row sums in UB, got {rows} rows")
    y = torch.empty_like(x)
    pitch = (cols + 7) // 8 * 8
    return Launch(kernel="row_sum_bcast", block_dim=1, args=[x, y, Tiling(rows=rows, cols=cols, pitch=pitch)],
                  outputs=[y])
