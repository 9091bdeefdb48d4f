"""Linear layer, GroupNorm over the output features, swish, and a learned per-feature scale.

    h = x @ W^T + b;  g = GroupNorm(32 groups)(h);  y = g * sigmoid(g) * gamma

Epilogue (4 ops): bias, group normalisation (statistics over 128 features of one row), swish,
scaling. With one N tile per group, a fused kernel computes each group's mean and variance from
the accumulator; with smaller tiles it must combine partial statistics.

Sizes: 8192 rows, 2048 -> 4096 features: 137 GFLOP, 67 MB in, 34 MB of weights, 134 MB out.
Compute-bound at fp32 (~2.7 ms); eager adds group norm and three element-wise passes,
estimated ~3 ms. Small: 37 rows, 20 -> 48 features, 4 groups (12 features per group).
"""

import torch
import torch.nn as nn

rows = 8192
in_features = 2048
out_features = 4096
groups = 32

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"rows": 37, "in_features": 20, "out_features": 48, "groups": 4},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)
        self.gamma = nn.Parameter(torch.rand(out_features) + 0.5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        g = self.norm(self.linear(x))
        return g * torch.sigmoid(g) * self.gamma


def get_inputs():
    return [torch.randn(rows, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]
