"""Sum over the middle axis of a (batch, steps, features) tensor: (B, T, D) -> (B, D).

The reduced axis is neither innermost nor outermost: each output element sums a column of T
values with stride D, so a good kernel reduces across rows while reading contiguous features.

Sizes: 336x2048x1536 inputs, 4.23 GB in and out per call (H200 floor ~0.98 ms at 4.3 TB/s);
`batch_size` was scaled 3.5x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Small: 3 x 37 x 20.
"""

import torch
import torch.nn as nn

batch_size = 336
steps = 2048
features = 1536

KERNELWRIGHT = {
    "family": "reduction",
    "small": {"batch_size": 3, "steps": 37, "features": 20},
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
