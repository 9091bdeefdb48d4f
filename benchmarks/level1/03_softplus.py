"""Softplus with beta = 0.5 and threshold = 20: log(1 + exp(beta * x)) / beta, linear above
beta * x > threshold (the branch a kernel must reproduce; scaled trial inputs reach it).

Sizes: 27648x18432 inputs, 4.08 GB in and out per call (H200 floor ~0.95 ms at 4.3 TB/s);
`batch_size` was scaled 2.25x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 27648
dim = 18432
beta = 0.5
threshold = 20.0

KERNELWRIGHT = {"family": "elementwise", "small": {"batch_size": 37, "dim": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.softplus(x, beta=beta, threshold=threshold)


def get_inputs():
    # Spread wide enough that both the log1p(exp) branch and the linear branch occur.
    return [torch.randn(batch_size, dim) * 8.0]


def get_init_inputs():
    return []
