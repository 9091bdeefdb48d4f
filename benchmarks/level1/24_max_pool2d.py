"""MaxPool2d, 3 x 3 window, stride 2, padding 1: the ResNet stem pooling, (N, C, H, W).

Sizes: 80x64x224x224 inputs, 1.28 GB in and out per call (H200 floor ~0.30 ms at 4.3 TB/s);
`batch_size` was scaled 1.3x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Input variants: odd spatial sizes (the last window is clipped)
and a non-square map. Small: 3 x 5 x 9 x 11.
"""

import torch
import torch.nn as nn

batch_size = 80
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
