"""Index of the minimum along the last axis, torch.argmin(x, dim=-1) (held-out task, 2026-12-01).

Sizes: 131072x2000 inputs, 1.05 GB in per call, 1 MB of int64 out (H200 floor ~0.24 ms).
Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 131072
cols = 2000

KERNELWRIGHT = {"family": "reduction", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmin(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
