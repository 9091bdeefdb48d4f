"""AvgPool3d, kernel 3, stride 2, padding 1, over (N, C, D, H, W) (held-out task, 2026-12-01).

Sizes: 16x32x64x128x128 inputs, 2.42 GB in and out per call (H200 floor ~0.56 ms at 4.3 TB/s).
Small: 2 x 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 16
channels = 32
depth = 64
height = 128
width = 128

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 2, "channels": 3, "depth": 5, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
