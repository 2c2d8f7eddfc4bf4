import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4   # fp32 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 2048      # a multiple of 256: the compare mask (one bit each) is whole 32-byte blocks


def launch(x, model):
    total = x.numel()
    if total % BLOCK_ELEMS:
        raise ValueError(f"threshold_select needs a length that is a multiple of {BLOCK_ELEMS}, got {total}")
    blocks = total // BLOCK_ELEMS
    core_num = min(MAX_CORES, blocks)
    tail_blocks = blocks // core_num
    y = torch.empty_like(x)
    tiling = Tiling(formerNum=blocks % core_num, formerLength=(tail_blocks + 1) * BLOCK_ELEMS,
                    tailLength=tail_blocks * BLOCK_ELEMS, tileLength=TILE_LENGTH,
                    threshold=float(model.threshold), value=float(model.value))
    return Launch(kernel="threshold_select", block_dim=core_num, args=[x, y, tiling], outputs=[y])
