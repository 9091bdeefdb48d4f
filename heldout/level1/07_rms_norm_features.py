"""RMS normalisation over the feature axis of (B, F, D1, D2), as KernelBench writes it (held-out).

    y = x / sqrt(mean(x^2, dim=1, keepdim=True) + eps),   eps = 1e-5

Written 2026-12-01. The reduced axis (F = 64) is strided: each position's features lie D1*D2
apart.

Sizes: 32x64x256x256 inputs, 1.07 GB in and out per call (H200 floor ~0.25 ms at 4.3 TB/s).
Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 32
features = 64
dim1 = 256
dim2 = 256
eps = 1e-5

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 3, "features": 5, "dim1": 7, "dim2": 9},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + eps)
        return x / rms


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return []
