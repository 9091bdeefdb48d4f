"""Mean squared error between predictions and targets: mean((pred - target)^2), a scalar.

Predictions and targets are independent N(0, 1) draws, so the loss is about 2 for any seed and
stays far from zero under every trial transform.

Sizes: 49152x8192, 49152x8192 inputs, 3.22 GB in and out per call (H200 floor ~0.75 ms at 4.3
TB/s); `batch_size` was scaled 3x after a measured H200 sweep so that eager fp32 takes about 1
ms or more (BENCHMARKS.md).
Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 49152
dim = 8192

KERNELWRIGHT = {"family": "loss", "small": {"batch_size": 37, "dim": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.mse_loss(pred, target)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
