"""Reverse (suffix) prefix sum along the last axis: y[i, j] = sum_{k >= j} x[i, k].

Rewards-to-go and suffix sums are written in PyTorch as flip, cumsum, flip: three kernels, two
of them full copies. A scan kernel can walk the row backwards instead.

Sizes: 16384 x 8192 fp32 (0.54 GB in, 0.54 GB out); H200 floor ~0.25 ms, eager estimated at
~1.1 ms (three passes). Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 16384
cols = 8192

# fp32 prefix sums over thousands of steps differ between summation orders by up to ~1e-3 in
# absolute terms (the running sums reach ~sqrt(steps) in magnitude; eps * |sum| * log2(steps)),
# which the policy's atol=1e-4 refuses wherever a running sum crosses zero. Measured on the H200
# (2026-11-30): an honest parallel scan differed from torch.cumsum by at most 6.1e-4.
KERNELWRIGHT = {"family": "scan", "atol": 2e-3, "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
