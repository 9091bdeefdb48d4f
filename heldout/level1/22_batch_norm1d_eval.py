"""BatchNorm1d at inference on (N, C) features: per-column scale and shift (held-out task).

Written 2026-12-01. The running statistics and affine weights are drawn at random at
construction: running_var in [0.5, 2], running_mean ~ N(0, 0.5), weight in [0.5, 1.5].

Sizes: 262144x1000 inputs, 2.10 GB in and out per call (H200 floor ~0.49 ms at 4.3 TB/s).
Small: 37 x 20.
"""

import torch
import torch.nn as nn

batch_size = 262144
features = 1000

KERNELWRIGHT = {"family": "norm", "small": {"batch_size": 37, "features": 20}}


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.BatchNorm1d(features)
        with torch.no_grad():
            self.norm.running_mean.normal_(0.0, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
