import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a.float(), b.float())


def get_input_groups():
    # Aligned shapes, and tails in M, N and K (none a multiple of 16).
    shapes = [(128, 256, 128), (100, 70, 50), (37, 200, 300)]
    return [[torch.randn(m, k).half(), torch.randn(k, n).half()] for m, k, n in shapes]


def get_init_inputs():
    return []
