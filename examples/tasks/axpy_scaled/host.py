import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4   # fp32 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 1024


def launch(x, y, model):
    total = x.numel()
    if total % BLOCK_ELEMS:
        raise ValueError(f"axpy_scaled needs a length that is a multiple of {BLOCK_ELEMS}, got {total}")
    blocks = total // BLOCK_ELEMS
    core_num = min(MAX_CORES, blocks)
    tail_blocks = blocks // core_num
    out = torch.empty_like(y)
    tiling = Tiling(formerNum=blocks % core_num, formerLength=(tail_blocks + 1) * BLOCK_ELEMS,
                    tailLength=tail_blocks * BLOCK_ELEMS, tileLength=TILE_LENGTH)
    return Launch(kernel="axpy_scaled", block_dim=core_num,
                  args=[x, y, out, float(model.alpha), float(model.beta), tiling], outputs=[out])
