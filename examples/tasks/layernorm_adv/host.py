import torch

from sage_npu.npu_eval import Launch, Tiling

BLOCK_ELEMS = 32 // 4     # fp32 elements per 32-byte block
MAX_CORES = 8
TILE_BYTES = 16 * 1024    # x and y tiles, each double-buffered


def _align32(n):
    return (n + 31) // 32 * 32


def layernorm_tiling(rows, h, stack_bytes):
    """GetLayerNormNDTilingInfo([1, rows, h, h], stack_bytes, sizeof(float), false): three float
    buffers of whole rows in the work area (fp32 keeps no separate mean/variance there)."""
    one = min(stack_bytes // 4 // 3 // h * h, rows * h)
    tail = rows * h % one
    mv = (rows + 7) // 8 * 8
    return dict(bLength=1, sLength=rows, hLength=h, originalHLength=h, inputXSize=rows * h, meanVarSize=rows,
                numberOfTmpBuf=3, meanTmpTensorPos=0, meanTmpTensorSize=mv, varianceTmpTensorPos=mv,
                varianceTmpTensorSize=mv, tmpBufSize=stack_bytes // 4, oneTmpSize=one, firstTmpStartPos=0,
                secondTmpStartPos=one, thirdTmpStartPos=2 * one, loopRound=rows * h // one, inputRoundSize=one,
                inputTailSize=tail, inputTailPos=rows * h - tail, meanVarRoundSize=one // h,
                meanVarTailSize=tail // h, meanVarTailPos=rows - tail // h, bshCurLength=one, bsCurLength=one // h,
                lastDimValueBack=1.0 / h)


def launch(x, model):
    h = model.weight.numel()
    if h % BLOCK_ELEMS:
        raise ValueError(f"layernorm_adv needs a hidden size that is a multiple of {BLOCK_ELEMS}, got {h}")
    rows = x.numel() // h
    core_num = min(MAX_CORES, rows)
    tail_rows = rows // core_num
    former_rows = tail_rows + (1 if rows % core_num else 0)
    tile_rows = max(1, min(former_rows, TILE_BYTES // (h * 4)))
    # GetLayerNormMaxMinTmpSize([1, tile_rows, h, h]): the maximum, so a tile runs in one pass
    stack_bytes = 3 * _align32(tile_rows * h * 4) + 2 * _align32(tile_rows * 4)
    y = torch.empty_like(x)
    tiling = Tiling(formerNum=rows % core_num, formerRows=former_rows, tailRows=tail_rows, cols=h,
                    tileRows=tile_rows, stackBytes=stack_bytes, eps=model.eps)
    # A tiling per tile height: a full tile, and the short last tile of a former and of a tail core.
    full = Tiling(**layernorm_tiling(tile_rows, h, stack_bytes))
    former_last = Tiling(**layernorm_tiling(former_rows % tile_rows or tile_rows, h, stack_bytes))
    tail_last = Tiling(**layernorm_tiling(max(1, tail_rows % tile_rows or tile_rows), h, stack_bytes))
    return Launch(kernel="layernorm_adv", block_dim=core_num,
                  args=[x, model.weight, model.bias, y, tiling, full, former_last, tail_last], outputs=[y])
