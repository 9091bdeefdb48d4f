"""MaxPool1d, kernel 4, stride 2, padding 1, over (N, C, L) (held-out task, written 2026-12-01).

Sizes: 32x128x65536 inputs, 1.61 GB in and out per call (H200 floor ~0.37 ms at 4.3 TB/s).
Small: 3 x 5 x 37.
"""

import torch
import torch.nn as nn

batch_size = 32
channels = 128
length = 65536

KERNELWRIGHT = {"family": "pool", "small": {"batch_size": 3, "channels": 5, "length": 37}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=4, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
