"""RMSNorm as LLaMA-family models write it: x * rsqrt(mean(x^2) + eps) * weight.

Written in plain PyTorch (power, mean, rsqrt, two products), so eager launches one kernel per
operation and reads the activation several times; a fused kernel reads it once.

Sizes: 8 x 4096 x 4096 fp32 (0.54 GB in, 0.54 GB out); H200 floor ~0.25 ms, eager estimated at
~1.2 ms (about seven passes over the tensor). Small: 3 x 37 x 100.
"""

import torch
import torch.nn as nn

batch_size = 8
seq_len = 4096
hidden = 4096
eps = 1e-6

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 3, "seq_len": 37, "hidden": 100},
}


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)

    def forward(self, x):
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
        return x * inv_rms * self.weight


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
