"""Linear layer then log-sum-exp over each output row: y_i = log sum_j exp((x W^T + b)_ij).

Epilogue (2 ops): bias, a row-wise logsumexp that reduces the (tokens, out_features) product to
one value per token (tokens, 1). A fused kernel never writes the 134 MB product: it keeps a
running max and sum per row across the N tiles, which a split-N GEMM must combine.

Sizes: 8192 tokens, 2048 -> 4096 features: 137 GFLOP, 67 MB in, 34 MB of weights, 32 KB out.
Compute-bound at fp32 (~2.7 ms); eager (addmm, then a multi-pass logsumexp) estimated ~2.9 ms.
Small: 37 tokens, 20 -> 45 features.
"""

import torch
import torch.nn as nn

tokens = 8192
in_features = 2048
out_features = 4096

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 20, "out_features": 45},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.logsumexp(self.linear(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
