"""Inclusive prefix sum along the last axis: y[i, j] = sum_{k <= j} x[i, k].

Sizes: 16384 x 8192 fp32 (0.54 GB in, 0.54 GB out). A scan has a serial dependence along the
row, so a kernel needs a block-level scan plus a carry between blocks of the row. H200 floor
~0.25 ms; eager estimated at ~0.4-0.7 ms. Input variants: a few rows three times as long
(plus one, to break power-of-two tiling) and a short odd row length. Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 16384
cols = 8192

KERNELWRIGHT = {"family": "scan", "small": {"rows": 37, "cols": 100}}


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
