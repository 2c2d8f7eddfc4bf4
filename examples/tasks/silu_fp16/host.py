import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 2   # fp16 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 2048      # half in/out double-buffered plus two float scratch tiles: 32 KB of UB


def launch(x):
    total = x.numel()
    if total % BLOCK_ELEMS:
        raise ValueError(f"silu_fp16 needs a length that is a multiple of {BLOCK_ELEMS}, got {total}")
    blocks = total // BLOCK_ELEMS
    core_num = min(MAX_CORES, blocks)
    tail_blocks = blocks // core_num
    y = torch.empty_like(x)
    tiling = Tiling(formerNum=blocks % core_num, formerLength=(tail_blocks + 1) * BLOCK_ELEMS,
                    tailLength=tail_blocks * BLOCK_ELEMS, tileLength=TILE_LENGTH)
    return Launch(kernel="silu_fp16", block_dim=core_num, args=[x, y, tiling], outputs=[y])
