"""Per-channel scale and shift, then sigmoid, on NCHW feature maps (held-out task, 2026-12-01).

    y = sigmoid(x * w[c] + b[c])

The weights broadcast along N, H and W; w is drawn in [0.5, 1.5], b ~ N(0, 0.5).

Sizes: 96x48x192x224 inputs, 1.59 GB in and out per call (H200 floor ~0.37 ms at 4.3 TB/s).
Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 96
channels = 48
height = 192
width = 224

KERNELWRIGHT = {
    "family": "elementwise",
    "small": {"batch_size": 3, "channels": 5, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(channels) + 0.5)
        self.bias = nn.Parameter(torch.randn(channels) * 0.5)

    def forward(self, x):
        return torch.sigmoid(x * self.weight.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
