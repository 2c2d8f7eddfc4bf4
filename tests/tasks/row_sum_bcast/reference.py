import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x - x.mean(dim=-1, keepdim=True)


def get_input_groups():
    return [[torch.randn(16, 40)], [torch.randn(5, 13)], [torch.randn(1, 8)]]
