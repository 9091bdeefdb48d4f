"""MaxPool2d, 3 x 3 window, stride 2, padding 1: the ResNet stem pooling, (N, C, H, W).

Sizes: 64 x 64 x 224 x 224 fp32 (0.82 GB in, 0.21 GB out); H200 floor ~0.24 ms, eager
estimated at ~0.35-0.6 ms. Input variants: odd spatial sizes (the last window is clipped)
and a non-square map. Small: 3 x 5 x 9 x 11.
"""

import torch
import torch.nn as nn

batch_size = 64
channels = 64
height = 224
width = 224

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 3, "channels": 5, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_input_variants():
    return [
        [torch.randn(batch_size // 8 + 1, channels, height // 2 + 1, width // 2 + 1)],
        [torch.randn(2, channels + 3, height // 4 + 3, width + 5)],
    ]


def get_init_inputs():
    return []
