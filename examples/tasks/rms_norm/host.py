import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 2     # fp16 elements per 32-byte block
MAX_CORES = 8
TILE_BYTES = 16 * 1024    # x tile per buffer
FLOATS_PER_REPEAT = 256 // 4
UB_BYTES = 184 * 1024     # 910B UB less the 8 KB the API reserves


def launch(x, model):
    cols = model.weight.numel()
    if cols % BLOCK_ELEMS:
        raise ValueError(f"rms_norm needs a hidden size that is a multiple of {BLOCK_ELEMS}, got {cols}")
    rows = x.numel() // cols
    core_num = min(MAX_CORES, rows)
    tail_rows = rows // core_num
    former_rows = tail_rows + (1 if rows % core_num else 0)
    tile_rows = max(1, min(former_rows, TILE_BYTES // (cols * x.element_size())))
    repeats = (cols + FLOATS_PER_REPEAT - 1) // FLOATS_PER_REPEAT
    work_length = (repeats + 7) // 8 * 8
    # x and y tiles double-buffered, the fp16 weight, three fp32 rows (weight, x, x^2), scratch.
    ub_bytes = 4 * tile_rows * cols * 2 + cols * 2 + 3 * cols * 4 + 32 + work_length * 4
    if ub_bytes > UB_BYTES:
        raise ValueError(f"rms_norm keeps whole rows in UB; a hidden size of {cols} needs {ub_bytes} bytes")
    y = torch.empty_like(x)
    tiling = Tiling(formerNum=rows % core_num, formerRows=former_rows, tailRows=tail_rows, cols=cols,
                    tileRows=tile_rows, workLength=work_length, invCols=1.0 / cols, eps=model.eps)
    return Launch(kernel="rms_norm", block_dim=core_num, args=[x, model.weight, y, tiling], outputs=[y])
