"""Sweep shape (sixth session): InstanceNorm2d with affine over 32 channels of 256x512
planes, batch 48: rows of 131072 values, 1536 rows."""

import torch
import torch.nn as nn

batch_size = 48
channels = 32
height = 256
width = 512

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
