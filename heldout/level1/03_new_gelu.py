"""minGPT's NewGELU written out (tanh approximation), elementwise (held-out task, 2026-12-01).

    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))

Eager runs about eight kernels, each reading and writing the whole tensor.

Sizes: 8192x24576 inputs, 1.61 GB in and out per call (H200 floor ~0.37 ms at 4.3 TB/s).
Small: 37 x 100.
"""

import math

import torch
import torch.nn as nn

rows = 8192
cols = 24576

KERNELWRIGHT = {"family": "elementwise", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
