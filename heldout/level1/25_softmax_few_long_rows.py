"""Softmax over rows of 15,000,017 values, 16 rows: torch.softmax(x, dim=1) (held-out task).

Written 2026-12-02. Sixteen rows leave most SMs idle with one program a row, and a row is longer
than a resident team of programs holds in registers; the row length is odd, so rows after the
first start off 16-byte boundaries. The few-long-rows class (split statistics with a second
small pass) was measured on KernelBench's LayerNorm (16 rows of 4.2 M); this is the class with
a softmax's statistics (a running maximum and sum) at another size.

Sizes: 16x15000017 inputs, 0.96 GB in per call (H200 floor ~0.45 ms at 4.3 TB/s).
Small: 3 x 1001.
"""

import torch
import torch.nn as nn

batch_size = 16
dim = 15000017

KERNELWRIGHT = {"family": "reduction", "small": {"batch_size": 3, "dim": 1001}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
