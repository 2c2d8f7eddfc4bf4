import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return torch.sigmoid(x.float()).half() * y


def get_inputs():
    return [torch.randn(2457600, dtype=torch.float16), torch.randn(2457600, dtype=torch.float16)]


def get_init_inputs():
    return []
