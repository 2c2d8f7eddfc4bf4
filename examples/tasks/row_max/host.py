import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 2     # fp16 elements per 32-byte block
MAX_CORES = 8
TILE_BYTES = 32 * 1024    # x tile per buffer, double-buffered
MAX_BURSTS = 4095         # DataCopyPad blockCount limit


def launch(x):
    cols = x.shape[-1]
    rows = x.numel() // cols
    cols_aligned = (cols + BLOCK_ELEMS - 1) // BLOCK_ELEMS * BLOCK_ELEMS
    if cols_aligned * x.element_size() > TILE_BYTES:
        raise ValueError(f"row_max keeps a whole row in UB; {cols} columns do not fit a {TILE_BYTES}-byte tile")
    core_num = min(MAX_CORES, rows)
    tail_rows = rows // core_num
    former_rows = tail_rows + (1 if rows % core_num else 0)
    tile_rows = min(former_rows, MAX_BURSTS, TILE_BYTES // (cols_aligned * x.element_size()))
    y = torch.empty(x.shape[:-1], dtype=x.dtype)
    tiling = Tiling(formerNum=rows % core_num, formerRows=former_rows, tailRows=tail_rows, cols=cols,
                    colsAligned=cols_aligned, tileRows=tile_rows)
    return Launch(kernel="row_max", block_dim=core_num, args=[x, y, tiling], outputs=[y])
