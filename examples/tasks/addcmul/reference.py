import torch


class Model(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input, t1, t2):
        return torch.addcmul(input, t1, t2, value=self.value)


def get_input_groups():
    shapes = [(8, 2048), (3, 1000), (17, 24), (64,)]
    return [[torch.randn(s), torch.randn(s), torch.randn(s)] for s in shapes]


def get_init_inputs():
    return [0.3]
