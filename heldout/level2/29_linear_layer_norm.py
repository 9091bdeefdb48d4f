"""Linear layer then LayerNorm over its 1024 output features (a projection's post-norm).

Epilogue: bias, then a row reduction of the product (mean and variance over each 1024-wide
output row) with a learned affine. A row of 1024 fp32 values fits one output tile's width, so a
fused kernel can normalise without writing the product first.

Sizes: 16384 tokens, 2048 -> 1024 features: 69 GFLOP, 134 MB in, 8 MB of weights, 67 MB out.
Compute-bound at fp32 (~1.4 ms); eager adds a LayerNorm pass, estimated ~1.5 ms.
Small: 37 tokens, 21 -> 45 features.
"""

import torch
import torch.nn as nn

tokens = 16384
in_features = 2048
out_features = 1024

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 21, "out_features": 45},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        with torch.no_grad():  # not PyTorch's 1/0 defaults: a kernel that drops them fails
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(self.linear(x))


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
