import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4   # fp32 elements per 32-byte block: the DataCopy granule
MAX_CORES = 2
TILE_LENGTH = 256


def launch(x, y):
    total = x.numel()
    if total % BLOCK_ELEMS:
        raise ValueError(f"vadd_naive needs a length that is a multiple of {BLOCK_ELEMS}, got {total}")
    blocks = total // BLOCK_ELEMS
    core_num = min(MAX_CORES, blocks)
    former_num = blocks % core_num
    tail_blocks = blocks // core_num
    z = torch.empty_like(x)
    tiling = Tiling(
        formerNum=former_num,
        formerLength=(tail_blocks + 1) * BLOCK_ELEMS,
        tailLength=tail_blocks * BLOCK_ELEMS,
        tileLength=TILE_LENGTH,
    )
    return Launch(kernel="vadd_naive", block_dim=core_num, args=[x, y, z, tiling], outputs=[z])
