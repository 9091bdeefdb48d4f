"""SELU activation, elementwise (held-out task, written 2026-12-01; never used to tune).

Sizes: 12289x16384 inputs, 1.61 GB in and out per call (H200 floor ~0.37 ms at 4.3 TB/s).
Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 12289
cols = 16384

KERNELWRIGHT = {"family": "elementwise", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.selu(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
