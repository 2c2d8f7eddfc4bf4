import torch


class Model(torch.nn.Module):
    def forward(self, x, bias):
        return x + bias


def get_input_groups():
    # Row counts that do not split evenly over 8 cores, and fewer rows than cores.
    shapes = [((64, 256), 256), ((37, 128), 128), ((5, 1024), 1024), ((4, 25, 48), 48)]
    return [[torch.randn(xs, dtype=torch.float16), torch.randn(c, dtype=torch.float16)] for xs, c in shapes]


def get_init_inputs():
    return []
