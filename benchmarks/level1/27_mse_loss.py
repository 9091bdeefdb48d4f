"""Mean squared error between predictions and targets: mean((pred - target)^2), a scalar.

Predictions and targets are independent N(0, 1) draws, so the loss is about 2 for any seed and
stays far from zero under every trial transform.

Sizes: two 16384 x 8192 fp32 tensors (1.07 GB in, 4 B out). A fused kernel reads both once
(H200 floor ~0.25 ms); eager (difference and square, then a mean) estimated at ~0.7 ms.
Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
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
