"""Maximum over the last axis (values only, torch.amax): (rows, cols) -> (rows,).

Sizes: 32768 x 8192 fp32 = 1.07 GB in, 128 KB out. One read: H200 floor ~0.25 ms, eager (one
reduction kernel) estimated at ~0.35-0.5 ms, kept near 1 GB rather than stretched to 1 ms.
Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 32768
cols = 8192

KERNELWRIGHT = {"family": "reduction", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
