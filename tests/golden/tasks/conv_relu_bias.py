"""A 3x3 convolution, a ReLU and a per-channel bias (KernelBench level 2, task 1): one implicit
GEMM with its epilogue."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []
