"""Residual add then RMSNorm, as between the layers of a LLaMA-style decoder at prefill.

    residual' = x + residual
    out = residual' * rsqrt(mean(residual'^2) + eps) * weight        returns (out, residual')

Both results are outputs: the updated residual stream feeds the next layer. Eager runs add,
power, mean, rsqrt and two products as separate kernels; a fused kernel reads x and residual
once and writes both outputs once (what vLLM's fused_add_rms_norm does).

Sizes: 20480 tokens x hidden 4096 fp32: 2 x 336 MB in, 2 x 336 MB out (1.34 GB); H200 floor
~0.31 ms, eager (about ten passes over a 336 MB tensor) estimated at ~1.05 ms.
Small: 37 tokens x hidden 100. Family detail: norm.
"""

import torch
import torch.nn as nn

tokens = 20480
hidden = 4096
eps = 1e-6

KERNELWRIGHT = {
    "family": "serving",
    "notes": "fused residual add + RMSNorm (norm)",
    "small": {"tokens": 37, "hidden": 100},
}


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)

    def forward(self, x, residual):
        residual = x + residual
        inv_rms = torch.rsqrt(residual.pow(2).mean(dim=-1, keepdim=True) + eps)
        return residual * inv_rms * self.weight, residual


def get_inputs():
    return [torch.randn(tokens, hidden), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden]
