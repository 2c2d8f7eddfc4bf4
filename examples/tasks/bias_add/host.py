import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 2        # fp16 elements per 32-byte block
MAX_CORES = 8
TILE_BYTES = 16 * 1024       # per buffer; x and z double-buffered: 64 KB of UB


def launch(x, bias):
    cols = bias.numel()
    if cols % BLOCK_ELEMS:
        raise ValueError(f"bias_add needs the row length to be a multiple of {BLOCK_ELEMS}, got {cols}")
    rows = x.numel() // cols
    core_num = min(MAX_CORES, rows)
    tail_rows = rows // core_num
    former_rows = tail_rows + (1 if rows % core_num else 0)
    tile_rows = max(1, min(former_rows, TILE_BYTES // (cols * x.element_size())))
    z = torch.empty_like(x)
    tiling = Tiling(formerNum=rows % core_num, formerRows=former_rows, tailRows=tail_rows, cols=cols,
                    tileRows=tile_rows)
    return Launch(kernel="bias_add", block_dim=core_num, args=[x, bias, z, tiling], outputs=[z])
