"""Mean over short rows of 257 elements, torch.mean(x, dim=-1) (held-out task, 2026-12-01).

Rows of an odd length: no row starts on a 16-byte boundary after the first.

Sizes: 1048576x257 inputs, 1.08 GB in per call (H200 floor ~0.25 ms at 4.3 TB/s).
Small: 37 x 20.
"""

import torch
import torch.nn as nn

rows = 1048576
cols = 257

KERNELWRIGHT = {"family": "reduction", "small": {"rows": 37, "cols": 20}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
