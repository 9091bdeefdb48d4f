"""Frobenius normalisation of a whole tensor: x / ||x||_F (held-out task, written 2026-12-01).

The norm reduces every element to one scalar before any output can be written, so a fused
design reads the input twice (the floor counts it once).

Sizes: 24x64x256x256 inputs, 0.81 GB in and out per call (H200 floor ~0.19 ms at 4.3 TB/s).
Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 24
features = 64
dim1 = 256
dim2 = 256

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 3, "features": 5, "dim1": 7, "dim2": 9},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        norm = torch.norm(x, p="fro")
        return x / norm


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return []
