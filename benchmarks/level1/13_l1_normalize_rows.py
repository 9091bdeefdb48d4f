"""L1 normalisation of rows: x / sum(|x|) along the last dimension.

Written as PyTorch users do (abs, sum, divide), so eager runs three kernels and reads the matrix
three times; a fused kernel reads it once per row and writes once.

Sizes: 8192 x 16384 fp32 (0.54 GB in, 0.54 GB out); H200 floor ~0.25 ms, eager estimated at
~0.9 ms. Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 8192
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
