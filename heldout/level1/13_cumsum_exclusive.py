"""Exclusive prefix sum along rows, as users write it: pad one zero in front, drop the last.

    y[:, j] = sum(x[:, :j])       (y[:, 0] = 0)

Held-out task, written 2026-12-01.

Sizes: 32768x8192 inputs, 2.15 GB in and out per call (H200 floor ~0.50 ms at 4.3 TB/s).
Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 32768
cols = 8192

KERNELWRIGHT = {"family": "scan", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(F.pad(x, (1, 0))[:, :-1], dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
