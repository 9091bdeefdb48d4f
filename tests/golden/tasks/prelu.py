import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.act = nn.PReLU(num_parameters=channels)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(2, 8, 16, 16)]


def get_init_inputs():
    return [8]
