"""Linear layer with odd feature counts, then GELU: y = gelu(x W^T + b).

Neither the input features (2211) nor the output features (4099) are a multiple of 16, so
rows of x and of W start at addresses no vector load can assume aligned, and the last block of
the reduction is partial. Epilogue (2 ops): bias, exact (erf) GELU.

Sizes: 3000 tokens, 2211 -> 4099 features: 54 GFLOP, 27 MB in, 36 MB of weights, 49 MB out.
Compute-bound at fp32 (~1.1 ms at ~50 TFLOP/s); eager estimated ~1.2 ms.
Small: 37 tokens, 45 -> 29 features.
"""

import torch
import torch.nn as nn

tokens = 3000
in_features = 2211
out_features = 4099

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 45, "out_features": 29},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
