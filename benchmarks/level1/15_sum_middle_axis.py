"""Sum over the middle axis of a (batch, steps, features) tensor: (B, T, D) -> (B, D).

The reduced axis is neither innermost nor outermost: each output element sums a column of T
values with stride D, so a good kernel reduces across rows while reading contiguous features.

Sizes: 96 x 2048 x 1536 fp32 = 1.21 GB in, 0.6 MB out. Purely memory-bound: H200 floor
~0.28 ms, eager (one reduction kernel) estimated at ~0.4-0.5 ms; the input is kept near 1 GB
rather than stretched to 1 ms. Small: 3 x 37 x 20.
"""

import torch
import torch.nn as nn

batch_size = 96
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
