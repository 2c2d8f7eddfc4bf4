import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 2   # fp16 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 4096


def launch(x, model):
    total = x.numel()
    if total % BLOCK_ELEMS:
        raise ValueError(f"leaky_relu needs a length that is a multiple of {BLOCK_ELEMS}, got {total}")
    blocks = total // BLOCK_ELEMS
    core_num = min(MAX_CORES, blocks)
    tail_blocks = blocks // core_num
    y = torch.empty_like(x)
    workspace = torch.empty(0, dtype=torch.uint8)   # the kernel needs none
    tiling = Tiling(formerNum=blocks % core_num, formerLength=(tail_blocks + 1) * BLOCK_ELEMS,
                    tailLength=tail_blocks * BLOCK_ELEMS, tileLength=TILE_LENGTH,
                    negativeSlope=float(model.negative_slope))
    return Launch(kernel="leaky_relu", block_dim=core_num, args=[x, y, workspace, tiling], outputs=[y])
