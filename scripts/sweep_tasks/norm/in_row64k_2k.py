"""Sweep shape (sixth session): InstanceNorm2d with affine over 64 channels of 256x256
planes, batch 32: rows of 65536 values, 2048 rows."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 256
width = 256

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 2, "channels": 3, "height": 5, "width": 6},
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
