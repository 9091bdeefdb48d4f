"""Prefix sum along the middle axis of (B, T, D): torch.cumsum(x, dim=1) (held-out task).

Written 2026-12-01. The scanned axis is strided (D apart): a column scan.

Sizes: 32x4096x1024 inputs, 1.07 GB in and out per call (H200 floor ~0.25 ms at 4.3 TB/s).
Small: 3 x 37 x 20.
"""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 4096
dim = 1024

KERNELWRIGHT = {"family": "scan", "small": {"batch_size": 3, "seq_len": 37, "dim": 20}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return []
