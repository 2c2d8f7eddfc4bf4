import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4   # fp32 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 2048      # 8 KB per buffer
GELU_MIN_TMP = 3 * 256  # GetGeluMinTmpSize: 3 repeats of 256 bytes, whatever the shape


def _ceil_div(a, b):
    return (a + b - 1) // b


def launch(x):
    total = x.numel()
    block_length = _ceil_div(_ceil_div(total, MAX_CORES), BLOCK_ELEMS) * BLOCK_ELEMS
    core_num = _ceil_div(total, block_length)
    tile_length = min(TILE_LENGTH, block_length)
    # GetGeluMaxTmpSize for one tile (3 floats per element) lets Gelu run each tile in one pass.
    tmp_bytes = max(GELU_MIN_TMP, 3 * tile_length * 4)
    y = torch.empty_like(x)
    tiling = Tiling(totalLength=total, blockLength=block_length, tileLength=tile_length, tmpBytes=tmp_bytes)
    return Launch(kernel="gelu_adv", block_dim=core_num, args=[x, y, tiling], outputs=[y])
