"""Inclusive prefix sum along the last axis: y[i, j] = sum_{k <= j} x[i, k].

Sizes: 29488x8192 inputs, 1.93 GB in and out per call (H200 floor ~0.45 ms at 4.3 TB/s); `rows`
was scaled 1.8x after a measured H200 sweep so that eager fp32 takes about 1 ms or more
(BENCHMARKS.md). Input variants: a few rows three times as long
(plus one, to break power-of-two tiling) and a short odd row length. Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 29488
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
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_input_variants():
    return [
        [torch.randn(rows // 16 + 1, cols * 3 + 1)],
        [torch.randn(rows // 2 + 3, cols // 4 + 7)],
    ]


def get_init_inputs():
    return []
