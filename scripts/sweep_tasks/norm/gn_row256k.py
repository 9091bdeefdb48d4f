"""Sweep shape (sixth session): GroupNorm, 16 groups over 256 channels of 128x128 maps,
batch 48: rows of 262144 values (16 channels each), 768 rows."""

import torch
import torch.nn as nn

batch_size = 48
channels = 256
groups = 16
height = 128
width = 128

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 2, "channels": 8, "groups": 2, "height": 5, "width": 6},
}


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups, channels]
