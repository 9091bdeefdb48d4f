"""Huber (smooth L1 with delta) loss, mean over all elements (a scalar).

    l = 0.5 * d^2            if |d| < delta
        delta * (|d| - 0.5 * delta)   otherwise,      d = pred - target, delta = 1.0

With N(0, 1) inputs |d| ~ |N(0, 2)| straddles delta, so both branches carry weight.

Sizes: 192x2048x1024, 192x2048x1024 inputs, 3.22 GB in and out per call (H200 floor ~0.75 ms at
4.3 TB/s); `batch_size` was scaled 3x after a measured H200 sweep so that eager fp32 takes about
1 ms or more (BENCHMARKS.md).
Small: 3 x 37 x 20.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 192
seq_len = 2048
dim = 1024
delta = 1.0

KERNELWRIGHT = {
    "family": "loss",
    "small": {"batch_size": 3, "seq_len": 37, "dim": 20},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.huber_loss(pred, target, reduction="mean", delta=delta)


def get_inputs():
    shape = (batch_size, seq_len, dim)
    return [torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
