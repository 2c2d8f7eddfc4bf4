import math

import torch


class Model(torch.nn.Module):
    """Attention forward in half inputs: softmax(q k^T / sqrt(d)) v per batch, the scores and the
    softmax in float, the probabilities rounded to half for the second matmul (its operands are
    half, as in the kernel's cube), the products summed in float."""

    def forward(self, q, k, v):
        scores = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
        p = torch.softmax(scores, dim=-1).half()
        return p.float() @ v.float()


def get_input_groups():
    # (batch, seqQ, seqKv, headDim): whole bands on 2 AI Cores; a tail band of 13 rows (odd: the
    # AIVs take 7 and 6) with 2 batches; 12 bands over 4 AI Cores (each runs 3 through both
    # workspace slots) at the largest seqKv and headDim; one query row (the second AIV idles).
    shapes = [(1, 64, 128, 64), (2, 45, 80, 32), (3, 100, 256, 128), (1, 1, 16, 16)]
    gen = torch.Generator().manual_seed(11)
    return [[torch.randn(b, s, d, generator=gen).half(), torch.randn(b, skv, d, generator=gen).half(),
             torch.randn(b, skv, d, generator=gen).half()] for b, s, skv, d in shapes]


def get_init_inputs():
    return []
