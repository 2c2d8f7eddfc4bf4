import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.bmm(a.float(), b.float())


def get_input_groups():
    # An aligned shape, and tails in the batch count (7 over 4 cores: 2, 2, 2, 1), M, N and K.
    shapes = [(4, 64, 128, 64), (7, 37, 50, 70)]
    return [[torch.randn(bt, m, k).half(), torch.randn(bt, k, n).half()] for bt, m, k, n in shapes]


def get_init_inputs():
    return []
