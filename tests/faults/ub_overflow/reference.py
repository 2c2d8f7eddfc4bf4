import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def get_inputs():
    n = 8 * 2 * 18432
    return [torch.randn(n, dtype=torch.float16), torch.randn(n, dtype=torch.float16)]


def get_init_inputs():
    return []
