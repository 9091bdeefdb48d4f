"""ReLU over a large activation (for the CUDA C++ solution path)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


n = 64 * 1024 * 1024

KERNELWRIGHT = {"family": "elementwise", "small": {"n": 4099}}


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
