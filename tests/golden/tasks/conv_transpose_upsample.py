"""An upsampling layer: a transposed 4x4 convolution of stride 2, a LeakyReLU and a per-channel
scale: one implicit GEMM per output phase with its epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
height = width = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.gamma = nn.Parameter(torch.rand(out_channels, 1, 1) + 0.5)

    def forward(self, x):
        return F.leaky_relu(self.up(x), negative_slope=0.2) * self.gamma


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []
