"""Hinge loss, mean(clamp(1 - pred * target, min=0)) with targets of +-1 (held-out task).

Written 2026-12-01. A scalar: the final cross-program reduction is part of the kernel.

Sizes: 2x 16384x16384 inputs, 2.15 GB in per call (H200 floor ~0.50 ms at 4.3 TB/s).
Small: 37 x 20.
"""

import torch
import torch.nn as nn

rows = 16384
cols = 16384

KERNELWRIGHT = {"family": "loss", "small": {"rows": 37, "cols": 20}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = torch.randn(rows, cols)
    targets = torch.randint(0, 2, (rows, cols)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
