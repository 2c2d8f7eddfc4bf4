import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4     # fp32 elements per 32-byte block
MAX_CORES = 8
TILE_BYTES = 16 * 1024    # x and y tiles, each double-buffered


def softmax_tmp_bytes(rows, cols_aligned):
    # GetSoftMaxMaxTmpSize([rows, cols], sizeof(float)): per row 32 / 4 + cols + 64 floats
    return rows * (BLOCK_ELEMS + cols_aligned + 64) * 4


def launch(x):
    cols = x.shape[-1]
    rows = x.numel() // cols
    cols_aligned = (cols + BLOCK_ELEMS - 1) // BLOCK_ELEMS * BLOCK_ELEMS
    core_num = min(MAX_CORES, rows)
    tail_rows = rows // core_num
    former_rows = tail_rows + (1 if rows % core_num else 0)
    tile_rows = max(1, min(former_rows, TILE_BYTES // (cols_aligned * 4)))
    y = torch.empty_like(x)
    tiling = Tiling(formerNum=rows % core_num, formerRows=former_rows, tailRows=tail_rows, cols=cols,
                    colsAligned=cols_aligned, tileRows=tile_rows, tmpBytes=softmax_tmp_bytes(tile_rows, cols_aligned))
    return Launch(kernel="softmax_adv", block_dim=core_num, args=[x, y, tiling], outputs=[y])
