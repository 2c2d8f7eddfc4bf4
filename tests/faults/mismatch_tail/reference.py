import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def inputs_of(n):
    """Exact in half precision, and y > 0, so x + y and x - y differ everywhere."""
    i = torch.arange(n)
    return [((i % 13) - 6).to(torch.float16) * 0.25, ((i % 7) + 1).to(torch.float16) * 0.125]


def get_input_groups():
    # An aligned shape (no tail), then one whose last block ends in a 28-element tail.
    return [inputs_of(8 * 2048), inputs_of(8 * 2048 - 100)]


def get_init_inputs():
    return []
