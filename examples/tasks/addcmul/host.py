import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4   # fp32 elements per 32-byte block
MAX_CORES = 8
TILE_LENGTH = 1024      # 4 in/out queues x 2 buffers + 1 scratch = 36 KB of UB


def launch(input, t1, t2, model):  # noqa: A002 - torch.addcmul's own parameter name
    total = input.numel()
    if total % BLOCK_ELEMS:
        raise ValueError(f"addcmul needs a length that is a multiple of {BLOCK_ELEMS}, got {total}")
    blocks = total // BLOCK_ELEMS
    core_num = min(MAX_CORES, blocks)
    tail_blocks = blocks // core_num
    out = torch.empty_like(input)
    tiling = Tiling(formerNum=blocks % core_num, formerLength=(tail_blocks + 1) * BLOCK_ELEMS,
                    tailLength=tail_blocks * BLOCK_ELEMS, tileLength=TILE_LENGTH, value=float(model.value))
    return Launch(kernel="addcmul", block_dim=core_num, args=[input, t1, t2, out, tiling], outputs=[out])
