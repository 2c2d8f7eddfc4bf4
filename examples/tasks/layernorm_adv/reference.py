import torch

HIDDEN = 96


class Model(torch.nn.Module):
    """LayerNorm over the last axis with a learned fp32 weight and bias."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        gen = torch.Generator().manual_seed(0)  # the same weights on every run
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(hidden, generator=gen))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(hidden, generator=gen))

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_input_groups():
    # Row counts that do not split evenly over 8 cores or into whole tiles, and fewer rows than cores.
    shapes = [(2, 16, HIDDEN), (37, HIDDEN), (5, HIDDEN), (3, 7, HIDDEN)]
    return [[torch.randn(s) * 2 + 1] for s in shapes]


def get_init_inputs():
    return [HIDDEN, 1e-5]
