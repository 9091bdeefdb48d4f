"""MaxPool2d, 12 x 12 window, stride 12: coarse non-overlapping pooling (held-out task).

Written 2026-12-03. A large window unrolls into a large program: 12 input rows an output, each
read in three 16-byte vectors.

Sizes: 8x48x1536x1536 inputs, 3.6 GB in and 25 MB out per call (H200 floor ~0.85 ms at
4.3 TB/s). Small: 2 x 3 x 27 x 30.
"""

import torch
import torch.nn as nn

batch_size = 8
channels = 48
height = 1536
width = 1536

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 2, "channels": 3, "height": 27, "width": 30},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=12, stride=12)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
