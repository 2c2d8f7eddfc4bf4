import torch

from sage_npu.npu_eval import Launch, Tiling

MAX_CORES = 8
TILE_BYTES = 8 * 1024


def launch(x, model):
    block_elems = 32 // x.element_size()   # elements per 32-byte block
    total = x.numel()
    if total % block_elems:
        raise ValueError(f"scale_shift needs a length that is a multiple of {block_elems}, got {total}")
    blocks = total // block_elems
    core_num = min(MAX_CORES, blocks)
    tail_blocks = blocks // core_num
    y = torch.empty_like(x)
    tiling = Tiling(formerNum=blocks % core_num, formerLength=(tail_blocks + 1) * block_elems,
                    tailLength=tail_blocks * block_elems, tileLength=TILE_BYTES // x.element_size(),
                    scale=float(model.scale), shift=float(model.shift))
    return Launch(kernel="ops::scale_shift<half, 2>", block_dim=core_num, args=[x, y, tiling], outputs=[y])
