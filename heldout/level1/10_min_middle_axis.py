"""Minimum over the middle axis of (B, D1, D2): torch.min(x, dim=1) values (held-out task).

Written 2026-12-01. The reduced axis is strided (D2 apart); the output is (B, D2).

Sizes: 64x4095x1023 inputs, 1.07 GB in per call (H200 floor ~0.25 ms at 4.3 TB/s).
Small: 3 x 37 x 20.
"""

import torch
import torch.nn as nn

batch_size = 64
dim1 = 4095
dim2 = 1023

KERNELWRIGHT = {"family": "reduction", "small": {"batch_size": 3, "dim1": 37, "dim2": 20}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.min(x, dim=1)[0]


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return []
