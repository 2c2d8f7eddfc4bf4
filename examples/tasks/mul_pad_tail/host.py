import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 2   # fp16 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 2048      # 4 KB per buffer


def _ceil_div(a, b):
    return (a + b - 1) // b


def launch(x, y):
    total = x.numel()
    block_length = _ceil_div(_ceil_div(total, MAX_CORES), BLOCK_ELEMS) * BLOCK_ELEMS
    core_num = _ceil_div(total, block_length)   # no core left without work
    z = torch.empty_like(x)
    tiling = Tiling(totalLength=total, blockLength=block_length, tileLength=min(TILE_LENGTH, block_length))
    return Launch(kernel="mul_pad_tail", block_dim=core_num, args=[x, y, z, tiling], outputs=[z])
