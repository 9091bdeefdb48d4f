"""RMSNorm over the hidden dimension with a learned scale, as in LLaMA-style models."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


tokens = 16384
hidden = 4096

KERNELWRIGHT = {"family": "norm", "small": {"tokens": 9, "hidden": 200}}


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden]
