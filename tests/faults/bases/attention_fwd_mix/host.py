import math

import torch

from sage_npu.npu_eval import Launch, Tiling

BASE_M = 32        # query rows per band: 16 per AIV
MAX_AI_CORES = 4   # AI Cores (each one AIC and two AIVs)
SLOTS = 2          # workspace bands per AI Core (the kernel's ping-pong)
MAX_SEQ_KV = 256   # k or v of one batch fills L0B (64 KB) at seqKv 256 x headDim 128
MAX_HEAD_DIM = 128


def softmax_tmp_bytes(rows, cols):
    # GetSoftMaxMaxTmpSize([rows, cols], sizeof(float)): per row 32 / 4 + cols + 64 floats
    return rows * (8 + cols + 64) * 4


def launch(q, k, v):
    batch, seq_q, d = q.shape
    seq_kv = k.shape[1]
    if seq_kv % 16 or d % 16 or seq_kv > MAX_SEQ_KV or d > MAX_HEAD_DIM:
        raise ValueError(f"attention_fwd_mix needs seqKv and headDim multiples of 16, seqKv <= {MAX_SEQ_KV} and "
                         f"headDim <= {MAX_HEAD_DIM}, got seqKv={seq_kv}, headDim={d}")
    bands_per_batch = (seq_q + BASE_M - 1) // BASE_M
    bands = batch * bands_per_batch
    cores = min(MAX_AI_CORES, bands)
    s_ws = torch.empty(cores * SLOTS * BASE_M * seq_kv, dtype=torch.float32)
    p_ws = torch.empty(cores * SLOTS * BASE_M * seq_kv, dtype=torch.float16)
    o = torch.empty(batch, seq_q, d, dtype=torch.float32)
    tiling = Tiling(batch=batch, seqQ=seq_q, seqKv=seq_kv, headDim=d, baseM=BASE_M, bandsPerBatch=bands_per_batch,
                    bands=bands, scale=1.0 / math.sqrt(d), softmaxTmpBytes=softmax_tmp_bytes(BASE_M // 2, seq_kv))
    # Tolerance: the kernel rounds P to half between the two matmuls (the cube multiplies half), and
    # so does reference.py. What still differs is the float sum order of S and o and SoftMax's exp
    # against torch's: a weight near a half rounding boundary may round the other way, one half ulp
    # (2^-11 of the weight). Where o is near zero (values of both signs cancelling) that one weight,
    # relative to o, is large: on reference.py's shapes the mean relative error is 2.7e-6 but the
    # largest 0.021, over the max rule's 10 x 2^-9 = 0.0195 and under 10 x 2^-8 = 0.039. Hence 2^-8
    # (the mean bound stays 500 times the measured mean: a wrong row or weight still fails).
    # block_dim of a mixed kernel counts AI Cores: the launch runs `cores` AICs and 2 * `cores` AIVs
    return Launch(kernel="attention_fwd_mix", block_dim=cores, args=[q, k, v, o, s_ws, p_ws, tiling], outputs=[o],
                  tolerance=2.0**-8)
