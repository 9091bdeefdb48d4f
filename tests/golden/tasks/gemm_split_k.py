"""A product with few output tiles and a long K, then a ReLU: split-K and a combine kernel."""

import torch
import torch.nn as nn

m = 256
k = 16384
n = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.relu(a @ b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
