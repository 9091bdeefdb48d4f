"""MaxPool2d, kernel 3, stride 1, padding 1, dilation 2: windows with holes (held-out task).

Written 2026-12-01.

Sizes: 32x64x224x224 inputs, 0.81 GB in and out per call (H200 floor ~0.19 ms at 4.3 TB/s).
Small: 2 x 3 x 9 x 11.
"""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 224
width = 224

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 2, "channels": 3, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=1, padding=1, dilation=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
