import torch


class Model(torch.nn.Module):
    def __init__(self, scale, shift):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x):
        return x * self.scale + self.shift


def get_input_groups():
    shapes = [(8, 4096), (1000, 16), (5, 48), (32,)]
    return [[torch.randn(s, dtype=torch.float16)] for s in shapes]


def get_init_inputs():
    return [1.5, -0.25]
