import torch


class Model(torch.nn.Module):
    def forward(self, x):
        n = x.numel() - 16
        return x[1 : n + 1] - x[:n]


def get_inputs():
    return [torch.randn(4 * 1024 + 16, dtype=torch.float16)]


def get_init_inputs():
    return []
