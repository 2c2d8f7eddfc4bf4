import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a.to(torch.float16), b.to(torch.float32)


def get_input_groups():
    shapes = [(8, 2048), (1000, 16), (45, 80), (48,)]
    return [[_spread(s), torch.randn(s, dtype=torch.float16)] for s in shapes]


def _spread(shape):
    """fp32 values over many binades, all normal numbers in fp16, so rounding is exercised."""
    sign = torch.where(torch.rand(shape) < 0.5, -1.0, 1.0)
    return sign * (torch.rand(shape) + 0.5) * torch.exp2(torch.randint(-10, 11, shape).float())


def get_init_inputs():
    return []
