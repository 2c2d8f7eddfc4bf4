import torch


class Model(torch.nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, self.negative_slope)


def get_input_groups():
    shapes = [(8, 4096), (3, 1000, 16), (77, 48), (16,)]
    return [[torch.randn(s, dtype=torch.float16)] for s in shapes]


def get_init_inputs():
    return [0.1]
