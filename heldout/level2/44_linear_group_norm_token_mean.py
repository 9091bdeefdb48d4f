"""Linear layer, GroupNorm over its 2048 output features in 32 groups, then the mean of each
token's normalised features (a pooled score per token).

Epilogue: bias, group normalisation (64 features a group), then a reduction over the features.
The norm's (token, group, feature) layout is reshaped back to (token, feature) before the mean:
a fused design reduces it in the norm's own layout and never writes the normalised tensor.

Sizes: 8192 tokens, 1024 -> 2048 features: 34 GFLOP, 34 MB in, 8 MB of weights, 67 MB of
product, 8192 values out. Small: 37 tokens, 21 -> 24 features, 4 groups.
"""

import torch
import torch.nn as nn

tokens = 8192
in_features = 1024
out_features = 2048
groups = 32

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 21, "out_features": 24, "groups": 4},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)
        with torch.no_grad():  # not PyTorch's 1/0 defaults: a kernel that drops them fails
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(self.linear(x)).mean(dim=1)


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]
