"""L1 normalisation of rows: x / sum(|x|) along the last dimension.

Written as PyTorch users do (abs, sum, divide), so eager runs three kernels and reads the matrix
three times; a fused kernel reads it once per row and writes once.

Sizes: 10656x16384 inputs, 1.40 GB in and out per call (H200 floor ~0.32 ms at 4.3 TB/s); `rows`
was scaled 1.3x after a measured H200 sweep so that eager fp32 takes about 1 ms or more
(BENCHMARKS.md). Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 10656
cols = 16384

KERNELWRIGHT = {"family": "norm", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / x.abs().sum(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
