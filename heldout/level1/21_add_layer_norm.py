"""Residual add then LayerNorm over the hidden axis, with affine weights (held-out task).

    y = layer_norm(x + residual) * w + b,    hidden 5120

Written 2026-12-01. Weight in [0.5, 1.5], bias ~ N(0, 0.1).

Sizes: 2x 32768x5120 inputs, 2.01 GB in and out per call (H200 floor ~0.47 ms at 4.3 TB/s).
Small: 37 x 20.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 32768
hidden = 5120

KERNELWRIGHT = {"family": "norm", "small": {"tokens": 37, "hidden": 20}}


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.bias = nn.Parameter(torch.randn(hidden) * 0.1)

    def forward(self, x, residual):
        return F.layer_norm(x + residual, (x.shape[-1],), self.weight, self.bias, eps=1e-6)


def get_inputs():
    return [torch.randn(tokens, hidden), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden]
