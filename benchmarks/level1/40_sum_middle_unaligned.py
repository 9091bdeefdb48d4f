"""Sum over the middle axis of (batch, steps, features) with an odd feature count: (B, T, D) ->
(B, D).

Each output sums a column of T values D apart, and with D odd no reduced row of fp32 starts on
a 16-byte boundary: loads are single values whatever the tile (the column rule for unaligned
rows). KernelBench's sum over the middle axis (128 x 4096 x 4095) is this class at another
size.

Sizes: 192x2048x2047 inputs, 3.22 GB in per call (H200 floor ~0.75 ms at 4.3 TB/s).
Small: 3 x 37 x 21.
"""

import torch
import torch.nn as nn

batch_size = 192
steps = 2048
features = 2047

KERNELWRIGHT = {
    "family": "reduction",
    "small": {"batch_size": 3, "steps": 37, "features": 21},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, steps, features)]


def get_init_inputs():
    return []
