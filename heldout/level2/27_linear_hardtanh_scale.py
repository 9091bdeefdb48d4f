"""Linear layer, hardtanh, then a constant scale: y = 0.5 * clamp(x W^T + b, -1, 1).

Epilogue (3 ops): bias, a clamp to [-1, 1], a scale. Eager runs addmm (cuBLAS) and two more
passes over the 84 MB product.

Sizes: 4096 tokens, 3072 -> 5120 features: 129 GFLOP, 50 MB in, 63 MB of weights, 84 MB out.
Compute-bound at fp32 (~2.6 ms at ~50 TFLOP/s); eager estimated ~2.7 ms.
Small: 37 tokens, 21 -> 45 features.
"""

import torch
import torch.nn as nn

tokens = 4096
in_features = 3072
out_features = 5120

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 21, "out_features": 45},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return 0.5 * torch.nn.functional.hardtanh(self.linear(x), -1.0, 1.0)


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
