"""z = x + alpha * y, as a CANN custom-operator project (msopgen layout): no host.py; op_host's
TilingFunc picks the blocks, the tile and the tiling key from the shapes."""

import torch


class Model(torch.nn.Module):
    def __init__(self, alpha: float = 0.5) -> None:  # the OpDef's default for the attribute
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + self.alpha * y


def get_input_groups():
    # 32-byte aligned (tiling key 1), then a tail of 3 floats (tiling key 2).
    return [[torch.randn(16, 1024), torch.randn(16, 1024)],
            [torch.randn(7, 333), torch.randn(7, 333)]]


def get_init_inputs():
    return []
