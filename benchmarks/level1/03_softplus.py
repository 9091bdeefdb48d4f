"""Softplus with beta = 0.5 and threshold = 20: log(1 + exp(beta * x)) / beta, linear above
beta * x > threshold (the branch a kernel must reproduce; scaled trial inputs reach it).

Sizes: 12288 x 18432 fp32 = 226M elements, 0.91 GB in, 0.91 GB out: the H200 floor is
~0.42 ms and eager (one kernel) is estimated at ~0.6 ms, under 1 ms so one call stays under
~2 GB. Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 12288
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
