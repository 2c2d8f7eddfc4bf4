import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return (x + y) * x


def get_inputs():
    return [torch.randn(8 * 2048, dtype=torch.float16), torch.randn(8 * 2048, dtype=torch.float16)]


def get_init_inputs():
    return []
